"""A disputed step-review sample goes to an adjudicator, whose ruling settles it; QC never counts it as a label."""

from __future__ import annotations

import json
import uuid

import pytest

from importers.records import ItemRecord
from services import adjudicate, annotate
from services.errors import Conflict, NotAllowed
from services.exports import export
from services.leasing import leases_of
from store import Store, datasets, users
from store.annotations import annotations_frame
from store.bulk import write_records

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

KEEP = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
DROP = {"original": "correct", "modification": "unreasonable", "difficulty": "hard"}


@pytest.fixture
def disputed(store: Store) -> int:
    """One sample, two annotators: one keeps it, one does not (a tie: disputed)."""
    with store.writing() as tx:
        write_records(
            tx,
            "pair",
            "step_review",
            [
                ItemRecord(
                    external_id="s-1",
                    question="q",
                    steps={"original": ["a"], "modified": ["b"]},
                    error_steps=[0],
                )
            ],
            "test",
        )
    datasets.update_settings(store, "pair", {"annotators_per_item": 2})
    dataset = annotate.dataset_for(store, "pair")
    for name, payload in (("ann", KEEP), ("bob", DROP)):
        who = users.add_user(store, name)
        found = annotate.next_item(store, who, dataset)
        assert found is not None
        annotate.submit(
            store,
            annotator=who,
            item_id=found.item.item_id,
            version_id=found.item.version_id,
            payload=payload,
            request_id=uuid.uuid4().hex,
        )
    users.add_user(store, "judge", "adjudicator")
    return int(store.scalar("SELECT item_id FROM item_state WHERE status = 'disputed'"))


def test_an_adjudicator_sees_both_judgements_and_a_ruling_settles_the_sample(
    store: Store, disputed: int
) -> None:
    judge = users.get_user(store, "judge")
    found = adjudicate.disputes(store, judge, "pair")
    assert [d.item.item_id for d in found] == [disputed]
    assert [(who, label["modification"]) for who, label in found[0].judgements] == [
        ("ann", "reasonable"),
        ("bob", "unreasonable"),
    ]
    assert (
        adjudicate.rule(store, judge, disputed, "keep", "the modification matches the rationale")
        == "complete"
    )
    decision = json.loads(store.scalar("SELECT decision FROM item_state WHERE item_id = ?", [disputed]))
    assert decision["keep"] is True and decision["adjudicated"] is True and decision["labels"] == 2
    assert adjudicate.disputes(store, judge, "pair") == []
    with pytest.raises(Conflict, match="not disputed"):
        adjudicate.rule(store, judge, disputed, "reject")


def test_annotators_cannot_rule_and_qc_never_counts_a_ruling_as_a_label(
    store: Store, disputed: int, tmp_path
) -> None:
    ann = users.get_user(store, "ann")
    with pytest.raises(NotAllowed):
        adjudicate.rule(store, ann, disputed, "keep")
    with pytest.raises(NotAllowed):
        adjudicate.disputes(store, ann, "pair")
    adjudicate.rule(store, users.get_user(store, "judge"), disputed, "reject")
    assert store.scalar("SELECT status FROM item_state WHERE item_id = ?", [disputed]) == "rejected"
    assert annotations_frame(store)["annotator"].tolist() == ["ann", "bob"]  # what agreement is computed on
    written = export(store, "log-jsonl", tmp_path / "log.jsonl")  # the raw log keeps the ruling
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert written.rows == 3 and any(r.get("annotator") == "judge" for r in rows)
    # nor does the judge's own count: the same in memory and recounted from the log
    judge, dataset = users.get_user(store, "judge"), annotate.dataset_for(store, "pair")
    assert annotate.progress(store, judge, dataset)["mine"] == 0
    leases_of(store).invalidate()
    assert annotate.progress(store, judge, dataset)["mine"] == 0
