"""A dataset's life after its import: archive (hidden from annotators, kept whole), restore, remove.

Removing deletes the dataset's items, versions, labels, jobs, gold and study rows for good, so it is
done only after an export of it (`export_to`) or with an explicit confirmation; what it takes is
said first (`removal_summary`). Who may: admins and the operator (services.access, Action.KEEP_DATASETS).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from services.access import Action, Actor, may_see_archived, require
from services.errors import InvalidInput, NotFound
from services.leasing import leases_of
from store import datasets
from store.assignments import progress
from store.datasets import Dataset
from store.db import Store
from store.users import Annotator

__all__ = [
    "EXPORT_FORMAT",
    "QueueRow",
    "Removal",
    "archive",
    "removal_summary",
    "remove",
    "restore",
    "visible_datasets",
    "work_queue",
]

EXPORT_FORMAT = "stepgate-jsonl"  # the export that keeps everything: items, versions, the log, gold, studies


@dataclass(frozen=True)
class Removal:
    dataset: str
    counts: dict[str, int]  # what was deleted, by kind
    exported_to: Path | None


@dataclass(frozen=True)
class QueueRow:
    """One dataset on Home: the user's own counts; for admins, its items per gating state too."""

    dataset: Dataset
    total: int
    mine: int  # items this user labelled
    states: dict[str, int] | None  # admins only: never an annotator's (it moves with others' labels)

    @property
    def left(self) -> int:
        """Items not yet labelled by this user: depends on their own labels only."""
        return max(0, self.total - self.mine)


def work_queue(store: Store, user: Annotator) -> list[QueueRow]:
    """Home's rows: every dataset the user may see, with what is left for them; states for admins."""
    rows = []
    for d in visible_datasets(store, user):
        counts = progress(store, d.id, user.id, leases_of(store))
        states = datasets.state_counts(store, d.id) if user.is_admin else None
        rows.append(QueueRow(d, counts["total"], counts["mine"], states))
    return rows


def visible_datasets(store: Store, user: Annotator, task: str | None = None) -> list[Dataset]:
    """The datasets this user may see: all of them for admins, the ones in use for everyone else."""
    return datasets.list_datasets(store, task, archived=None if may_see_archived(user) else False)


def _found(store: Store, name: str) -> Dataset:
    found = datasets.get_dataset(store, name) if name else None
    if found is None:
        raise NotFound(f"no dataset named {name!r}" if name else "choose a dataset first")
    return found


def archive(store: Store, actor: Actor, name: str) -> Dataset:
    """Hide a dataset from annotators everywhere (Home, the panels, Browse, the API); nothing is deleted."""
    require(actor, Action.KEEP_DATASETS)
    _found(store, name)
    return datasets.set_archived(store, name, True)


def restore(store: Store, actor: Actor, name: str) -> Dataset:
    require(actor, Action.KEEP_DATASETS)
    _found(store, name)
    return datasets.set_archived(store, name, False)


def _said(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "no rows besides its name"


def removal_summary(store: Store, actor: Actor, name: str) -> str:
    """What removing the dataset would delete, in the user's words, before anything is deleted."""
    require(actor, Action.KEEP_DATASETS)
    counts = datasets.removal_counts(store, _found(store, name))
    return f"Removing {name!r} deletes for good: {_said(counts)}."


def remove(
    store: Store,
    actor: Actor,
    name: str,
    *,
    confirmed: bool = False,
    export_to: Path | None = None,
) -> Removal:
    """Delete the dataset and all that belongs to it, after writing it to `export_to` (stepgate-jsonl,
    with the log) or when `confirmed`; refused otherwise, with what it would take."""
    require(actor, Action.KEEP_DATASETS)
    _found(store, name)
    if export_to is None and not confirmed:
        raise InvalidInput(
            f"{removal_summary(store, actor, name)} Export it first, or confirm that it goes without one."
        )
    if export_to is not None:
        from services.exports import export

        export(store, EXPORT_FORMAT, Path(export_to), dataset=name)
    counts = datasets.remove_dataset(store, name)
    return Removal(name, counts, Path(export_to) if export_to is not None else None)
