"""Drafts on the server: a choice of an opening a skip has ended never writes the draft back; a save
deletes the draft it replaces, in the label's own transaction."""

from __future__ import annotations

from typing import Any

import pytest

from importers.records import ItemRecord
from services import annotate, drafts
from services.errors import InvalidInput
from store import Store, users
from store import drafts as store_drafts
from store.bulk import write_records

pytestmark = pytest.mark.engines


def test_a_late_choice_of_a_skipped_opening_does_not_bring_its_draft_back(store: Store) -> None:
    ann = users.add_user(store, "ann")
    drafts.put(store, ann, "step_review", "ds|1|1", {"note": "ice"}, opening="first")
    drafts.end(store, ann, "step_review", "ds|1|1", "first")  # skipped
    assert drafts.get(store, ann, "step_review", "ds|1|1") is None
    # the last keystroke of that opening reaches the server after the skip: not written back
    drafts.put(store, ann, "step_review", "ds|1|1", {"note": "ice cream"}, opening="first")
    assert drafts.get(store, ann, "step_review", "ds|1|1") is None
    # the item opened again later: its choices are kept as before
    drafts.put(store, ann, "step_review", "ds|1|1", {"note": "again"}, opening="second")
    assert drafts.get(store, ann, "step_review", "ds|1|1") == {"note": "again"}
    drafts.put(store, ann, "step_review", "ds|1|1", {"note": "again!"}, opening="second")
    assert drafts.get(store, ann, "step_review", "ds|1|1") == {"note": "again!"}


def test_ending_one_users_opening_leaves_other_drafts_alone(store: Store) -> None:
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    drafts.put(store, bob, "step_review", "ds|1|1", {"note": "bob's"}, opening="first")
    drafts.put(store, ann, "step_review", "ds|2|1", {"note": "other item"}, opening="first")
    drafts.end(store, ann, "step_review", "ds|1|1", "first")
    assert drafts.get(store, bob, "step_review", "ds|1|1") == {"note": "bob's"}
    assert drafts.get(store, ann, "step_review", "ds|2|1") == {"note": "other item"}


def test_a_new_key_past_the_limit_drops_the_oldest_and_a_key_written_again_keeps_its_place(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_drafts, "_KEEP", 3)
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    drafts.put(store, bob, "earliest_error", "ds|0|1", 9)
    for n in range(3):
        drafts.put(store, ann, "earliest_error", f"ds|{n}|1", n)
    drafts.put(store, ann, "earliest_error", "ds|0|1", 5)  # written again: now the newest, nothing dropped
    assert [drafts.get(store, ann, "earliest_error", f"ds|{n}|1") for n in range(3)] == [5, 1, 2]
    drafts.put(store, ann, "earliest_error", "ds|3|1", 3)  # a fourth key: the oldest (ds|1) goes
    assert [drafts.get(store, ann, "earliest_error", f"ds|{n}|1") for n in range(4)] == [5, None, 2, 3]
    assert drafts.get(store, bob, "earliest_error", "ds|0|1") == 9  # another annotator's stay


KEEP = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


def _one_sample(store: Store) -> tuple[users.Annotator, Any]:
    with store.writing() as tx:
        write_records(
            tx,
            "one",
            "step_review",
            [ItemRecord(external_id="s-1", question="q", steps={"original": ["a"], "modified": ["b"]})],
            "test",
        )
    ann = users.add_user(store, "ann")
    found = annotate.next_item(store, ann, annotate.dataset_for(store, "one"))
    assert found is not None
    return ann, found.item


def test_a_save_deletes_the_draft_it_replaces_and_a_refused_one_keeps_it(store: Store) -> None:
    ann, item = _one_sample(store)
    key = f"one|{item.item_id}|{item.version_id}"
    drafts.put(store, ann, "step_review", key, {"original": "correct"}, opening="first")
    save = dict(annotator=ann, item_id=item.item_id, version_id=item.version_id, draft=("step_review", key))
    with pytest.raises(InvalidInput):  # refused (no difficulty): nothing stored, the choices kept
        annotate.submit(store, **save, payload={"original": "correct"}, request_id="r-1")
    assert drafts.get(store, ann, "step_review", key) == {"original": "correct"}
    receipt = annotate.submit(store, **save, payload=KEEP, request_id="r-2")
    assert not receipt.duplicate
    assert drafts.get(store, ann, "step_review", key) is None
    assert store.scalar("SELECT count(*) FROM annotations WHERE request_id = 'r-2'") == 1
    # the retry of a stored save (its reply was lost) clears a draft kept again meanwhile, and stores nothing
    drafts.put(store, ann, "step_review", key, {"original": "incorrect"}, opening="first")
    assert annotate.submit(store, **save, payload=KEEP, request_id="r-2").duplicate
    assert drafts.get(store, ann, "step_review", key) is None
    assert store.scalar("SELECT count(*) FROM annotations") == 1
