"""Issue 32, hole 3: an annotator's own gold feedback (gold_feedback = 1) never singles out an item.

Two worlds differ only in where gold items fall in bob's queue (the hidden gold share: 30% or 60% of
his claims, five gold items either way, all in his first block of labels). bob takes and labels 22 items
over HTTP with the same answer each time; after every label, Home's reply (what the app opens on) and
his submit's receipt must be the same in both worlds. Before the fix the "Checked items" figure moved
a fixed number of labels after each gold item, at different labels in the two worlds.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import requests

from services import gold as gold_service
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store
from store import gold as gold_store
from store.datasets import get_dataset, update_settings
from tests.gold_support import GOOD, label
from tests.security.support import call_event, config, login, make_team, outputs, run_api, team_server

pytestmark = pytest.mark.browser  # starts the real app
DATASET = "prmbench-step-review"
LABELS = 22  # a whole block of 20 and two labels of the next


def _world(db: Path, gold_percent: int) -> None:
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        settled = label(store, "ann", 5, GOOD)  # ann's labels settle five items: they become gold
        gold_service.mark_items(store, OPERATOR, DATASET, settled)
        update_settings(store, DATASET, {"gold_percent": gold_percent, "gold_feedback": 1})


def _home(http: requests.Session, url: str, conf: dict, page: str) -> list:
    hello = {c["id"] for c in conf["components"] if c.get("props", {}).get("elem_id") == "home-hello"}
    fn = next(d["id"] for d in conf["dependencies"] if hello & set(d.get("outputs", [])))
    status, text = call_event(http, url, fn, [], page)
    assert status == 200
    return outputs(text)


def _bobs_replies(db: Path) -> tuple[list, list[int]]:
    """Home after each of bob's labels, with his receipts; and the positions of his gold answers."""
    replies = []
    with team_server(db) as server:
        bob = login(server.url, "bob")
        conf = config(bob, server.url)
        page = uuid.uuid4().hex  # one open page: what its session keeps could differ between the worlds too
        handed = []
        for _ in range(LABELS):
            item = run_api(bob, server.url, "next_item", DATASET, session_hash=page).json()["data"][0]
            saved = run_api(
                bob,
                server.url,
                "submit_label",
                item["item_id"],
                item["version_id"],
                GOOD,
                uuid.uuid4().hex,
                5.0,
                session_hash=page,
            )
            receipt = saved.json()["data"][0]
            handed.append(item["item_id"])
            replies.append(
                ({k: receipt[k] for k in ("saved", "duplicate")}, _home(bob, server.url, conf, page))
            )
    with Store(db) as store:
        gold = gold_store.gold_ids(store, get_dataset(store, DATASET).id)
    return replies, [n for n, item in enumerate(handed) if item in gold]


def test_gold_feedback_never_moves_with_one_item(tmp_path: Path) -> None:
    sparse, dense = tmp_path / "sparse.duckdb", tmp_path / "dense.duckdb"
    _world(sparse, 30)
    _world(dense, 60)
    seen_sparse, gold_sparse = _bobs_replies(sparse)
    seen_dense, gold_dense = _bobs_replies(dense)
    assert gold_sparse != gold_dense  # the worlds differ: gold items came at other labels ...
    assert len(gold_sparse) == len(gold_dense) == 5 and max(gold_sparse + gold_dense) < 20  # ... in one block
    text = str(seen_dense[-1])
    assert "Checked items: 5 of 5 right" in text  # the feedback is on and shown
    for number, (one, other) in enumerate(zip(seen_sparse, seen_dense, strict=True)):
        assert one == other, f"after label {number + 1} bob's replies differ between the worlds"
