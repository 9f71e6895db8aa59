"""The append-only annotation log. Current state is read from it, never written over it.

A submit carries a client request id: a retried submit with the same id returns the stored row
instead of adding a second one, so a flaky network never double-counts a label.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from store.errors import StoreConflictError, StoreRequestError

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "RULING",
    "AnnotationConflict",
    "StoredAnnotation",
    "annotation_by_request",
    "annotations_frame",
    "count_annotations",
    "first_labels",
    "insert_annotation",
    "item_annotations",
    "labelled_another_version",
    "labels_for_item",
    "latest_per_annotator",
    "my_history",
    "my_history_times",
    "my_label",
    "my_last_version",
    "request_annotators",
]


class AnnotationConflict(StoreRequestError):
    """A request id already used for a different annotator or item: refused, nothing stored."""


@dataclass(frozen=True)
class StoredAnnotation:
    id: int
    annotator_id: int
    item_id: int
    version_id: int
    payload: dict[str, Any]
    created_at: datetime
    seconds_spent: float | None
    request_id: str = ""
    duplicate: bool = False  # True when this was a retry of an already stored submit
    task: str = ""  # the dataset's task, or RULING for an adjudicator's ruling


_COLUMNS = "id, annotator_id, item_id, version_id, payload, created_at, seconds_spent, request_id, task"


def _row(r: tuple, duplicate: bool = False) -> StoredAnnotation:
    return StoredAnnotation(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], duplicate, r[8])


def annotation_by_request(db: Store | Tx, request_id: str) -> StoredAnnotation | None:
    row = db.fetchone(f"SELECT {_COLUMNS} FROM annotations WHERE request_id = ?", [request_id])
    return None if row is None else _row(row, duplicate=True)


def request_annotators(db: Store | Tx, request_id: str) -> set[int]:
    """Who stored a label by this request id, in the gate's log or a study's (one statement for both)."""
    return {
        annotator_id
        for (annotator_id,) in db.fetchall(
            "SELECT annotator_id FROM annotations WHERE request_id = ? "
            "UNION ALL SELECT annotator_id FROM study_labels WHERE request_id = ?",
            [request_id, request_id],
        )
    }


def insert_annotation(
    tx: Tx,
    *,
    request_id: str,
    annotator_id: int,
    item_id: int,
    version_id: int,
    dataset_id: int,
    task: str,
    payload: dict[str, Any],
    seconds_spent: float | None,
    now: datetime,
) -> StoredAnnotation:
    """Append one annotation. A request id already in the log raises AnnotationConflict: the unique
    constraint is the guard, so the common path costs one statement. The transaction is then
    unusable; the caller rolls back and reads the first submit with annotation_by_request."""
    try:
        new_id = tx.scalar(
            "INSERT INTO annotations (request_id, annotator_id, item_id, version_id, dataset_id, task, "
            "payload, seconds_spent, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                request_id,
                annotator_id,
                item_id,
                version_id,
                dataset_id,
                task,
                json.dumps(payload, sort_keys=True),
                seconds_spent,
                now,
            ],
        )
    except StoreConflictError as exc:
        raise AnnotationConflict(f"request id {request_id!r} is already in the log") from exc
    return StoredAnnotation(
        new_id, annotator_id, item_id, version_id, payload, now, seconds_spent, request_id, task=task
    )


def item_annotations(db: Store | Tx, item_id: int, version_id: int) -> list[StoredAnnotation]:
    """Every stored row of one item version, corrections included, in arrival order (the id's: a
    handful of rows, sorted here: a sort in DuckDB cost the statement a third more, ~0.3 ms a submit)."""
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM annotations WHERE item_id = ? AND version_id = ?", [item_id, version_id]
    )
    return [_row(r) for r in sorted(rows)]


def labelled_another_version(db: Store | Tx, item_id: int, annotator_id: int, version_id: int) -> bool:
    """The annotator has a label (a ruling aside) on another version of the item."""
    found = db.fetchone(
        "SELECT 1 FROM annotations WHERE item_id = ? AND annotator_id = ? AND version_id <> ? AND task <> ? "
        "LIMIT 1",
        [item_id, annotator_id, version_id, RULING],
    )
    return found is not None


def latest_per_annotator(rows: list[StoredAnnotation]) -> list[StoredAnnotation]:
    """One label per annotator: their newest row, at the position of their first (arrival order)."""
    latest: dict[int, StoredAnnotation] = {}
    for row in rows:
        latest[row.annotator_id] = row  # re-assigning a key keeps its first position
    return list(latest.values())


def labels_for_item(db: Store | Tx, item_id: int, version_id: int) -> list[StoredAnnotation]:
    """Every annotator's current label on one item version, in arrival order."""
    return latest_per_annotator(item_annotations(db, item_id, version_id))


