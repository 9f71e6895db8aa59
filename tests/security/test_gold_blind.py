"""Over HTTP, as a script would: a gold item comes and goes exactly like any other item.

Same reply fields and kinds of values from next_item and submit_label, the same state, totals that
that never move with a gold answer, and timings within noise.
"""

from __future__ import annotations

import statistics
import time
import uuid
from pathlib import Path

import pytest

from services import gold as gold_service
from store import Store
from store import gold as gold_store
from store.datasets import get_dataset, update_settings
from store.demo import populate_demo
from tests.gold_support import GOOD, label
from tests.security.support import login, make_team, run_api, team_server

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
        gold_service.mark_items(store, None, DATASET, settled)
        update_settings(store, DATASET, {"gold_percent": 40})
        dataset = get_dataset(store, DATASET)
        gold_ids = gold_store.gold_ids(store, dataset.id)
    with team_server(db) as server:
        http = login(server.url, "bob")
        seen: dict[bool, list[tuple[object, object, float, float]]] = {True: [], False: []}
        totals = set()
        for _ in range(24):
            started = time.perf_counter()
            reply = run_api(http, server.url, "next_item", DATASET)
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
