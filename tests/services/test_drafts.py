"""Drafts on the server: a choice of an opening a skip has ended never writes the draft back."""

from __future__ import annotations

import pytest

from services import drafts
from store import Store, users

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
