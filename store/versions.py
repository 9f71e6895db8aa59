"""Item versions: the one module that writes them (an import's, a bundle's, an edit's, a generator's).

Every change makes a new row in item_versions that names its parent, why (imported, reimported,
edited, regenerated, ...) and, for a person's edit, who (migration 6: item_versions.created_by);
items.current_version_id points at the newest one, and the item's gating starts afresh. Reads are
store.items'; the lineage with its authors is store.browse's.
"""

from __future__ import annotations

import functools
import mimetypes
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from importers.records import ImageData, ItemRecord
from store.datasets import Dataset, get_dataset, initial_target
from store.errors import written
from store.images import image_hash, save_image
from store.inserts import insert_columns, insert_rows, new_ids
from store.items import VERSION_COLUMNS, ItemView, get_item
from store.staging import StagedChunk, content_hash, stage_records

if TYPE_CHECKING:
    from store.db import Tx

__all__ = [
    "add_version",
    "insert_steps",
    "insert_versions",
    "restart_gating",
    "save_edited_steps",
    "write_versions",
]


def insert_versions(
    tx: Tx,
    chunk: StagedChunk,
    order: list[int],
    *,
    item_ids: list[int],
    versions: list[int],
    parents: list[int | None],
    reasons: list[str],
    steps_later: list[np.ndarray] | None = None,
) -> list[int]:
    """The rows ``order`` of a staged chunk as versions (with their steps and images); their new ids.

    ``steps_later``: where to leave the version id of each of the chunk's rows instead of inserting its
    steps, for insert_steps to insert the steps of many chunks at once.
    """
    vids = new_ids(tx, "version_ids", len(order))
    taken = chunk.version_rows(order)
    columns: dict[str, Any] = {
        "id": pa.array(vids, type=pa.int64()),
        "item_id": pa.array(item_ids, type=pa.int64()),
        "version": pa.array(versions, type=pa.int32()),
        "parent_id": pa.array(parents, type=pa.int64()),
        "reason": pa.array(reasons, type=pa.string()),
    }
    insert_columns(tx, "item_versions", columns | {c: taken.column(c) for c in VERSION_COLUMNS[5:]}, {})
    vid_of_row = np.full(len(chunk), -1, dtype=np.int64)  # -1: a row left out (an unchanged item)
    vid_of_row[np.asarray(order, dtype=np.int64)] = np.asarray(vids, dtype=np.int64)
    if steps_later is None:
        _insert_step_table(tx, _step_rows(chunk, vid_of_row))
    else:
        steps_later.append(vid_of_row)
    if chunk.images:
        image_rows = [
            [int(vid_of_row[row]), pos, save_image(tx, image)]
            for row in order
            for pos, image in enumerate(chunk.images.get(row, ()))
        ]
        insert_rows(tx, "version_images", ["version_id", "position", "image_hash"], image_rows)
    return vids


@functools.cache
def _steps_schema() -> pa.Schema:
    """Made on first use: pyarrow loads when an import writes, not when a server or a command starts."""
    return pa.schema(
        [("version_id", pa.int64()), ("role", pa.string()), ("position", pa.int32()), ("text", pa.string())]
    )


def _step_rows(chunk: StagedChunk, vid_of_row: np.ndarray) -> pa.Table:
    """A staged chunk's steps as rows of the steps table, those of rows left out (-1) dropped."""
    steps = chunk.steps
    step_vids = vid_of_row[steps.column("row").to_numpy()]
    if (step_vids < 0).any():  # rows left out (unchanged items) keep their steps
        keep = step_vids >= 0
        steps, step_vids = steps.filter(pa.array(keep)), step_vids[keep]
    return pa.table(
        {
            "version_id": pa.array(step_vids, type=pa.int64()),
            "role": steps.column("role").cast(pa.string()),
            "position": steps.column("position"),
            "text": steps.column("text"),
        },
        schema=_steps_schema(),
    )


