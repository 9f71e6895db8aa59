"""Gold items: an item's accepted label, kept apart from the log, that calibrates annotators.

An item marked gold keeps its place and id in its dataset; the scheduler hands it to a share of each
annotator's queue (dataset setting ``gold_percent``) exactly like any other item. A label on a gold
item made after it was marked (annotation id above ``after_annotation``) is an answer to score
against the gold label, not a vote: it never settles the item (services.annotate) and QC leaves it
out of agreement unless an admin includes it (``gold_in_agreement``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from importers.records import GOLD_SOURCES
from store.annotations import RULING
from store.errors import StoreRequestError

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "SOURCES",
    "GoldError",
    "GoldItem",
    "accepted_label",
    "gold_answer_ids",
    "gold_answers",
    "gold_ids",
    "gold_items",
    "is_gold",
    "item_ids_by_ref",
    "latest_labels",
    "majority_label",
    "mark_gold",
    "unmark_gold",
]

SOURCES = GOLD_SOURCES  # importers.records holds them: a bundle's gold lines are checked as they are read


class GoldError(StoreRequestError):
    """A gold request that cannot be done (no such item, no accepted label yet)."""


@dataclass(frozen=True)
class GoldItem:
    item_id: int
    external_id: str
    label: dict[str, Any]
    source: str
    marked_by: str | None
    marked_at: datetime


def mark_gold(
    tx: Tx, item_id: int, label: dict[str, Any], source: str, marked_by: int | None, now: datetime
) -> None:
    """Mark (or re-mark) an item gold with its accepted label; later labels on it are answers."""
    if source not in SOURCES:
        raise GoldError(f"gold source must be one of {', '.join(SOURCES)}, not {source!r}")
    row = tx.fetchone("SELECT dataset_id, current_version_id FROM items WHERE id = ?", [item_id])
    if row is None:
        raise GoldError(f"there is no item {item_id}")
    last = int(tx.scalar("SELECT coalesce(max(id), 0) FROM annotations"))
    tx.execute(
        "INSERT INTO gold (item_id, dataset_id, version_id, label, source, marked_by, marked_at, after_annotation) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id) DO UPDATE SET version_id = excluded.version_id, "
        "label = excluded.label, source = excluded.source, marked_by = excluded.marked_by, "
        "marked_at = excluded.marked_at",
        [item_id, row[0], row[1], json.dumps(label, sort_keys=True), source, marked_by, now, last],
    )
    dataset_id = int(row[0])
    tx.changed(dataset_id)


def unmark_gold(tx: Tx, item_id: int) -> bool:
    dataset_id = tx.scalar("SELECT dataset_id FROM gold WHERE item_id = ?", [item_id])
    if dataset_id is None:
        return False
    tx.execute("DELETE FROM gold WHERE item_id = ?", [item_id])
    tx.changed(int(dataset_id))
    return True


def item_ids_by_ref(db: Store | Tx, dataset_id: int) -> dict[str, int]:
    """A dataset's items by their id in the source file."""
    rows = db.fetchall("SELECT external_id, id FROM items WHERE dataset_id = ?", [dataset_id])
    return {str(r[0]): int(r[1]) for r in rows}


def gold_ids(db: Store | Tx, dataset_id: int) -> set[int]:
    return {int(r[0]) for r in db.fetchall("SELECT item_id FROM gold WHERE dataset_id = ?", [dataset_id])}


def is_gold(db: Store | Tx, item_id: int) -> bool:
    return bool(db.scalar("SELECT count(*) FROM gold WHERE item_id = ?", [item_id]))


def gold_items(db: Store | Tx, dataset_id: int) -> list[GoldItem]:
    rows = db.fetchall(
        "SELECT g.item_id, i.external_id, g.label, g.source, u.name, g.marked_at FROM gold g "
        "JOIN items i ON i.id = g.item_id LEFT JOIN annotators u ON u.id = g.marked_by "
        "WHERE g.dataset_id = ? ORDER BY g.item_id",
        [dataset_id],
    )
    return [GoldItem(int(r[0]), r[1], json.loads(r[2]), r[3], r[4], r[5]) for r in rows]


def gold_answers(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """Every answer on a gold item (a label after its marking), oldest first, with the gold label."""
    return db.df(
        "SELECT a.id AS annotation_id, a.annotator_id, u.name AS annotator, a.item_id, i.external_id, "
        "a.payload, g.label AS gold_label, a.seconds_spent, a.created_at FROM annotations a "
        "JOIN gold g ON g.item_id = a.item_id AND a.id > g.after_annotation "
        "JOIN items i ON i.id = a.item_id JOIN annotators u ON u.id = a.annotator_id "
        f"WHERE a.dataset_id = ? AND a.task <> '{RULING}' ORDER BY a.id",
        [dataset_id],
    )


def gold_answer_ids(db: Store | Tx, dataset_id: int | None = None) -> set[int]:
    """Annotation ids that are answers on gold items (to keep them out of agreement figures)."""
    where = "WHERE g.dataset_id = ?" if dataset_id is not None else ""
    rows = db.fetchall(
        "SELECT a.id FROM annotations a JOIN gold g ON g.item_id = a.item_id AND a.id > g.after_annotation "
        f"{where}",
        [dataset_id] if dataset_id is not None else [],
    )
    return {int(r[0]) for r in rows}


def latest_labels(db: Store | Tx, item_id: int) -> list[dict[str, Any]]:
    """Each annotator's latest label on the item's current version (no rulings, no gold answers)."""
    rows = db.fetchall(
        "SELECT a.annotator_id, a.payload FROM annotations a JOIN items i ON i.id = a.item_id "
        f"AND a.version_id = i.current_version_id WHERE a.item_id = ? AND a.task <> '{RULING}' "
        "AND a.id NOT IN (SELECT a2.id FROM annotations a2 JOIN gold g ON g.item_id = a2.item_id "
        "AND a2.id > g.after_annotation) ORDER BY a.id",
        [item_id],
    )
    return list({who: json.loads(payload) for who, payload in rows}.values())


def majority_label(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """Each field's majority value over the labels; a tied field is left out (no accepted value)."""
    label: dict[str, Any] = {}
    for key in dict.fromkeys(k for payload in labels for k in payload):
        votes = Counter(json.dumps(p[key], sort_keys=True) for p in labels if key in p)
        (top, count), *rest = votes.most_common()
        if rest and rest[0][1] == count:
            continue
        label[key] = json.loads(top)
    return label


def accepted_label(db: Store | Tx, item_id: int) -> tuple[dict[str, Any], str] | None:
    """An item's accepted label and where it comes from: the latest ruling ("adjudicated": its payload,
    which services.gold turns into label fields), else, once the item is settled, each field's
    majority over its annotators' latest labels ("consensus")."""
    ruling = db.fetchone(
        "SELECT a.payload FROM annotations a JOIN items i ON i.id = a.item_id "
        f"AND a.version_id = i.current_version_id WHERE a.item_id = ? AND a.task = '{RULING}' "
        "ORDER BY a.id DESC LIMIT 1",
        [item_id],
    )
    if ruling is not None:
        return dict(json.loads(ruling[0])), "adjudicated"
    status = db.scalar("SELECT status FROM item_state WHERE item_id = ?", [item_id])
    if status is None or status == "open":
        return None
    label = majority_label(latest_labels(db, item_id))
    return (label, "consensus") if label else None
