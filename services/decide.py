"""Deciding an item: its state from its labels by its task's rule, and what follows from it.

The rule itself lives in the task spec (tasks/); this module applies it to a dataset's settings and
is the one place that turns labels into an item's next state (escalation to more annotators,
acceptance, rejection, a dispute for an adjudicator). What follows a decision (a new item version,
regeneration, a new perturbation variant) is registered per task at services.hooks and called from
settle; this module imports nothing above it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from services.dataset_settings import settings_of
from services.hooks import HOOKS
from store import state
from store.annotations import RULING, StoredAnnotation, latest_per_annotator
from store.datasets import Dataset
from store.db import Tx
from store.items import ItemView
from tasks import Decision, spec_for
from tasks.base import Item

__all__ = ["current_labels", "decide", "settle"]


def decide(dataset: Dataset, item: Item, labels: list[dict[str, Any]], target: int) -> Decision:
    """The item's state after these labels (latest per annotator, in arrival order)."""
    return spec_for(dataset.task).decide(labels, target, settings_of(dataset), item)


def current_labels(rows: list[StoredAnnotation]) -> list[dict[str, Any]]:
    """What the rule reads: each annotator's latest label, in arrival order, then the latest ruling of
    an adjudicator (a ruling never stands in for the label its author may also have given)."""
    labels = [r for r in rows if r.task != RULING]
    rulings = [r for r in rows if r.task == RULING]
    found = [a.payload for a in latest_per_annotator(labels)]
    return [*found, rulings[-1].payload] if rulings else found


def settle(
    tx: Tx,
    dataset: Dataset,
    item: ItemView,
    item_id: int,
    rows: list[StoredAnnotation],
    target: int,
    now: datetime,
) -> Decision:
    """Decide the item from its log rows and store the decision as its state, in the caller's
    transaction, with what its task registered to follow (services.hooks)."""
    labels = current_labels(rows)
    decided = decide(dataset, item, labels, target)
    if decided.status != "open" and HOOKS.follows(dataset.task):
        # What follows a settled item (a new version, a job, a failed mark) spans more than the item's
        # row: a label's shared transaction stops here and runs again exclusively (store/engines.py).
        tx.require_exclusive()
    result = HOOKS.revised(tx, dataset, item, rows, decided)
    state.set_item_state(
        tx,
        item_id,
        target=result.target,
        status=result.status,
        decision=result.decision,
        settled_at=result.settled_at,
        now=now,
    )
    HOOKS.followed(tx, dataset, item, result, labels, now)
    return result
