"""Drafts: an annotator's unsaved choices, per panel and key, kept until saved, cleared or logged out."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["clear_annotator", "delete_draft", "get_draft", "put_draft"]

_KEEP = 500  # drafts kept per annotator and panel; the oldest go first


def get_draft(db: Store | Tx, annotator_id: int, panel: str, key: str) -> Any:
    raw = db.scalar(
        "SELECT value FROM drafts WHERE annotator_id = ? AND panel = ? AND key = ?",
        [annotator_id, panel, key],
    )
    return None if raw is None else json.loads(raw)


def put_draft(
    db: Store, annotator_id: int, panel: str, key: str, value: Any, now: datetime, unless: Any = None
) -> None:
    """`unless`: a stored value this write must not replace.

    Only a new key can take the annotator past _KEEP drafts, so the count is read, and the oldest
    pruned, only then (on DuckDB an upsert and a prune on every write cost half as much again)."""
    text = json.dumps(value)
    with db.writing() as tx:
        if tx.fetchall(
            "INSERT INTO drafts (annotator_id, panel, key, value, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (annotator_id, panel, key) DO NOTHING RETURNING key",
            [annotator_id, panel, key, text, now],
        ):
            held = tx.scalar(
                "SELECT count(*) FROM drafts WHERE annotator_id = ? AND panel = ?", [annotator_id, panel]
            )
            if held > _KEEP:
                tx.execute(
                    "DELETE FROM drafts WHERE annotator_id = ? AND panel = ? AND key NOT IN (SELECT key "
                    "FROM drafts WHERE annotator_id = ? AND panel = ? ORDER BY updated_at DESC LIMIT ?)",
                    [annotator_id, panel, annotator_id, panel, _KEEP],
                )
            return
        update = (
            "UPDATE drafts SET value = ?, updated_at = ? WHERE annotator_id = ? AND panel = ? AND key = ?"
        )
        params = [text, now, annotator_id, panel, key]
        if unless is not None:  # a stored `unless` stays as it is
            update += " AND value <> ?"
            params.append(json.dumps(unless))
        tx.execute(update, params)


def delete_draft(db: Store | Tx, annotator_id: int, panel: str, key: str) -> None:
    """In a transaction of its own, or in `db`'s when it is one (a label's: services/annotate.submit)."""
    with db.writing() as tx:
        tx.execute(
            "DELETE FROM drafts WHERE annotator_id = ? AND panel = ? AND key = ?", [annotator_id, panel, key]
        )


def clear_annotator(db: Store, annotator_id: int) -> None:
    with db.writing() as tx:
        tx.execute("DELETE FROM drafts WHERE annotator_id = ?", [annotator_id])
