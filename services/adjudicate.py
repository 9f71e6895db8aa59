"""Adjudication: a reviewer settles a disputed item (its annotators tied) by a ruling of their own.

Any task whose rule can leave an item disputed: step review (Keep / Reject) and the quality gate
(Accept / Reject with the criteria, a reason and the steps that stand, checked by its spec).

The ruling is a row of the append-only log (task "adjudication"), so the item's state can always be
recomputed from the log; the task's rule reads the latest ruling. QC leaves rulings out of agreement
(they are no annotator's label), the raw log export keeps them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from services.access import require_reviewer
from services.annotate import dataset_for
from services.clock import now_utc
from services.decide import settle
from services.errors import Conflict, InvalidInput, NotFound
from store import annotations as annotation_log
from store import items, state, users
from store.datasets import get_dataset
from store.db import Store
from store.items import ItemView
from store.users import Annotator
from tasks import QUALITY_GATE, STEP_REVIEW, PayloadError
from tasks import quality_gate as gate_spec
from tasks.step_review import RULING, RULINGS

__all__ = ["Dispute", "disputes", "rule"]


@dataclass(frozen=True)
class Dispute:
    item: ItemView
    judgements: list[tuple[str, dict[str, Any]]]  # (annotator, their latest label), in arrival order


def disputes(store: Store, reviewer: Annotator, dataset_name: str) -> list[Dispute]:
    """The dataset's disputed items with every annotator's judgement, for an adjudicator only."""
    require_reviewer(reviewer)
    dataset = dataset_for(store, dataset_name)
    if dataset.task not in _RULED:
        raise InvalidInput(
            f"dataset {dataset.name!r} is a {dataset.task} dataset: its items are never disputed"
        )
    found = []
    for item_id in state.items_in_state(store, dataset.id, "disputed"):
        item = items.get_item(store, item_id)
        if item is None:
            continue
        rows = annotation_log.labels_for_item(store, item_id, item.version_id)
        judgements = []
        for row in rows:
            if RULING in row.payload:
                continue
            who = users.get_user_by_id(store, row.annotator_id)
            judgements.append((who.name if who else f"#{row.annotator_id}", row.payload))
        found.append(Dispute(item, judgements))
    return found


_RULED = (STEP_REVIEW, QUALITY_GATE)


def _ruling(task: str, ruling: str, details: dict[str, Any] | None, item: ItemView) -> dict[str, Any]:
    """The ruling's payload as its task accepts it (step review: the word alone)."""
    if task == QUALITY_GATE:
        try:
            return gate_spec.validate_ruling({**(details or {}), gate_spec.RULING: ruling}, item)
        except PayloadError as exc:
            raise InvalidInput(str(exc)) from exc
    if ruling not in RULINGS:
        raise InvalidInput(f"a ruling is one of {', '.join(RULINGS)}, not {ruling!r}")
    return {RULING: ruling}


def rule(
    store: Store,
    reviewer: Annotator,
    item_id: int,
    ruling: str,
    note: str = "",
    details: dict[str, Any] | None = None,
) -> str:
    """Store the ruling and settle the item; returns the item's new state ("complete", "accepted" or
    "rejected"). ``details``: what else the task's ruling carries (the gate: criteria, reason, steps)."""
    require_reviewer(reviewer)
    if len(note) > 4000:
        raise InvalidInput("the note of a ruling holds at most 4,000 characters")
    now = now_utc()
    with store.writing() as tx:
        item = items.get_item(tx, int(item_id))
        if item is None:
            raise NotFound(f"there is no item {item_id}")
        current = state.get_item_state(tx, item.item_id)
        if current is None or current.status != "disputed":
            raise Conflict(
                f"item {item.external_id} is not disputed (it is {current.status if current else 'unknown'})"
            )
        dataset = get_dataset(tx, item.dataset_id)
        if dataset is None:
            raise NotFound(f"item {item.external_id} belongs to no dataset")
        payload = {**_ruling(dataset.task, ruling, details, item), **({"note": note} if note else {})}
        stored = annotation_log.insert_annotation(
            tx,
            request_id=f"ruling-{uuid.uuid4().hex}",
            annotator_id=reviewer.id,
            item_id=item.item_id,
            version_id=item.version_id,
            dataset_id=dataset.id,
            task=annotation_log.RULING,
            payload=payload,
            seconds_spent=None,
            now=now,
        )
        rows = annotation_log.item_annotations(tx, item.item_id, item.version_id)
        if all(r.id != stored.id for r in rows):
            rows.append(stored)
        result = settle(tx, dataset, item, item.item_id, rows, current.target, now)
    return result.status
