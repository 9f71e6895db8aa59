"""Datasets: a named set of items gated by one task, with its quorum and assignment settings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.cache import MISS
from store.errors import StoreNotFoundError, StoreRequestError, written
from tasks import EARLIEST_ERROR, TASKS, spec_for
from tasks.base import ANNOTATOR_DEFAULTS

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "DEFAULT_SETTINGS",
    "Dataset",
    "DatasetError",
    "UnknownDatasetError",
    "get_dataset",
    "get_or_create_dataset",
    "initial_target",
    "list_datasets",
    "removal_counts",
    "remove_dataset",
    "set_archived",
    "state_counts",
    "task_settings",
    "update_settings",
]

# Defaults per task. earliest_error follows ProcessBench: 3 annotators, one more at a time up to 5.
DEFAULT_SETTINGS: dict[str, Any] = {
    **ANNOTATOR_DEFAULTS,  # tasks/base.py: 3 agreeing labels within 5 annotators, 1 per item elsewhere
    "lease_seconds": 900,
    "allow_corrections": 1,  # 0: a label, once saved, cannot be corrected by its annotator
    "max_payload_bytes": 64_000,  # a label's size as JSON
    "max_note_chars": 4_000,
    "max_seconds_spent": 86_400,  # time on one item a client may report
    # gold items (store/gold.py): the share of each annotator's queue, feedback, the admins' alert
    "gold_percent": 0,  # 0 = off; else the percent of each annotator's items that are gold
    "gold_feedback": 0,  # 1: annotators see their own gold accuracy
    "gold_in_agreement": 0,  # 1: answers on gold items count in agreement figures too
    "gold_alert_accuracy": 70,  # percent: alert when recent gold accuracy falls below it
    "gold_alert_min_items": 10,  # answers needed before an alert is raised
    "gold_alert_window": 20,  # recent answers the alert looks at
}
_GOLD_RANGES = {
    "gold_percent": (0, 100),
    "gold_feedback": (0, 1),
    "gold_in_agreement": (0, 1),
    "gold_alert_accuracy": (0, 100),
    "gold_alert_min_items": (1, 10_000),
    "gold_alert_window": (1, 10_000),
}
_MAY_BE_ZERO = {"allow_corrections"}


class DatasetError(StoreRequestError):
    """A dataset request that cannot be done (unknown name, wrong task, bad setting)."""


class UnknownDatasetError(DatasetError, StoreNotFoundError):
    """The dataset a request names does not exist."""


@dataclass(frozen=True)
class Dataset:
    id: int
    name: str
    task: str
    source_format: str | None
    settings: dict[str, Any] = field(default_factory=dict)
    archived: bool = False  # hidden from annotators (services.datasets); kept whole

    def setting(self, key: str) -> Any:
        if key in self.settings:
            return self.settings[key]
        return DEFAULT_SETTINGS[key] if key in DEFAULT_SETTINGS else task_settings(self.task)[key]

    def all_settings(self) -> dict[str, Any]:
        """Every setting this dataset has, its own value or the default: the general ones, then its task's."""
        return {key: self.setting(key) for key in (*DEFAULT_SETTINGS, *task_settings(self.task))}


def task_settings(task: str) -> dict[str, Any]:
    """A task's own settings with their defaults: closed choices (first value) and lists (empty)."""
    spec = spec_for(task)
    return {
        **{k: values[0] for k, values in spec.options.items()},
        **{k: [] for k in spec.list_settings},
        **{k: number.check(k, number.default) for k, number in spec.numbers.items()},
    }


def _from_row(row: tuple | None) -> Dataset | None:
    if row is None:
        return None
    return Dataset(
        id=row[0],
        name=row[1],
        task=row[2],
        source_format=row[3],
        settings=json.loads(row[4]),
        archived=bool(row[5]),
    )


_COLUMNS = "id, name, task, source_format, settings, archived_at IS NOT NULL"


def get_dataset(db: Store | Tx, name_or_id: str | int) -> Dataset | None:
    key = ("dataset", name_or_id)
    cached = db.cache.get(key)
    if cached is not MISS:
        return cached  # type: ignore[no-any-return]
    found = _read_dataset(db, name_or_id)
    if found is not None:
        db.cache.put(key, found)
    return found


def _read_dataset(db: Store | Tx, name_or_id: str | int) -> Dataset | None:
    if isinstance(name_or_id, int):
        return _from_row(db.fetchone(f"SELECT {_COLUMNS} FROM datasets WHERE id = ?", [name_or_id]))
    return _from_row(db.fetchone(f"SELECT {_COLUMNS} FROM datasets WHERE name = ?", [name_or_id]))


