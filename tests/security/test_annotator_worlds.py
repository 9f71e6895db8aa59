"""Issue 32, by construction: every event an annotator can fire answers the same in two worlds that differ
only in what the annotator must not know.

The events come from the app's own listing (`/config`'s dependencies, the list Gradio's queue serves),
so a new panel's events are fired here without anyone adding them. bob, an annotator, runs every one of
them over HTTP in team mode, as the page would: the load events, then tab by tab its select event and
every other event of the tab in the order the app lists them, chained events after their parent, each
with the values the page holds at that moment (what earlier replies set) and the few values an
annotator types (tests.security.worlds.TYPED). Then the public API (next_item, submit_label,
skip_item) on every dataset, then every file the replies offered for download. Events of panels an
annotator may not open are fired too: their refusals must read the same as well.

The worlds (tests.security.worlds.build) differ in four things at once:
- the others agreed with bob or not (earliest error: ann and cat on his two labelled items);
- the first quality-gate verdict on the dual item bob accepts during the run: accept with his edit, or
  reject (hole 1: his accept then settles the item and makes version 2, or leaves it disputed);
- the items bob labelled are gold or not, with gold feedback on (hole 3);
- the study's other rater (cat) agreed with bob's study labels or not.
Browse of his own work then covers hole 2. Every reply must be identical, ids and times normalised.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.security.support import team_server
from tests.security.worlds import DIFFERENCES, Page, build, world_facts

pytestmark = pytest.mark.browser  # starts the real app


def _run(db: Path, typed: dict, seen: dict, key: str) -> None:
    with team_server(db, "--no-demo") as server:
        page = Page(server.url, "bob", typed)
        page.run_everything()
        seen[key] = page
    seen[key + "-facts"] = world_facts(db)


def test_every_annotator_reply_is_the_same_whatever_the_hidden_world(tmp_path: Path) -> None:
    started = time.perf_counter()
    one, other = tmp_path / "agreed.duckdb", tmp_path / "disagreed.duckdb"
    typed = build(one, agreed=True)
    assert build(other, agreed=False) == typed  # the same typed input: the item and its edit
    seen: dict = {}
    runs = [threading.Thread(target=_run, args=(db, typed, seen, db.stem)) for db in (one, other)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    agreed, disagreed = seen["agreed"], seen["disagreed"]
    # The worlds do differ in every hidden thing, after bob's own run ...
    facts_a, facts_b = seen["agreed-facts"], seen["disagreed-facts"]
    for name in DIFFERENCES:
        assert facts_a[name] != facts_b[name], f"the worlds do not differ in {name}: {facts_a[name]}"
    # ... and the run did reach bob's work: every event fired, his gate accept saved, files fetched.
    events = [d["id"] for d in agreed.conf["dependencies"] if d["targets"] and d.get("backend_fn", True)]
    assert sorted(agreed.covered) == sorted(events) and len(events) >= 130  # each event once
    assert agreed.fired == disagreed.fired
    assert any("Saved" in str(reply) for name, reply in agreed.replies if name.startswith("qg-accept"))
    assert agreed.files, "no file was offered to the annotator: the download check checked nothing"
    succeeded = sum(1 for _, reply in agreed.replies if reply and reply[0] is True)
    assert succeeded >= 60, f"only {succeeded} events answered at all"
    differ = [name for (name, a), (_, b) in zip(agreed.replies, disagreed.replies, strict=True) if a != b]
    assert differ == [], f"these events answer differently in the two worlds: {differ}"
    assert agreed.files == disagreed.files  # every downloaded file, byte for byte (times normalised)
    assert time.perf_counter() - started < 600