def insert_steps(tx: Tx, chunks: Iterable[tuple[StagedChunk, np.ndarray]]) -> None:
    """The steps of staged chunks, each with its rows' version ids (-1: left out).

    In DuckDB all of them go in as one INSERT that reads the chunks one after the other (an Arrow
    stream; a chunk kept on disk is mapped only while it is read): an INSERT per chunk of 20,000
    items made the commit cost three fifths more CPU (writing 100k items took 3.2-3.4 s of CPU
    instead of 2.9-3.0 s).
    """
    if not tx.engine.embedded:  # a server's register copies a whole table: one chunk at a time
        for chunk, vid_of_row in chunks:
            _insert_step_table(tx, _step_rows(chunk, vid_of_row))
        return
    batches = (b for chunk, vids in chunks for b in _step_rows(chunk, vids).to_batches() if b.num_rows)
    _insert_step_table(tx, pa.RecordBatchReader.from_batches(_steps_schema(), batches))


def _insert_step_table(tx: Tx, rows: pa.Table | pa.RecordBatchReader) -> None:
    if isinstance(rows, pa.Table) and rows.num_rows == 0:
        return
    tx.register("_incoming_steps", rows)
    try:
        tx.execute(
            "INSERT INTO steps (version_id, role, position, text) "
            "SELECT version_id, role, position, text FROM _incoming_steps"
        )
    finally:
        tx.unregister("_incoming_steps")


def write_versions(tx: Tx, pending: list[tuple[ItemRecord, int, int, int | None, str, str]]) -> list[int]:
    """pending: (record, item_id, version, parent_id, reason, hash) -> the new version ids."""
    chunk = stage_records([p[0] for p in pending], hashes=[p[5] for p in pending])
    return insert_versions(
        tx,
        chunk,
        list(range(len(pending))),
        item_ids=[p[1] for p in pending],
        versions=[p[2] for p in pending],
        parents=[p[3] for p in pending],
        reasons=[p[4] for p in pending],
    )


def restart_gating(tx: Tx, dataset: Dataset, item_ids: list[int], new_items: Sequence[int] = ()) -> None:
    """A new version starts its gating afresh; the old version's labels stay in the log.

    ``new_items``: items made in this transaction, which have no state or leases to remove yet.
    """
    if not item_ids and not new_items:
        return
    tx.changed(dataset.id)
    tx.forget_after_commit()
    frame = pd.DataFrame(
        {"item_id": [*new_items, *item_ids], "known": [False] * len(new_items) + [True] * len(item_ids)}
    )
    tx.register("_reset", frame)
    try:
        if item_ids:
            tx.execute("DELETE FROM item_state WHERE item_id IN (SELECT item_id FROM _reset WHERE known)")
            tx.execute("DELETE FROM assignments WHERE item_id IN (SELECT item_id FROM _reset WHERE known)")
        tx.execute(
            "INSERT INTO item_state (item_id, dataset_id, target, status) "
            "SELECT item_id, ?, ?, 'open' FROM _reset",
            [dataset.id, initial_target(dataset)],
        )
    finally:
        tx.unregister("_reset")


def add_version(tx: Tx, item_id: int, record: ItemRecord, reason: str) -> int:
    """A new version of one item (edited in a panel, or regenerated); returns its version id."""
    row = tx.fetchone(
        "SELECT v.id, v.version, i.dataset_id FROM items i JOIN item_versions v ON v.id = i.current_version_id "
        "WHERE i.id = ?",
        [item_id],
    )
    if row is None:
        raise KeyError(f"no item {item_id}")
    (vid,) = write_versions(tx, [(record, item_id, row[1] + 1, row[0], reason, content_hash(record))])
    tx.execute("UPDATE items SET current_version_id = ? WHERE id = ?", [vid, item_id])
    dataset = written(get_dataset(tx, int(row[2])), f"the dataset of item {item_id}")
    restart_gating(tx, dataset, [item_id])
    return vid


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

    Its gating starts afresh (add_version): the caller settles it in the same transaction.
    """
    view = get_item(tx, item_id)
    if view is None:
        raise KeyError(f"no item {item_id}")
    vid = add_version(tx, item_id, _record(view, role, steps), reason)
    tx.execute("UPDATE item_versions SET created_by = ? WHERE id = ?", [created_by, vid])
    return view.version + 1
