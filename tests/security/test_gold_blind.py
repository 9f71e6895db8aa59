"""Over HTTP, as a script would: a gold item comes and goes exactly like any other item.

Same reply fields and kinds of values from next_item and submit_label, the same state, totals that
that never move with a gold answer, and timings within noise.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
import uuid
from pathlib import Path

import pytest

from services import gold as gold_service
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store
from store import gold as gold_store
from store.datasets import get_dataset, update_settings
from tests.gold_support import GOOD, label
from tests.security.support import PASSWORD, login, make_team, run_api, team_server

pytestmark = pytest.mark.browser
DATASET = "prmbench-step-review"


def _shape(value: object) -> object:
    """The reply's structure: keys and the kinds of their values, not the values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def test_an_annotator_cannot_tell_gold_items_from_others_over_http(tmp_path: Path) -> None:
    db = tmp_path / "team.duckdb"
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        settled = label(store, "ann", 10, GOOD)
        gold_service.mark_items(store, OPERATOR, DATASET, settled)
        update_settings(store, DATASET, {"gold_percent": 40})
        dataset = get_dataset(store, DATASET)
        gold_ids = gold_store.gold_ids(store, dataset.id)
    with team_server(db) as server:
        http = login(server.url, "bob")
        seen: dict[bool, list[tuple[object, object, float, float]]] = {True: [], False: []}
        totals = set()
        page = uuid.uuid4().hex  # one open page, as a script that keeps its session
        for _ in range(24):
            started = time.perf_counter()
            reply = run_api(http, server.url, "next_item", DATASET, session_hash=page)
            took_next = time.perf_counter() - started
            assert reply.status_code == 200, reply.text[:300]
            item = reply.json()["data"][0]
            # an annotator's progress: the dataset's size and their own count (never what others settled)
            totals.add(tuple(sorted((k, v) for k, v in item["progress"].items() if k != "mine")))
            started = time.perf_counter()
            saved = run_api(
                http,
                server.url,
                "submit_label",
                item["item_id"],
                item["version_id"],
                {"original": "incorrect", "modification": "unreasonable"},
                uuid.uuid4().hex,
                5.0,
                session_hash=page,
            )
            took_submit = time.perf_counter() - started
            assert saved.status_code == 200, saved.text[:300]
            receipt = saved.json()["data"][0]
            assert receipt["saved"] is True and receipt["duplicate"] is False
            seen[item["item_id"] in gold_ids].append((_shape(item), _shape(receipt), took_next, took_submit))
            assert item["state"] == "new" and item["my_label"] is None
        assert len(seen[True]) >= 3 and len(seen[False]) >= 3  # both kinds were handed out
        assert {s[0].__repr__() for s in seen[True]} == {s[0].__repr__() for s in seen[False]}
        assert {s[1].__repr__() for s in seen[True]} == {s[1].__repr__() for s in seen[False]}
        assert len(totals) == 1  # the dataset's totals did not move with any one answer
        for column in (2, 3):  # next_item and submit_label take as long for gold (within noise)
            gold_time = statistics.median(s[column] for s in seen[True])
            other_time = statistics.median(s[column] for s in seen[False])
            print(
                f"median seconds ({'next_item' if column == 2 else 'submit_label'}): gold {gold_time:.4f}, others {other_time:.4f}"
            )
            assert 1 / 3 < gold_time / other_time < 3, (column, gold_time, other_time)


MARKER = "gold_7c1f"  # the dataset file's gold column: its name and content must never reach an annotator


def _file_with_a_gold_column(folder: Path) -> tuple[Path, list[str]]:
    """The demo PRMBench file with a gold column filled on its first six lines (empty on the rest)."""
    from services.demo import DEMO_DIR

    lines = [json.loads(x) for x in (DEMO_DIR / "prmbench_demo.jsonl").read_text().splitlines() if x.strip()]
    for n, line in enumerate(lines):
        line[MARKER] = {"original": "correct", "modification": f"reasonable-{MARKER}"} if n < 6 else None
    path = folder / "with_gold.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path, [x["idx"] for x in lines[:6]]


def test_a_gold_column_of_the_imported_file_never_reaches_an_annotator(tmp_path: Path, page) -> None:
    """Over HTTP and in the page: the annotator labels items, gold among them, in Chromium; no reply of
    the app and no state of the page holds the gold column, its values or a word of it."""
    from playwright.sync_api import expect

    from services.imports import import_file
    from tests.browser.test_browser_step_review import click_choice
    from tests.browser_support import login as browser_login

    db = tmp_path / "team.duckdb"
    make_team(db)
    path, _ = _file_with_a_gold_column(tmp_path)
    with Store(db) as store:
        import_file(store, path, dataset="gcol")
        outcome = gold_service.import_gold(
            store, OPERATOR, "gcol", path, id_column="idx:classification", label_column=MARKER
        )
        assert len(outcome.marked) == 6 and outcome.skipped  # the empty cells were left out, and said so
        update_settings(store, "gcol", {"gold_percent": 50})
        # the column is kept with the items (an export writes it back): what must stay on the server
        assert MARKER in store.scalar("SELECT meta FROM item_versions ORDER BY id LIMIT 1")
        gold_ids = gold_store.gold_ids(store, get_dataset(store, "gcol").id)
    bodies: list[str] = []

    def keep(response) -> None:
        with contextlib.suppress(Exception):  # a stream cut by the next page, an image: nothing to read
            bodies.append(response.text())

    page.on("response", keep)
    with team_server(db) as server:
        browser_login(page, server.url, "bob", f"bob-{PASSWORD}")
        page.get_by_role("tab", name="Step review").click()
        expect(page.locator("#step-review-progress")).to_contain_text("Sample", timeout=30_000)
        pages = []
        info = page.locator("#step-review-info")
        for _ in range(8):
            expect(info).to_contain_text("prm_")
            shown = info.inner_text()
            pages.append(page.content())
            for field, value in (
                ("original", "correct"),
                ("modification", "reasonable"),
                ("difficulty", "easy"),
            ):
                click_choice(page, field, value)
            page.locator("#step-review-save").click()
            expect(page.locator("#step-review-status")).to_contain_text("Saved sample")
            expect(info).not_to_have_text(shown)
        pages.append(page.content())
    with Store(db) as store:
        answers = gold_store.gold_answers(store, get_dataset(store, "gcol").id)
        handed = {int(i) for i in store.df("SELECT item_id FROM annotations")["item_id"]}
    assert set(answers["annotator"]) == {"bob"} and len(handed & gold_ids) >= 2  # gold was handed out
    seen = "\n".join(bodies + pages)
    assert "prm_" in seen and len(bodies) > 20  # the replies were read: the items' ids are in them
    assert "7c1f" not in seen and "reasonable-" not in seen
