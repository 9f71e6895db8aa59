"""What follows a quality-gate decision: an item accepted with edited steps becomes a new version.

Registered for the quality gate as a revise_decision hook (services/hooks.py, services/defaults.py)
and so called by services.decide.settle in the submit's (or the ruling's) transaction: the label, the
new version and the item's state are committed together or not at all. The new version names who
made it: the adjudicator whose ruling set the steps, else the first annotator who wrote them.
"""

from __future__ import annotations

import dataclasses

from store.annotations import RULING, StoredAnnotation, latest_per_annotator
from store.datasets import Dataset
from store.db import Tx
from store.items import ItemView
from store.versions import save_edited_steps
from tasks import Decision
from tasks.quality_gate import STEP_ROLE

__all__ = ["follow_up"]


def _author(rows: list[StoredAnnotation], steps: list[str], adjudicated: bool) -> int | None:
    if adjudicated:
        rulings = [r for r in rows if r.task == RULING]
        return rulings[-1].annotator_id if rulings else None
    labels = latest_per_annotator([r for r in rows if r.task != RULING])
    return next((r.annotator_id for r in labels if r.payload.get("edited_steps") == steps), None)


def follow_up(
    tx: Tx, dataset: Dataset, item: ItemView, rows: list[StoredAnnotation], result: Decision
) -> Decision:
    """The decision as stored: an accepted edit is saved as the item's new version, named in it."""
    decision = result.decision or {}
    steps = decision.get("edited_steps")
    if result.status != "accepted" or not steps:
        return result
    author = _author(rows, steps, bool(decision.get("adjudicated")))
    version = save_edited_steps(tx, item.item_id, STEP_ROLE, list(steps), author)
    return dataclasses.replace(
        result, decision={**decision, "edited_version": version, "from_version": item.version}
    )
