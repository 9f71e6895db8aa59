"""An annotator's way through a dataset: next item, jump, previous, skip. One call per panel action.

Every function takes the leases the app was composed with (store/assignments.py's Leases) and the
annotator (from the session), and returns only what that annotator may see: the item, their own
label if they already gave one, and progress counts. Never another annotator's label: the panels
of blind tasks are built on these functions alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from store import annotations as annotation_log
from store import assignments, studies
from store.assignments import Leases
from store.datasets import Dataset, get_dataset
from store.errors import StoreRequestError
from store.items import ItemView, current_version_id, get_item, position, prefetch

if TYPE_CHECKING:
    from store.db import Store
    from store.users import Annotator

__all__ = [
    "WorkError",
    "WorkItem",
    "dataset_for",
    "jump_to",
    "next_in_history",
    "next_item",
    "previous_item",
    "skip_item",
]


_PREFETCH = 100  # items loaded ahead of an annotator


class WorkError(StoreRequestError):
    """A navigation request that cannot be served, said so the annotator knows what to do."""


@dataclass(frozen=True)
class WorkItem:
    item: ItemView
    dataset: Dataset
    state: str  # "new" | "resumed" | "done" (theirs already: shown to review or correct)
    my_label: dict[str, Any] | None
    position: int  # 1-based place of the item in its dataset
    progress: dict[str, int]


def dataset_for(store: Store, name: str, task: str) -> Dataset:
    dataset = get_dataset(store, name)
    if dataset is None:
        raise WorkError(f"there is no dataset named {name!r}")
    if dataset.task != task:
        raise WorkError(f"dataset {name!r} is a {dataset.task} dataset, not {task}")
    return dataset


def _work(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, item_id: int, state: str
) -> WorkItem:
    if store.versions.get(current_version_id(store, item_id) or -1) is None:
        # A miss is usually the first of many new items in a row: load the next ones at once.
        prefetch(store, [item_id, *leases.upcoming(store, dataset.id, item_id, _PREFETCH)])
    # Their own work is shown at the version they labelled: a version someone else's label made since
    # would tell them how the item was decided (issue 32).
    mine = annotation_log.my_last_version(store, annotator.id, item_id) if state == "done" else None
    item = get_item(store, item_id, mine)
    if item is None:
        raise WorkError(f"item {item_id} no longer exists")
    label = None
    if state == "done":  # theirs: from the gate's log, else from the study they rate the item in
        label = annotation_log.my_label(store, annotator.id, item_id, item.version_id) or studies.my_label_on(
            store, annotator.id, item_id, item.version_id
        )
    return WorkItem(
        item,
        dataset,
        state,
        label,
        position(store, dataset.id, item_id),
        # an annotator is shown their own count and the dataset's size; reviewers every state
        assignments.progress(store, dataset.id, annotator.id, leases, settled=annotator.can_see_labels),
    )


def next_item(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, now: datetime
) -> WorkItem | None:
    """The item this annotator holds, else the next one the rules give them; None when all is done."""
    claim = leases.claim_next(
        store, annotator.id, dataset.id, lease_seconds=int(dataset.setting("lease_seconds")), now=now
    )
    if claim is None:
        return None
    return _work(store, leases, annotator, dataset, claim.item_id, "resumed" if claim.resumed else "new")


def jump_to(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, ref: str, now: datetime
) -> WorkItem:
    """Open an item by its id in the source file or its 1-based number in the dataset."""
    ref = (ref or "").strip()
    item_id = store.scalar("SELECT id FROM items WHERE dataset_id = ? AND external_id = ?", [dataset.id, ref])
    if item_id is None and ref.isdigit():
        item_id = (
            store.scalar(
                "SELECT id FROM items WHERE dataset_id = ? ORDER BY id LIMIT 1 OFFSET ?",
                [dataset.id, int(ref) - 1],
            )
            if int(ref) >= 1
            else None
        )
    if item_id is None:
        raise WorkError(
            f"no item {ref!r} in {dataset.name}: give its id or a number from 1 to the dataset size"
        )
    outcome = leases.claim_item(
        store, annotator.id, item_id, dataset.id, lease_seconds=int(dataset.setting("lease_seconds")), now=now
    )
    if outcome in ("full", "closed"):
        # One answer for both: "settled" against "has its annotators" told the state of an item
        # others labelled (issue 32).
        raise WorkError(f"item {ref} is not open for you: it has all the annotators it needs; pick another")
    return _work(store, leases, annotator, dataset, item_id, "done" if outcome == "done" else "new")


def _my_way(store: Store, annotator: Annotator, dataset: Dataset) -> list[int]:
    """The items this annotator labelled, for the gate or for a study, in the order first labelled:
    Previous and Next walk both (a study rater corrects a study label as any other)."""
    gate = annotation_log.my_history_times(store, annotator.id, dataset.id)
    rated = studies.my_study_history(store, annotator.id, dataset.id)
    if not rated:
        return [item_id for item_id, _ in gate]
    first: dict[int, datetime] = {}
    for item_id, at in [*gate, *rated]:
        first[item_id] = min(at, first.get(item_id, at))
    return sorted(first, key=lambda item_id: (first[item_id], item_id))


def previous_item(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, current_item_id: int | None
) -> WorkItem | None:
    """The item this annotator labelled before the current one (their own history only)."""
    history = _my_way(store, annotator, dataset)
    if not history:
        return None
    if current_item_id in history:
        index = history.index(current_item_id)
        if index == 0:
            return None
        return _work(store, leases, annotator, dataset, history[index - 1], "done")
    return _work(store, leases, annotator, dataset, history[-1], "done")


def next_in_history(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, current_item_id: int, now: datetime
) -> WorkItem | None:
    """Forward through the annotator's own history, then on to new work."""
    history = _my_way(store, annotator, dataset)
    if current_item_id in history and history.index(current_item_id) < len(history) - 1:
        return _work(store, leases, annotator, dataset, history[history.index(current_item_id) + 1], "done")
    return next_item(store, leases, annotator, dataset, now)


def skip_item(
    store: Store, leases: Leases, annotator: Annotator, dataset: Dataset, item_id: int, now: datetime
) -> WorkItem | None:
    """Give the item back to the pool for others and move on; it returns to this annotator last."""
    leases.release(store, annotator.id, item_id, dataset.id, now)
    return next_item(store, leases, annotator, dataset, now)