def count_annotations(db: Store | Tx, dataset_id: int | None = None) -> int:
    if dataset_id is None:
        return int(db.scalar("SELECT count(*) FROM annotations"))
    return int(db.scalar("SELECT count(*) FROM annotations WHERE dataset_id = ?", [dataset_id]))


RULING = "adjudication"  # the task column of an adjudicator's ruling on a disputed item


def annotations_frame(
    db: Store | Tx, dataset_id: int | None = None, current_versions_only: bool = True, rulings: bool = False
) -> pd.DataFrame:
    """The log as a frame (one row per stored annotation) for QC and exports.

    Adjudicators' rulings are rows of the log too, but no label of an annotator: QC leaves them out
    unless asked (``rulings=True``, for the raw log export).
    """
    where: list[str] = [] if rulings else [f"a.task <> '{RULING}'"]
    params: list[Any] = []
    if dataset_id is not None:
        where.append("a.dataset_id = ?")
        params.append(dataset_id)
    if current_versions_only:
        where.append("a.version_id = i.current_version_id")
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    return db.df(
        "SELECT a.id AS annotation_id, a.request_id, a.dataset_id, d.name AS dataset, a.task, a.item_id, "
        "i.external_id, a.version_id, a.annotator_id, u.name AS annotator, a.payload, a.seconds_spent, "
        "a.created_at FROM annotations a JOIN items i ON i.id = a.item_id "
        "JOIN datasets d ON d.id = a.dataset_id JOIN annotators u ON u.id = a.annotator_id "
        f"{clause} ORDER BY a.id",
        params,
    )


def my_history(db: Store | Tx, annotator_id: int, dataset_id: int) -> list[int]:
    """Items this annotator labelled in a dataset (current versions), in the order first labelled."""
    return [item_id for item_id, _ in my_history_times(db, annotator_id, dataset_id)]


def my_history_times(db: Store | Tx, annotator_id: int, dataset_id: int) -> list[tuple[int, datetime]]:
    """my_history, with when each item was first labelled (to merge with a study's labels). Every
    version counts: another annotator's accept that makes a new version must not take an item out of
    this annotator's history (issue 32: Previous then told the item was accepted)."""
    rows = db.fetchall(
        "SELECT item_id, min(created_at) FROM annotations WHERE annotator_id = ? AND dataset_id = ? "
        f"AND task <> '{RULING}' GROUP BY item_id ORDER BY min(id)",
        [annotator_id, dataset_id],
    )
    return [(int(r[0]), r[1]) for r in rows]


def first_labels(db: Store | Tx, annotator_id: int, dataset_id: int) -> list[tuple[int, int]]:
    """(item id, annotation id) of this annotator's first label on each item of a dataset, every version,
    in the order labelled: their own sequence, which no other annotator's label or new version moves."""
    rows = db.fetchall(
        "SELECT item_id, min(id) FROM annotations WHERE annotator_id = ? AND dataset_id = ? "
        f"AND task <> '{RULING}' GROUP BY item_id ORDER BY min(id)",
        [annotator_id, dataset_id],
    )
    return [(int(r[0]), int(r[1])) for r in rows]


def my_last_version(db: Store | Tx, annotator_id: int, item_id: int) -> int | None:
    """The latest version of an item this annotator labelled (for the gate or a study): the version they
    are shown of their own work, whatever versions others' labels made since."""
    row = db.fetchone(
        "SELECT version_id FROM (SELECT version_id, created_at FROM annotations WHERE annotator_id = ? "
        f"AND item_id = ? AND task <> '{RULING}' UNION ALL SELECT version_id, created_at FROM study_labels "
        "WHERE annotator_id = ? AND item_id = ?) mine ORDER BY created_at DESC, version_id DESC LIMIT 1",
        [annotator_id, item_id, annotator_id, item_id],
    )
    return int(row[0]) if row else None


def my_label(db: Store | Tx, annotator_id: int, item_id: int, version_id: int) -> dict[str, Any] | None:
    """This annotator's latest label on one item version (their own only: annotators work blind)."""
    row = db.fetchone(
        "SELECT payload FROM annotations WHERE annotator_id = ? AND item_id = ? AND version_id = ? "
        f"AND task <> '{RULING}' ORDER BY id DESC LIMIT 1",
        [annotator_id, item_id, version_id],
    )
    return json.loads(row[0]) if row else None
