"""Issue 32, hole 2: an annotator's Browse of their own finished work tells nothing that depends on others.

Two worlds differ only in the other annotator's hidden verdict on a dual quality-gate item: ann accepted
it with the same edit as bob (the item is accepted and its edit became version 2), or ann rejected it (the
item is disputed, still version 1). bob's Browse events over HTTP (the tab opened on a link, a search, a
text search for his own edit, a page turn, the item opened) must answer byte for byte the same in both
worlds (times normalised): the version he labelled and his own labels, no current version, no lineage,
no state.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from importers.records import ItemRecord
from services import annotate
from store import Store, users
from store.bulk import write_records
from store.datasets import update_settings
from tests.security.support import call_event, config, event_of, login, make_team, outputs, team_server

pytestmark = pytest.mark.browser  # starts the real app

DATASET = "gate-worlds"
ALL = {"c1": True, "c2": True, "c3": True, "c4": True}
EDIT = ["There are 7 bars, counted twice-EDITED.", "So the answer is 7."]
ACCEPT = {"verdict": "accept", "criteria": ALL, "edited_steps": EDIT}
REJECT = {"verdict": "reject", "criteria": {**ALL, "c3": False}, "reason": "the bars are not counted"}
NO_FILTER = ["", "", "", "", "", None, "", "", "id", ""]
EDIT_TEXT = ["", "", "", "", "", None, "", "twice-EDITED", "id", ""]


def _world(db: Path, ann_label: dict) -> tuple[int, str, int]:
    make_team(db)
    with Store(db) as store:
        with store.writing() as tx:
            records = [
                ItemRecord(
                    external_id=f"g-{k}",
                    question=f"Question {k}: how many bars are there?",
                    steps={"candidate": [f"There are {k} bars.", f"So the answer is {k}."]},
                    reference_answer=str(k),
                )
                for k in range(2)
            ]
            write_records(tx, DATASET, "quality_gate", records, "crystal")
        update_settings(store, DATASET, {"dual_percent": 100})
        dataset = annotate.dataset_for(store, DATASET)
        item_id = 0
        for who, payload in (("ann", ann_label), ("bob", ACCEPT)):
            user = users.get_user(store, who)
            found = annotate.jump_to(store, user, dataset, "g-0")
            item_id = found.item.item_id
            annotate.submit(
                store,
                annotator=user,
                item_id=item_id,
                version_id=found.item.version_id,
                payload=payload,
                request_id=uuid.uuid4().hex,
            )
        state = store.scalar("SELECT status FROM item_state WHERE item_id = ?", [item_id])
        versions = store.scalar("SELECT count(*) FROM item_versions WHERE item_id = ?", [item_id])
    return item_id, state, versions


def _bobs_replies(db: Path, item_id: int) -> list:
    with team_server(db) as server:
        bob = login(server.url, "bob")
        conf = config(bob, server.url)
        calls = [
            (event_of(conf, "tab-browse", "select")[0], [f"?tab=browse&item={item_id}"]),
            (event_of(conf, "br-search")[0], NO_FILTER),
            (event_of(conf, "br-search")[0], EDIT_TEXT),
            (event_of(conf, "br-next")[0], [None, 0, *NO_FILTER]),
            (event_of(conf, "br-open")[0], [str(item_id), *NO_FILTER]),
        ]
        replies = []
        for fn_index, data in calls:
            status, text = call_event(bob, server.url, fn_index, data)
            assert status == 200
            replies.append(outputs(text))
        return replies


def test_browsing_ones_own_work_answers_the_same_whether_the_other_annotator_agreed(tmp_path: Path) -> None:
    agreed, disagreed = tmp_path / "agreed.duckdb", tmp_path / "disagreed.duckdb"
    item, state_a, versions_a = _world(agreed, ACCEPT)
    same_item, state_b, versions_b = _world(disagreed, REJECT)
    assert item == same_item
    assert (state_a, versions_a, state_b, versions_b) == ("accepted", 2, "disputed", 1)  # the worlds differ
    seen_agreed, seen_disagreed = _bobs_replies(agreed, item), _bobs_replies(disagreed, item)
    text = str(seen_agreed)
    assert "g-0" in text and "Your own labels only" in text and "twice-EDITED" in text  # his work is shown
    for number, (one, other) in enumerate(zip(seen_agreed, seen_disagreed, strict=True)):
        assert one == other, f"reply {number} differs between the worlds"
    assert "version 2" not in text and "lineage" not in text.lower()
