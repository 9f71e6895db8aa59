"""Versions made by people: a step list edited in a panel saved as a new version, and who made each.

The new version copies its parent (question, answer, options, images, meta) with one step list
replaced, names its parent, why ("edited") and who (migration 6: item_versions.created_by).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.browse import lineage_rows
from store.images import image_hash
from store.items import ItemView, add_version, get_item
from store.records import ImageData, ItemRecord

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["lineage_with_authors", "save_edited_steps"]


def _record(view: ItemView, role: str, steps: list[str]) -> ItemRecord:
    images = []
    for path in view.image_paths:
        data = Path(path).read_bytes()
        mime = mimetypes.guess_type(path)[0] or "image/png"
        images.append(ImageData(data=data, origin=image_hash(data), mime=mime))
    return ItemRecord(
        external_id=view.external_id,
        question=view.question,
        steps={**view.steps, role: list(steps)},
        reference_answer=view.reference_answer,
        reference_solution=view.reference_solution,
        error_steps=list(view.error_steps),
        modified_steps=list(view.modified_steps),
        earliest_error=view.earliest_error,
        error_type=view.error_type,
        rationale=view.rationale,
        source=view.source,
        final_answer_correct=view.final_answer_correct,
        options=list(view.options),
        images=images,
        meta=dict(view.meta),
    )


def save_edited_steps(
    tx: Tx, item_id: int, role: str, steps: list[str], created_by: int | None, reason: str = "edited"
) -> int:
    """A new current version of the item with ``role``'s steps replaced; returns its version number.

    Its gating starts afresh (store.items.add_version): the caller settles it in the same transaction.
    """
    view = get_item(tx, item_id)
    if view is None:
        raise KeyError(f"no item {item_id}")
    vid = add_version(tx, item_id, _record(view, role, steps), reason)
    tx.execute("UPDATE item_versions SET created_by = ? WHERE id = ?", [created_by, vid])
    return view.version + 1


def lineage_with_authors(db: Store | Tx, item_id: int) -> list[dict[str, Any]]:
    """store.browse.lineage_rows (versions oldest first: number, parent, why, when) with who made each
    (None for imports and generators)."""
    rows = lineage_rows(db, item_id)
    authors = dict(
        db.fetchall(
            "SELECT v.id, u.name FROM item_versions v LEFT JOIN annotators u ON u.id = v.created_by "
            "WHERE v.item_id = ?",
            [item_id],
        )
    )
    for row in rows:
        row["created_by"] = authors.get(row["version_id"])
    return rows
