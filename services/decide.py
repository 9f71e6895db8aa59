"""Deciding an item: its state from its labels by its task's rule, and what follows from it.

The rule itself lives in the task spec (tasks/); this module applies it to a dataset's settings and
is the one place that turns labels into an item's next state (escalation to more annotators,
acceptance, rejection, a dispute for an adjudicator).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from services.gate_versions import follow_up
from store import state
from store.annotations import RULING, StoredAnnotation, latest_per_annotator
from store.datasets import DEFAULT_SETTINGS, Dataset
from store.db import Tx
from store.items import ItemView
from tasks import Decision, LabelLimits, spec_for
from tasks.base import Item

__all__ = ["current_labels", "decide", "label_limits", "settings_of", "settle"]


def settings_of(dataset: Dataset) -> dict[str, Any]:
    """The dataset's settings with the defaults filled in: whole numbers, then its task's own."""
    return {
        key: int(value) if key in DEFAULT_SETTINGS else value for key, value in dataset.all_settings().items()
    }


def label_limits(dataset: Dataset) -> LabelLimits:
    settings = settings_of(dataset)
    return LabelLimits(
        max_payload_bytes=settings["max_payload_bytes"],
        max_note_chars=settings["max_note_chars"],
        max_seconds_spent=float(settings["max_seconds_spent"]),
    )


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
    item: Item,
    item_id: int,
    rows: list[StoredAnnotation],
    target: int,
    now: datetime,
) -> Decision:
    """Decide the item from its log rows and store the decision as its state, in the caller's transaction."""
    labels = current_labels(rows)
    result = decide(dataset, item, labels, target)
    if spec_for(dataset.task).versions_from_edits and isinstance(item, ItemView):
        result = follow_up(tx, item, rows, result)  # an accepted edit becomes the item's new version
    state.set_item_state(
        tx,
        item_id,
        target=result.target,
        status=result.status,
        decision=result.decision,
        settled_at=result.settled_at,
        now=now,
    )
    # A rejected item of a task that regenerates goes back to generation in this same transaction.
    from services.regeneration import on_decision

    on_decision(tx, dataset, item, result, labels, now)  # type: ignore[arg-type]
    return result
