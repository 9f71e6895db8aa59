"""An import's bulk write, and bulk work (an import, an export) without the cyclic garbage collector.

Reading or writing a large file makes millions of small containers (dicts, lists) that live until
the work ends. The cyclic collector would walk them again and again, a fifth to a third of the
work's time, to free nothing: such data holds no reference cycles, and reference counting frees
it as usual. The collector comes back as it was, also when the work fails.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from importers.records import ItemRecord
from store.datasets import Dataset, get_or_create_dataset
from store.inserts import insert_columns, new_ids
from store.items import existing_versions
from store.staging import StagedChunk, stage_records
from store.versions import insert_steps, insert_versions, restart_gating

if TYPE_CHECKING:
    from store.db import Tx

__all__ = ["WriteSummary", "no_cyclic_gc", "write_chunks", "write_records", "write_staged"]


@dataclass
class WriteSummary:
    dataset: str
    added: int = 0
    new_versions: int = 0
    unchanged: int = 0
    item_ids: list[int] = field(default_factory=list)


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector off for the work inside, back as it was after (see the module's docstring)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def write_records(
    tx: Tx,
    dataset_name: str,
    task: str,
    records: Sequence[ItemRecord],
    source_format: str | None = None,
    existing: dict[str, tuple[int, int, int, str]] | None = None,
) -> WriteSummary:
    """Store parsed records: new ids become items, changed content a new version, the rest nothing.

    ``existing``: the dataset's items as existing_versions read them before the first of several
    chunks of one file (ids are unique within a file); read here when not given.
    """
    dataset = get_or_create_dataset(tx, dataset_name, task, source_format)
    if existing is None:
        existing = existing_versions(tx, dataset.id)
    return write_staged(tx, dataset, stage_records(records), existing)


def write_chunks(
    tx: Tx,
    dataset: Dataset,
    chunks: Iterable[StagedChunk],
    existing: dict[str, tuple[int, int, int, str]],
    progress: Callable[[int], None] | None = None,
) -> WriteSummary:
    """write_staged for each chunk of one file, and then the steps of them all in one insert.

    ``chunks``: read twice (a Spill), the second time for their steps only; ``existing``: the
    dataset's items, read once before the first chunk (ids are unique within a file).
    """
    total = WriteSummary(dataset=dataset.name)
    steps: list[np.ndarray] = []  # per chunk, each row's version id
    for chunk in chunks:
        written = write_staged(tx, dataset, chunk, existing, steps_later=steps)
        total.added += written.added
        total.new_versions += written.new_versions
        total.unchanged += written.unchanged
        if progress:
            progress(len(chunk))
    insert_steps(tx, zip(chunks, steps, strict=True))
    return total


def write_staged(
    tx: Tx,
    dataset: Dataset,
    chunk: StagedChunk,
    existing: dict[str, tuple[int, int, int, str]],
    steps_later: list[np.ndarray] | None = None,
) -> WriteSummary:
    """write_records for a staged chunk: new ids become items, changed content a new version.

    The same rows as write_records writes (new items first, then new versions of known ones, ids in
    that order), from columns: no Python object per row but the two columns that find the known items.
    ``steps_later``: as insert_versions takes it.
    """
    summary = WriteSummary(dataset=dataset.name)
    fresh: list[int] = []
    changed: list[int] = []
    known_rows: list[tuple[int, int, int]] = []  # (item id, version id, version) of each changed row
    ids, digests = (chunk.versions.column(c).to_pylist() for c in ("external_id", "content_hash"))
    for row, (external_id, digest) in enumerate(zip(ids, digests, strict=True)):
        known = existing.get(external_id)
        if known is None:
            fresh.append(row)
        elif known[3] == digest:
            summary.unchanged += 1
            summary.item_ids.append(known[0])
        else:
            changed.append(row)
            known_rows.append(known[:3])
    order = fresh + changed
    if not order:
        if steps_later is not None:
            steps_later.append(np.full(len(chunk), -1, dtype=np.int64))  # none of its steps
        return summary
    new_item_ids = new_ids(tx, "item_ids", len(fresh))
    n_fresh = len(fresh)
    vids = insert_versions(
        tx,
        chunk,
        order,
        item_ids=new_item_ids + [k[0] for k in known_rows],
        versions=[1] * n_fresh + [k[2] + 1 for k in known_rows],
        parents=[None] * n_fresh + [k[1] for k in known_rows],
        reasons=["imported"] * n_fresh + ["reimported"] * len(changed),
        steps_later=steps_later,
    )
    taken = chunk.version_rows(fresh)
    insert_columns(
        tx,
        "items",
        {
            "id": pa.array(new_item_ids, type=pa.int64()),
            "dataset_id": pa.array([dataset.id] * n_fresh, type=pa.int32()),
            "external_id": taken.column("external_id"),
            "current_version_id": pa.array(vids[:n_fresh], type=pa.int64()),
        },
        {},
    )
    changed_items = [k[0] for k in known_rows]
    if changed:
        touched = pa.table(
            {
                "item_id": pa.array(changed_items, type=pa.int64()),
                "version_id": pa.array(vids[n_fresh:], type=pa.int64()),
            }
        )
        tx.register("_touched", touched)
        try:
            tx.execute(
                "UPDATE items SET current_version_id = t.version_id FROM _touched t WHERE items.id = t.item_id"
            )
        finally:
            tx.unregister("_touched")
    restart_gating(tx, dataset, changed_items, new_items=new_item_ids)
    summary.added = n_fresh
    summary.new_versions = len(changed)
    summary.item_ids.extend(new_item_ids + changed_items)
    return summary