def list_datasets(db: Store | Tx, task: str | None = None, *, archived: bool | None = None) -> list[Dataset]:
    """Datasets in import order, of one task or all; `archived` False or True keeps only those."""
    if task:
        rows = db.fetchall(f"SELECT {_COLUMNS} FROM datasets WHERE task = ? ORDER BY id", [task])
    else:
        rows = db.fetchall(f"SELECT {_COLUMNS} FROM datasets ORDER BY id")
    found = [d for d in map(_from_row, rows) if d is not None]
    return found if archived is None else [d for d in found if d.archived == archived]


def set_archived(db: Store | Tx, name: str, archived: bool) -> Dataset:
    """Archive a dataset (hidden from annotators, nothing deleted) or restore it."""
    with db.writing() as tx:
        dataset = get_dataset(tx, name)
        if dataset is None:
            raise UnknownDatasetError(f"no dataset named {name!r}")
        when = "current_timestamp" if archived else "NULL"
        tx.execute(f"UPDATE datasets SET archived_at = {when} WHERE id = ?", [dataset.id])
        tx.forget_after_commit()
        tx.changed(dataset.id)
        return written(get_dataset(tx, dataset.id), f"dataset {name!r}")


# What removing a dataset deletes, table by table, in an order that leaves no row naming a deleted
# one. Images are kept: they are shared by hash with other datasets' versions.
_ITEMS = "SELECT id FROM items WHERE dataset_id = ?"
_VERSIONS = f"SELECT id FROM item_versions WHERE item_id IN ({_ITEMS})"
_STUDIES = "SELECT id FROM studies WHERE dataset_id = ?"
_REMOVAL = [
    ("steps", f"version_id IN ({_VERSIONS})"),
    ("version_images", f"version_id IN ({_VERSIONS})"),
    ("predictions", "dataset_id = ?"),
    ("gold", "dataset_id = ?"),
    ("jobs", f"item_id IN ({_ITEMS})"),
    ("annotations", "dataset_id = ?"),
    ("assignments", "dataset_id = ?"),
    ("item_state", "dataset_id = ?"),
    ("study_labels", f"study_id IN ({_STUDIES})"),
    ("study_assignments", f"study_id IN ({_STUDIES})"),
    ("study_items", f"study_id IN ({_STUDIES})"),
    ("study_raters", f"study_id IN ({_STUDIES})"),
    ("study_rules", f"study_id IN ({_STUDIES})"),
    ("studies", "dataset_id = ?"),
    ("item_versions", f"item_id IN ({_ITEMS})"),
    ("items", "dataset_id = ?"),
]
# What the user is told first: the names they know, from the tables above.
_COUNTED = {
    "items": "items",
    "versions": "item_versions",
    "labels": "annotations",
    "jobs": "jobs",
    "gold": "gold",
    "studies": "studies",
    "study labels": "study_labels",
    "predictions": "predictions",
}


def removal_counts(db: Store | Tx, dataset: Dataset) -> dict[str, int]:
    """How many rows of each kind removing this dataset would delete."""
    where = dict(_REMOVAL)
    return {
        shown: int(db.scalar(f"SELECT count(*) FROM {table} WHERE {where[table]}", [dataset.id]) or 0)
        for shown, table in _COUNTED.items()
    }


def remove_dataset(db: Store | Tx, name: str) -> dict[str, int]:
    """Delete a dataset and everything that belongs to it, in one transaction; returns what went."""
    with db.writing() as tx:
        dataset = get_dataset(tx, name)
        if dataset is None:
            raise UnknownDatasetError(f"no dataset named {name!r}")
        counts = removal_counts(tx, dataset)
        for table, where in _REMOVAL:
            tx.execute(f"DELETE FROM {table} WHERE {where}", [dataset.id])
        tx.execute("DELETE FROM datasets WHERE id = ?", [dataset.id])
        tx.forget_after_commit()
        tx.changed(dataset.id)
        return counts


def get_or_create_dataset(tx: Tx, name: str, task: str, source_format: str | None = None) -> Dataset:
    if task not in TASKS:
        raise DatasetError(f"unknown task {task!r}: choose one of {', '.join(TASKS)}")
    existing = get_dataset(tx, name)
    if existing is not None:
        if existing.task != task:
            raise DatasetError(
                f"dataset {name!r} holds {existing.task} items; this file is for {task}: "
                "import it under another --dataset name"
            )
        return existing
    tx.execute(
        "INSERT INTO datasets (name, task, source_format, settings) VALUES (?, ?, ?, ?)",
        [name, task, source_format, json.dumps({})],
    )
    tx.forget_after_commit()
    created = written(get_dataset(tx, name), f"dataset {name!r}")
    return created


