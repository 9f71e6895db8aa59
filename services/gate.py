"""The quality gate's own use cases beside annotate's: an item's lineage, and its candidate steps
grouped where they say the same thing (CRYSTAL's phase-2 clustering, with the sentence encoder).

Labels, navigation and adjudication go through services.annotate and services.adjudicate like every
task; what follows an accepted edit (a new version) is services.gate_versions, inside the submit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qc.clustering import cluster_steps
from services.clock import now_utc
from services.dataset_settings import settings_of
from services.encoder import Encoder
from services.errors import NotAllowed, NotFound
from services.leasing import leases_of
from services.matching import embed
from store import annotations as annotation_log
from store import state as item_states
from store.browse import lineage_with_authors
from store.datasets import get_dataset
from store.db import Store
from store.items import get_item
from store.users import Annotator
from tasks import QUALITY_GATE
from tasks.quality_gate import NUMBERS, OPTIONS, STEP_ROLE, annotators_needed

__all__ = ["StepGroup", "judge_flag", "lineage", "step_groups"]


@dataclass(frozen=True)
class StepGroup:
    """Candidate steps that say the same thing: their 1-based numbers and the representative (medoid)."""

    steps: tuple[int, ...]
    representative: int


def _may_see(store: Store, user: Annotator, item_id: int, versions: list[dict[str, Any]]) -> bool:
    """Reviewers see any item's history; an annotator only that of an item they hold or labelled."""
    if user.can_see_labels:
        return True
    item = get_item(store, item_id)
    if item is None:
        return False
    if leases_of(store).holds(store, item.dataset_id, item_id, user.id, now_utc()):
        return True
    return any(
        r.annotator_id == user.id
        for v in versions
        for r in annotation_log.item_annotations(store, item_id, int(v["version_id"]))
    )


def _labelled_by_several(store: Store, item_id: int) -> bool:
    item = get_item(store, item_id)
    dataset = get_dataset(store, item.dataset_id) if item is not None else None
    if item is None or dataset is None:
        return True
    return annotators_needed(item.external_id, settings_of(dataset)) > 1


def lineage(
    store: Store,
    user: Annotator,
    item_id: int,
    unless_current: int | None = None,
    shown_version_id: int | None = None,
) -> list[dict[str, Any]]:
    """The item's versions oldest first: number, parent, why, who, when (see store.versions), and each
    version's candidate steps (``steps``) for the diff from its parent.

    ``unless_current``: a version id just saved; the versions since, when the save made a new one
    (an accepted edit), else []. An annotator gets them only on an item their label decides alone: on
    a dual item a version made by their save comes from the other annotator's hidden verdict and edit
    (issue 32, hole 1), so it is [] there whatever happened.
    ``shown_version_id``: an annotator sees the versions up to the one on their screen, never a
    later one (whose existence tells how the item was decided).
    """
    reviewer = user.can_see_labels
    if unless_current is not None:
        if not reviewer and _labelled_by_several(store, int(item_id)):
            return []
        current = get_item(store, int(item_id))
        if current is not None and current.version_id == int(unless_current):
            return []
    rows = lineage_with_authors(store, int(item_id))
    if not rows:
        raise NotFound(f"there is no item {item_id}")
    if not _may_see(store, user, int(item_id), rows):
        raise NotAllowed(f"item {item_id} is not one you hold or labelled")
    if not reviewer and shown_version_id is not None:
        ids = [int(row["version_id"]) for row in rows]
        if int(shown_version_id) in ids:
            rows = rows[: ids.index(int(shown_version_id)) + 1]
    for row in rows:
        version = get_item(store, int(item_id), int(row["version_id"]))
        row["steps"] = list(version.steps.get(STEP_ROLE, [])) if version else []
    return rows


def step_groups(
    store: Store, user: Annotator, item_id: int, version_id: int, encoder: Encoder | None
) -> list[StepGroup] | None:
    """Groups of two or more candidate steps above the dataset's cluster threshold; None when grouping
    is off for the dataset or there is no encoder (the gate works without it)."""
    item = get_item(store, int(item_id), int(version_id))
    if item is None:
        raise NotFound(f"there is no item {item_id}")
    dataset = get_dataset(store, item.dataset_id)
    if dataset is None or dataset.task != QUALITY_GATE:
        raise NotFound(f"item {item_id} is not a quality-gate item")
    settings = settings_of(dataset)
    if encoder is None or settings.get("step_groups", OPTIONS["step_groups"][0]) == "off":
        return None
    if not _may_see(store, user, item.item_id, [{"version_id": item.version_id}]):
        raise NotAllowed(f"item {item.external_id} is not one you hold or labelled")
    steps = item.steps.get(STEP_ROLE, [])
    if len(steps) < 2:
        return []
    vectors = embed(store, encoder, steps)
    threshold = float(settings.get("cluster_threshold", NUMBERS["cluster_threshold"].default))
    clusters = cluster_steps(vectors @ vectors.T, threshold=threshold)
    return [StepGroup(tuple(m + 1 for m in c.members), c.medoid + 1) for c in clusters if len(c.members) > 1]


def judge_flag(store: Store, item_id: int) -> str:
    """What CRYSTAL's loop 1 left on the item for the people at the gate: nothing, or that it reached
    them past the judge's attempts with the criteria the judge still failed (a model's verdict, not a
    person's label: nothing blind)."""
    found = item_states.get_item_state(store, item_id)
    decision = found.decision if found is not None and found.status == "open" else None
    if not isinstance(decision, dict) or decision.get("flag") != "validator_exhausted":
        return ""
    failed = ", ".join(str(c).upper() for c in decision.get("failed") or []) or "a criterion"
    return f"flagged: the judge model still failed {failed} after its regenerations; check those closely"
