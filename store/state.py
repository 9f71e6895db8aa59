"""Per-item gating state: how many annotators the item needs now and whether it is settled.

The state is derived from the log by qc's gate after every submit, inside the same transaction,
and can always be recomputed from the log; it is a cache of a decision, never a source of labels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "ItemState",
    "LockedItem",
    "get_item_state",
    "items_in_state",
    "locked_state",
    "set_item_state",
    "states_frame",
]


@dataclass(frozen=True)
class ItemState:
    item_id: int
    dataset_id: int
    target: int
    status: str  # open | consensus | complete | discarded | rejected | disputed
    decision: dict[str, Any] | None
    settled_at: int | None


def get_item_state(db: Store | Tx, item_id: int) -> ItemState | None:
    row = db.fetchone(
        "SELECT item_id, dataset_id, target, status, decision, settled_at FROM item_state WHERE item_id = ?",
        [item_id],
    )
    if row is None:
        return None
    return ItemState(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else None, row[5])


@dataclass(frozen=True)
class LockedItem:
    """An item's state row as a shared write read it under the item's lock, and its current version."""

    status: str
    target: int
    version_id: int


def locked_state(tx: Tx, item_id: int) -> LockedItem | None:
    """In a label's shared transaction over PostgreSQL, which holds the item's lock from BEGIN
    (Store.writing(shared=True, item=...); store/engines.py `_WRITE_LOCK` lists the rules it holds):
    the item's state and current version, read after the lock was granted, so with everything the
    labels before it committed (READ COMMITTED). None in an exclusive transaction (DuckDB's process, or
    an exclusive writer over PostgreSQL): no label is written beside it. A shared transaction that does
    not hold this item's lock, or an item without a state row, goes exclusive (Tx.require_exclusive)."""
    if not tx.shared:
        return None
    if tx.item != item_id:
        tx.require_exclusive()
    row = tx.fetchone(
        "SELECT s.status, s.target, i.current_version_id FROM item_state s JOIN items i ON i.id = s.item_id "
        "WHERE s.item_id = ?",
        [item_id],
    )
    if row is None:
        tx.require_exclusive()
        return None
    return LockedItem(str(row[0]), int(row[1]), int(row[2]))


def set_item_state(
    tx: Tx,
    item_id: int,
    *,
    target: int,
    status: str,
    decision: dict[str, Any] | None,
    settled_at: int | None,
    now: datetime,
) -> None:
    tx.execute(
        "UPDATE item_state SET target = ?, status = ?, decision = ?, settled_at = ?, updated_at = ? "
        "WHERE item_id = ?",
        [target, status, json.dumps(decision) if decision is not None else None, settled_at, now, item_id],
    )


def states_frame(db: Store | Tx, dataset_id: int | None = None) -> pd.DataFrame:
    """Every item's state with the fields QC groups by (error type, final-answer correctness)."""
    where = "WHERE s.dataset_id = ?" if dataset_id is not None else ""
    return db.df(
        "SELECT s.item_id, i.external_id, s.dataset_id, d.name AS dataset, d.task, s.target, s.status, "
        "s.decision, s.settled_at, v.version, v.error_type, v.source, v.final_answer_correct, v.earliest_error "
        "FROM item_state s JOIN items i ON i.id = s.item_id JOIN item_versions v ON v.id = i.current_version_id "
        f"JOIN datasets d ON d.id = s.dataset_id {where} ORDER BY s.item_id",
        [dataset_id] if dataset_id is not None else [],
    )


def items_in_state(db: Store | Tx, dataset_id: int, status: str, limit: int = 200) -> list[int]:
    """Item ids of a dataset in one gating state (e.g. disputed, for adjudication), oldest first."""
    rows = db.fetchall(
        "SELECT item_id FROM item_state WHERE dataset_id = ? AND status = ? ORDER BY item_id LIMIT ?",
        [dataset_id, status, limit],
    )
    return [int(r[0]) for r in rows]
