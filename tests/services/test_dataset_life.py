"""A dataset's life after import (issue 29): archived (hidden from annotators everywhere, kept whole,
restorable) and removed (said first, only after an export or an explicit confirmation)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from importers.records import ItemRecord
from services import annotate, browse, datasets, statistics
from services.access import OPERATOR
from services.errors import InvalidInput, NotAllowed, NotFound
from services.leasing import leases_of
from store import Store, users
from store import datasets as dataset_store
from store.bulk import write_records
from store.gold import mark_gold
from store.items import get_item
from store.jobs import enqueue

pytestmark = pytest.mark.engines  # the `store` fixture: DuckDB, and PostgreSQL with STEPGATE_TEST_ENGINE

T0 = datetime(2026, 1, 1, 12, 0, 0)
REVIEW = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


def _records(n: int, prefix: str) -> list[ItemRecord]:
    return [
        ItemRecord(
            external_id=f"{prefix}-{i}",
            question=f"question {i}",
            steps={"original": ["o0", "o1"], "modified": ["m0", "m1"]},
        )
        for i in range(n)
    ]


def _two_datasets_with_work(store: Store) -> tuple[users.Annotator, users.Annotator]:
    """'wrong' (3 items, a label, a job, a gold mark) and 'kept' (2 items, a label)."""
    with store.writing() as tx:
        write_records(tx, "wrong", "step_review", _records(3, "w"), "test")
        write_records(tx, "kept", "step_review", _records(2, "k"), "test")
    ann = users.add_user(store, "ann")
    admin = users.add_user(store, "lead", "admin")
    for name, request in (("wrong", "r-wrong"), ("kept", "r-kept")):
        found = dataset_store.get_dataset(store, name)
        assert found is not None
        claim = leases_of(store).claim_next(store, ann.id, found.id, lease_seconds=60, now=T0)
        assert claim is not None
        item = get_item(store, claim.item_id)
        annotate.submit(
            store, annotator=ann, item_id=item.item_id, version_id=item.version_id, payload=REVIEW,
            request_id=request, now=T0,
        )  # fmt: skip
    wrong = dataset_store.get_dataset(store, "wrong")
    assert wrong is not None
    first = store.fetchone(
        "SELECT id, current_version_id FROM items WHERE dataset_id = ? ORDER BY id", [wrong.id]
    )
    assert first is not None
    with store.writing() as tx:
        enqueue(tx, kind="regenerate", item_id=first[0], version_id=first[1], reason="r", payload={}, now=T0)
        mark_gold(tx, first[0], REVIEW, "adjudicated", admin.id, T0)
    return ann, admin


def test_an_archived_dataset_is_gone_for_annotators_and_kept_for_admins(store: Store) -> None:
    ann, admin = _two_datasets_with_work(store)
    archived = datasets.archive(store, admin, "wrong")
    assert archived.archived
    assert statistics.dataset_names(store, "step_review") == ["kept"]  # every panel's picker
    assert [row.dataset.name for row in datasets.work_queue(store, ann)] == ["kept"]  # Home
    assert "wrong" not in browse.choices(store, ann)["dataset"]
    assert "wrong" in browse.choices(store, admin)["dataset"]
    with pytest.raises(NotFound, match="no dataset named 'wrong'"):  # the panels' and the API's next
        annotate.next_item(store, ann, archived)
    assert [d.name for d in datasets.visible_datasets(store, admin)] == ["wrong", "kept"]
    assert [d.name for d in datasets.visible_datasets(store, ann)] == ["kept"]
    # kept whole: nothing deleted, and it comes back as it was
    assert dataset_store.removal_counts(store, archived)["labels"] == 1
    datasets.restore(store, admin, "wrong")
    assert statistics.dataset_names(store, "step_review") == ["wrong", "kept"]
    assert annotate.next_item(store, ann, datasets.visible_datasets(store, ann)[0]) is not None


def test_only_admins_and_the_operator_archive_or_remove(store: Store) -> None:
    ann, _ = _two_datasets_with_work(store)
    with pytest.raises(NotAllowed):
        datasets.archive(store, ann, "wrong")
    with pytest.raises(NotAllowed):
        datasets.remove(store, ann, "wrong", confirmed=True)
    assert datasets.archive(store, OPERATOR, "wrong").archived  # the command line's operator
    with pytest.raises(NotFound):
        datasets.archive(store, OPERATOR, "no-such")


def test_removal_says_what_it_takes_and_needs_an_export_or_a_confirmation(
    store: Store, tmp_path: Path
) -> None:
    _, admin = _two_datasets_with_work(store)
    said = datasets.removal_summary(store, admin, "wrong")
    assert "3 items" in said and "3 versions" in said and "1 labels" in said
    assert "1 jobs" in said and "1 gold" in said
    with pytest.raises(InvalidInput, match="Export it first, or confirm"):
        datasets.remove(store, admin, "wrong")
    assert dataset_store.get_dataset(store, "wrong") is not None  # refused: nothing went
    out = tmp_path / "wrong.jsonl"
    gone = datasets.remove(store, admin, "wrong", export_to=out)
    assert gone.counts["items"] == 3 and gone.exported_to == out
    assert len(out.read_text().splitlines()) >= 3  # the export was written before the removal
    assert dataset_store.get_dataset(store, "wrong") is None
    for table in ("items", "item_versions", "annotations", "jobs", "gold", "item_state", "assignments"):
        assert store.scalar(f"SELECT count(*) FROM {table} WHERE {_OF_WRONG[table]}") == 0, table
    kept = dataset_store.get_dataset(store, "kept")
    assert kept is not None and dataset_store.removal_counts(store, kept)["labels"] == 1  # untouched
    assert dataset_store.removal_counts(store, kept)["items"] == 2


_ORPHAN = "NOT IN (SELECT id FROM items)"
_OF_WRONG = {
    "items": "external_id LIKE 'w-%'",
    "item_versions": f"item_id {_ORPHAN}",
    "annotations": f"item_id {_ORPHAN}",
    "jobs": f"item_id {_ORPHAN}",
    "gold": f"item_id {_ORPHAN}",
    "item_state": f"item_id {_ORPHAN}",
    "assignments": f"item_id {_ORPHAN}",
}


def test_a_confirmed_removal_frees_the_name_for_a_new_import(store: Store) -> None:
    _, admin = _two_datasets_with_work(store)
    datasets.remove(store, admin, "wrong", confirmed=True)
    with store.writing() as tx:
        write_records(tx, "wrong", "step_review", _records(1, "again"), "test")
    again = dataset_store.get_dataset(store, "wrong")
    assert again is not None and dataset_store.removal_counts(store, again)["items"] == 1


def test_home_queue_shows_an_annotator_their_own_work_only_and_admins_the_states(store: Store) -> None:
    ann, admin = _two_datasets_with_work(store)
    mine = {
        row.dataset.name: (row.total, row.mine, row.left, row.states)
        for row in datasets.work_queue(store, ann)
    }
    assert mine == {"wrong": (3, 1, 2, None), "kept": (2, 1, 1, None)}
    # another annotator's label changes nothing an annotator's Home shows (blind), and the admin's states
    other = users.add_user(store, "bob")
    kept = dataset_store.get_dataset(store, "kept")
    assert kept is not None
    claim = leases_of(store).claim_next(store, other.id, kept.id, lease_seconds=60, now=T0)
    assert claim is not None
    item = get_item(store, claim.item_id)
    annotate.submit(
        store, annotator=other, item_id=item.item_id, version_id=item.version_id, payload=REVIEW,
        request_id="r-bob", now=T0,
    )  # fmt: skip
    again = {
        row.dataset.name: (row.total, row.mine, row.left, row.states)
        for row in datasets.work_queue(store, ann)
    }
    assert again == mine
    states = {row.dataset.name: row.states for row in datasets.work_queue(store, admin)}
    assert states["kept"] is not None and sum(states["kept"].values()) == 2
    assert states["kept"].get("open", 0) < 2  # labels settle step-review items (one annotator each)
    datasets.archive(store, admin, "wrong")
    assert [row.dataset.name for row in datasets.work_queue(store, ann)] == ["kept"]
    assert [row.dataset.name for row in datasets.work_queue(store, admin)] == ["wrong", "kept"]