def initial_target(dataset: Dataset) -> int:
    """How many annotators a fresh item needs before anything is known about it (the task's rule)."""
    return spec_for(dataset.task).initial_target(dataset.all_settings())


def _clean_list(key: str, value: Any) -> list[str]:
    """A list setting from a list or a comma-separated text: short, distinct names in their order."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise DatasetError(f"setting {key!r} must be a list of names (or one text, comma-separated)")
    names = list(dict.fromkeys(v.strip() for v in items if v.strip()))
    if len(names) > 40 or any(len(v) > 80 for v in names):
        raise DatasetError(f"setting {key!r}: at most 40 names of at most 80 characters each")
    return names


def _validate(settings: dict[str, Any], task: str) -> dict[str, Any]:
    """The settings as they will be stored, or DatasetError naming the first bad one."""
    spec = spec_for(task)
    clean = dict(settings)
    for key, value in settings.items():
        if key in spec.options:
            if value not in spec.options[key]:
                raise DatasetError(
                    f"setting {key!r} must be one of {', '.join(spec.options[key])}, not {value!r}"
                )
            continue
        if key in spec.list_settings:
            clean[key] = _clean_list(key, value)
            continue
        if key in spec.numbers:
            try:
                clean[key] = spec.numbers[key].check(key, value)
            except ValueError as exc:
                raise DatasetError(str(exc)) from None
            continue
        if key in _GOLD_RANGES:
            low, high = _GOLD_RANGES[key]
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise DatasetError(
                    f"setting {key!r} must be a whole number from {low} to {high}, not {value!r}"
                )
            continue
        if key not in DEFAULT_SETTINGS:
            known = ", ".join([*DEFAULT_SETTINGS, *task_settings(task)])
            raise DatasetError(f"unknown setting {key!r} for a {task} dataset: known settings are {known}")
        lowest = 0 if key in _MAY_BE_ZERO else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
            kind = "0 or 1" if key in _MAY_BE_ZERO else "a positive whole number"
            raise DatasetError(f"setting {key!r} must be {kind}, not {value!r}")
    if settings.get("allow_corrections", 0) > 1:
        raise DatasetError("setting 'allow_corrections' must be 0 or 1")
    quorum = settings.get("quorum")
    most = settings.get("max_annotators")
    if quorum is not None and most is not None and most < quorum:
        raise DatasetError(f"max_annotators ({most}) cannot be below quorum ({quorum})")
    return clean


def update_settings(db: Store | Tx, name: str, changes: dict[str, Any]) -> Dataset:
    """Change quorum / escalation / lease settings; open items take the new target at once."""
    with db.writing() as tx:
        dataset = get_dataset(tx, name)
        if dataset is None:
            raise UnknownDatasetError(f"no dataset named {name!r}")
        merged = {**dataset.settings, **changes}
        merged = {
            k: v
            for k, v in _validate({**dataset.all_settings(), **merged}, dataset.task).items()
            if k in merged
        }
        tx.execute("UPDATE datasets SET settings = ? WHERE id = ?", [json.dumps(merged), dataset.id])
        tx.forget_after_commit()
        updated = written(get_dataset(tx, dataset.id), f"dataset {name!r}")
        tx.changed(dataset.id)
        # Open items take the new rule; an item never drops below the labels it already has, and
        # earliest-error items that are escalating keep the target their consensus gave them.
        started_rule = "" if updated.task != EARLIEST_ERROR else " AND done = 0"
        tx.execute(
            "UPDATE item_state SET target = greatest(?, done) FROM ("
            "  SELECT s.item_id AS sid, count(DISTINCT a.annotator_id) AS done FROM item_state s"
            "  JOIN items i ON i.id = s.item_id"
            "  LEFT JOIN annotations a ON a.item_id = s.item_id AND a.version_id = i.current_version_id"
            "  WHERE s.dataset_id = ? AND s.status = 'open' GROUP BY s.item_id"
            f") counts WHERE item_state.item_id = counts.sid{started_rule}",
            [initial_target(updated), dataset.id],
        )
        return updated


def state_counts(db: Store | Tx, dataset_id: int) -> dict[str, int]:
    """Items per gating state (open, consensus, complete, discarded, rejected, disputed, ...)."""
    rows = db.fetchall(
        "SELECT status, count(*) FROM item_state WHERE dataset_id = ? GROUP BY status", [dataset_id]
    )
    return {str(status): int(n) for status, n in rows}
