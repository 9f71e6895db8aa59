"""Issue 32, hole 1: on a dual quality-gate item the second annotator's accept must not tell the first
annotator's hidden verdict. When the first had accepted the same edit, the second submit settles the
item and makes version 2 (the first annotator's edit): the reply then showed it as "just saved", with
the first annotator's name and the diff. Two worlds that differ only in the first verdict, and every
reply of the second annotator's page compared over HTTP in team mode."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from bench.server import start_server
from importers.records import ItemRecord
from services import annotate
from store import Store, users
from store.bulk import write_records
from store.datasets import update_settings
from tests.security.support import call_event, config, event_of, login, outputs

pytestmark = pytest.mark.browser  # starts the real app

DATASET = "dual-oracle"
EDIT = "There are 4 bars, counted left to right."
ALL = {"c1": True, "c2": True, "c3": True, "c4": True}
FIRST = {
    "accept": {"verdict": "accept", "criteria": ALL, "edited_steps": [EDIT, "So the answer is 4."]},
    "reject": {"verdict": "reject", "criteria": {**ALL, "c3": False}, "reason": "the bars are not counted"},
}
_REQUEST = re.compile(r"[0-9a-f]{32}")


def _world(folder: Path, first: str) -> list:
    db = folder / f"{first}.duckdb"
    with Store(db) as store:
        for name in ("ann", "bob"):
            users.add_user(store, name, "annotator", f"{name}-password")
        item = ItemRecord(
            external_id="g-0",
            question="How many bars are there?",
            steps={"candidate": ["There are 3 bars.", "So the answer is 4."]},
            reference_answer="4",
        )
        with store.writing() as tx:
            write_records(tx, DATASET, "quality_gate", [item], "crystal")
        update_settings(store, DATASET, {"dual_percent": 100})
        ann = users.get_user(store, "ann")
        dataset = annotate.dataset_for(store, DATASET)
        held = annotate.next_item(store, ann, dataset)
        assert held is not None
        annotate.submit(
            store,
            annotator=ann,
            item_id=held.item.item_id,
            version_id=held.item.version_id,
            payload=FIRST[first],
            request_id=uuid.uuid4().hex,
        )
    server = start_server(db, "--team", "--no-demo", timeout=600)  # a loaded machine starts it slowly
    try:
        bob = login(server.url, "bob", "bob-password")
        conf = config(bob, server.url)
        session = uuid.uuid4().hex
        tab, inputs = event_of(conf, "tab-quality_gate", "select")
        accept, _ = event_of(conf, "qg-accept")
        following, _ = event_of(conf, "qg-next")
        table = {"headers": ["Step", "Incorrect"], "data": [[EDIT, False], ["So the answer is 4.", False]]}
        replies = [
            call_event(bob, server.url, tab, [None] * len(inputs), session_hash=session),
            call_event(bob, server.url, accept, ["accept", table, list(ALL), "", None], session_hash=session),
            call_event(bob, server.url, following, [None], session_hash=session),
        ]
        assert all(status == 200 for status, _ in replies)
        texts = [text for _, text in replies]
        assert "Saved" in texts[1], texts[1][-800:]
        return [outputs(_REQUEST.sub("<id>", text)) for text in texts]
    finally:
        server.stop()


def test_the_second_annotators_accept_tells_nothing_of_the_first_verdict(tmp_path: Path) -> None:
    accepted, rejected = _world(tmp_path, "accept"), _world(tmp_path, "reject")
    assert "| ann |" not in str(accepted) and "just saved" not in str(accepted)
    assert accepted == rejected
