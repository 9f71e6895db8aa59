"""The load tests' counts of what must never happen (store/integrity.py) do count it, on both engines:
a check that cannot fail would make those tests pass on anything."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from importers.records import ItemRecord
from store import Store, datasets, users
from store.annotations import RULING, insert_annotation
from store.bulk import write_records
from store.integrity import (
    held_past_target,
    labelled_past_target,
    labels_by_request,
    labels_per_item,
    repeated_labels,
)

pytestmark = pytest.mark.engines

T0 = datetime(2026, 1, 1, 12, 0, 0)


def _items(store: Store) -> list[tuple[int, int, int]]:
    """Two step-review items with a target of 2: (item id, version id, dataset id)."""
    records = [
        ItemRecord(external_id=f"i{k}", question=f"q{k}", steps={"original": ["a"], "modified": ["b"]})
        for k in range(2)
    ]
    with store.writing() as tx:
        write_records(tx, "audit", "step_review", records, "test")
    datasets.update_settings(store, "audit", {"annotators_per_item": 2})
    rows = store.fetchall("SELECT i.id, i.current_version_id, i.dataset_id FROM items i ORDER BY i.id")
    return [(int(i), int(v), int(d)) for i, v, d in rows]


def _label(
    store: Store, who: int, item: tuple[int, int, int], request_id: str, task: str = "step_review"
) -> int:
    item_id, version_id, dataset_id = item
    with store.writing() as tx:
        return insert_annotation(
            tx,
            request_id=request_id,
            annotator_id=who,
            item_id=item_id,
            version_id=version_id,
            dataset_id=dataset_id,
            task=task,
            payload={"original": "correct"},
            seconds_spent=1.0,
            now=T0,
        ).id


def _lease(store: Store, who: int, item: tuple[int, int, int], until: datetime) -> None:
    item_id, _, dataset_id = item
    with store.writing() as tx:
        tx.execute(
            "INSERT INTO assignments (item_id, annotator_id, dataset_id, status, leased_at, expires_at, updated_at) "
            "VALUES (?, ?, ?, 'leased', ?, ?, ?)",
            [item_id, who, dataset_id, T0, until, T0],
        )


def test_labels_and_leases_past_an_items_target_are_counted(store: Store) -> None:
    first, second = _items(store)
    people = [users.add_user(store, f"a{k}").id for k in range(4)]
    ids = {f"r{k}": _label(store, people[k], first, f"r{k}") for k in range(2)}
    _lease(store, people[2], second, T0 + timedelta(minutes=10))
    assert (
        labelled_past_target(store) == 0 and held_past_target(store, T0) == 0 and repeated_labels(store) == 0
    )
    assert labels_by_request(store) == ids and labels_per_item(store) == {first[0]: 2}

    _lease(store, people[2], first, T0 + timedelta(minutes=10))  # a third place on an item of 2
    assert held_past_target(store, T0) == 1 and labelled_past_target(store) == 0
    assert held_past_target(store, T0 + timedelta(minutes=11)) == 0  # a lapsed lease holds nothing

    _label(store, people[2], first, "r2")  # a third label
    _label(store, people[3], second, "ruling", task=RULING)  # a ruling is no label
    assert labelled_past_target(store) == 1 and labels_per_item(store) == {first[0]: 3}
    assert "ruling" not in labels_by_request(store)

    _label(store, people[0], first, "again")  # the same annotator twice on one item
    assert repeated_labels(store) == 1
