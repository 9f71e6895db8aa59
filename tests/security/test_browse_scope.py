"""Browse for an annotator offers and shows nothing beyond their own live work (issue 32).

The filter's dropdowns list the sources, error types and datasets of the versions they labelled
only (not of items they have no access to, nor of a version another annotator's accept made), and
an archived dataset's items are left out of their pages whether or not they name it; an admin keeps
both. A reviewer reads an item's decision in words, not as the stored dict.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from services import annotate, browse, datasets
from services.access import OPERATOR
from services.browse import BrowseFilter
from services.demo import populate_demo
from store import Store, users
from tasks.base import decision_words
from tests.security.support import make_team

EARLIEST, GATE, STEP_REVIEW = "qwq-earliest-error", "mathvista-quality-gate", "prmbench-step-review"


def _bob_labels(store: Store, dataset: str, payload: dict, n: int = 2) -> None:
    bob = users.get_user(store, "bob")
    found = annotate.dataset_for(store, dataset)
    for _ in range(n):
        held = annotate.next_item(store, bob, found)
        assert held is not None
        annotate.submit(
            store,
            annotator=bob,
            item_id=held.item.item_id,
            version_id=held.item.version_id,
            payload=payload,
            request_id=uuid.uuid4().hex,
        )


def test_an_annotators_filter_choices_come_from_their_own_live_work(tmp_path: Path) -> None:
    db = tmp_path / "scope.duckdb"
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        _bob_labels(store, EARLIEST, {"earliest_error": -1})
        bob, lead = users.get_user(store, "bob"), users.get_user(store, "lead")
        everything = browse.choices(store, lead)
        mine = browse.choices(store, bob)
        # The admin's lists hold the gate's sources and step review's error types; bob labelled neither.
        assert any("MathVista" in s for s in everything["source"]) and everything["error_type"]
        assert mine["dataset"] == [EARLIEST]
        assert not any("MathVista" in s for s in mine["source"])
        assert "confidence" in everything["error_type"] and "confidence" not in mine["error_type"]
        assert browse.search(store, bob, BrowseFilter()).total == 2

        datasets.archive(store, OPERATOR, EARLIEST)
        assert browse.choices(store, bob)["dataset"] == []
        assert browse.search(store, bob, BrowseFilter()).total == 0
        assert browse.search(store, bob, BrowseFilter(dataset=EARLIEST)).total == 0
        assert browse.search(store, lead, BrowseFilter(dataset=EARLIEST)).total > 0  # admins keep them


def test_a_decision_reads_as_words() -> None:
    gate = {
        "verdict": "accept",
        "failed": [],
        "reasons": [],
        "labels": 2,
        "dual": True,
        "edited_steps": ["a", "b"],
    }
    assert (
        decision_words(gate)
        == "accepted by 2 annotators; dual-annotated; with an edit of the steps (2 steps)"
    )
    assert decision_words('{"label": -1, "labels": 3}') == "all steps correct, from 3 labels"
    assert decision_words({"label": 2, "labels": 5}) == "earliest error at step 3, from 5 labels"
    disputed = {"labels": 2, "differ": ["verdict", "steps"]}
    assert decision_words(disputed) == "2 labels; the annotators differ on verdict and steps"
    rejected = {"verdict": "reject", "failed": ["c3"], "reasons": ["a jump"], "labels": 1, "dual": False}
    assert decision_words(rejected) == "rejected by 1 annotator; failed: c3; reasons: a jump"
    assert "{" not in decision_words({"keep": True, "labels": 3, "difficulty": "hard", "extra": 1})
