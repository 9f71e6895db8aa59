"""Bulk work (an import, an export) without the cyclic garbage collector.

Reading or writing a large file makes millions of small containers (dicts, lists) that live until
the work ends. The cyclic collector would walk them again and again, a fifth to a third of the
work's time, to free nothing: such data holds no reference cycles, and reference counting frees
it as usual. The collector comes back as it was, also when the work fails.
"""

from __future__ import annotations

import gc
import itertools
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from store.records import ImageData, ItemRecord

if TYPE_CHECKING:
    from store.datasets import Dataset
    from store.db import Tx
    from store.items import WriteSummary

__all__ = ["Spill", "StagedChunk", "insert_versions", "no_cyclic_gc", "stage_records", "write_staged"]


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# --- an import in two phases: records staged as Arrow outside the write lock, written under it ----


_STAGED_TYPES = {"final_answer_correct": "bool_", "earliest_error": "int32", "line": "int64"}  # else string


@dataclass
class StagedChunk:
    """Records made ready for the database without it: one row per record, one per step, the images."""

    versions: pa.Table  # external_id, content_hash, the version's own columns, line
    steps: pa.Table  # row (the record's index in the chunk), role, position, text
    images: dict[int, list[ImageData]]  # row -> its images (few formats carry any)

    def __len__(self) -> int:
        return self.versions.num_rows


def _repeated_texts(values: list[str], counts: np.ndarray) -> pa.DictionaryArray:
    """values[i] repeated counts[i] times, as Arrow keeps a column of few distinct texts (role names)."""
    distinct = list(dict.fromkeys(values))
    code = {v: i for i, v in enumerate(distinct)}
    indices = np.repeat(np.fromiter((code[v] for v in values), np.int32, len(values)), counts)
    return pa.DictionaryArray.from_arrays(pa.array(indices), pa.array(distinct, type=pa.string()))


def _flat_texts(lists: list[list[str]]) -> tuple[np.ndarray, pa.Array | pa.ChunkedArray]:
    """How many texts each list holds, and all of them in order as one column: Arrow reads the lists
    in C (a Python loop over every step text cost more than the rest of staging)."""
    nested = pa.array(lists, type=pa.list_(pa.string()))
    if isinstance(nested, pa.ChunkedArray):  # past 2 GB of text in one chunk: Arrow splits it
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        return counts, pa.array(list(itertools.chain.from_iterable(lists)), type=pa.string())
    offsets = nested.offsets.to_numpy().astype(np.int64)
    return np.diff(offsets), nested.flatten()


def _meta_texts(records: Sequence[ItemRecord]) -> list[str]:
    """text(r.meta) for each record; a meta of plain texts many records share (a ProcessBench
    generator) is written once. The key holds exact str keys and values only: json writes 1 and
    True, or 1 and 1.0, differently, though a tuple of them compares and hashes the same."""
    from store.items import _meta_text as text

    known: dict[tuple[tuple[str, str], ...], str] = {}
    out = []
    for r in records:
        meta = r.meta
        if not meta:
            out.append("{}")
            continue
        if all(type(k) is str and type(v) is str for k, v in meta.items()):
            key = tuple(meta.items())
            written = known.get(key)
            if written is None:
                written = known[key] = text(meta)
            out.append(written)
        else:
            out.append(text(meta))
    return out


def stage_records(records: Sequence[ItemRecord], hashes: Sequence[str] | None = None) -> StagedChunk:
    """Hash and lay out records column by column: the work of an import that needs no lock.

    ``hashes``: the records' content hashes when the caller has them (a bundle carries its own).
    """
    from store.items import _json_list, content_hash

    columns: dict[str, list[Any]] = {
        "external_id": [r.external_id for r in records],
        "content_hash": list(hashes) if hashes is not None else [content_hash(r) for r in records],
        "question": [r.question for r in records],
        "reference_answer": [r.reference_answer for r in records],
        "reference_solution": [r.reference_solution for r in records],
        "error_type": [r.error_type for r in records],
        "rationale": [r.rationale for r in records],
        "source": [r.source for r in records],
        "final_answer_correct": [r.final_answer_correct for r in records],
        "earliest_error": [r.earliest_error for r in records],
        "error_steps": [_json_list(r.error_steps) for r in records],
        "modified_steps": [_json_list(r.modified_steps) for r in records],
        "options": [_json_list(r.options) for r in records],
        "meta": _meta_texts(records),
        "line": [r.line for r in records],
    }
    versions = pa.table(
        {
            name: pa.array(values, type=getattr(pa, _STAGED_TYPES.get(name, "string"))())
            for name, values in columns.items()
        }
    )
    rows: list[int] = []
    roles: list[str] = []
    lists: list[list[str]] = []
    for row, r in enumerate(records):
        for role, texts in r.steps.items():
            rows.append(row)
            roles.append(role)
            lists.append(texts)
    counts, text = _flat_texts(lists)
    starts = np.cumsum(counts) - counts
    steps = pa.table(
        {
            "row": pa.array(np.repeat(np.asarray(rows, dtype=np.int64), counts)),
            "role": _repeated_texts(roles, counts),
            "position": pa.array(
                (np.arange(len(text), dtype=np.int64) - np.repeat(starts, counts)).astype(np.int32)
            ),
            "text": text,
        }
    )
    images = {row: list(r.images) for row, r in enumerate(records) if r.images}
    return StagedChunk(versions, steps, images)


_PARTS = ("versions", "steps")


_HELD_BYTES = 16 << 20  # staged chunks a spill of its own keeps in memory (a small file's), not on disk


class Spill:
    """Staged chunks kept on disk until they are written, so a million records never sit in memory.

    ``folder``: another spill's folder, to stage a part of a file in another process (its chunks
    are then adopted by that spill, which removes them); by default a temporary folder of its own,
    and then the first chunks, up to _HELD_BYTES, stay in memory (a 10k-item file is written
    without a round trip through the disk).
    """

    def __init__(self, folder: str | Path | None = None, prefix: str = "a") -> None:
        self._own = tempfile.TemporaryDirectory(prefix="stepgate-import-") if folder is None else None
        self.folder = Path(self._own.name if self._own else folder)  # type: ignore[arg-type]
        self._prefix = prefix
        self.bases: list[str] = []  # one per chunk, in the file's order
        self.records = 0
        self._held: dict[str, StagedChunk] = {}
        self._room = _HELD_BYTES if self._own else 0

    def add(self, chunk: StagedChunk) -> None:
        base = str(self.folder / f"{self._prefix}{len(self.bases):06d}")
        self.bases.append(base)
        self.records += len(chunk)
        size = chunk.versions.nbytes + chunk.steps.nbytes
        if size <= self._room:
            self._room -= size
            self._held[base] = chunk
            return
        for part, table in zip(_PARTS, (chunk.versions, chunk.steps), strict=True):
            with pa.OSFile(f"{base}.{part}.arrow", "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
        if chunk.images:
            Path(f"{base}.images.pickle").write_bytes(pickle.dumps(chunk.images))

    def adopt(self, bases: list[str], records: int) -> None:
        """Chunks another process staged in this spill's folder, after this spill's own."""
        self.bases += bases
        self.records += records

    def __iter__(self) -> Iterator[StagedChunk]:
        for base in self.bases:
            held = self._held.get(base)
            if held is not None:
                yield held
                continue
            tables = [pa.ipc.open_file(pa.memory_map(f"{base}.{part}.arrow")).read_all() for part in _PARTS]
            pickled = Path(f"{base}.images.pickle")
            images = pickle.loads(pickled.read_bytes()) if pickled.exists() else {}  # our own file
            yield StagedChunk(tables[0], tables[1], images)

    def close(self) -> None:
        self._held.clear()
        if self._own is not None:
            self._own.cleanup()

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rows(table: pa.Table, rows: list[int]) -> pa.Table:
    """The rows of a table, in this order; the table itself when that is all of them (a new dataset)."""
    if len(rows) == table.num_rows and rows == list(range(table.num_rows)):
        return table
    return table.take(pa.array(rows, type=pa.int64()))


def insert_versions(
    tx: Tx,
    chunk: StagedChunk,
    order: list[int],
    *,
    item_ids: list[int],
    versions: list[int],
    parents: list[int | None],
    reasons: list[str],
) -> list[int]:
    """The rows ``order`` of a staged chunk as versions (with their steps and images); their new ids."""
    from store.items import _VERSION_COLUMNS, _ids, _insert_columns, _insert_frame

    vids = _ids(tx, "version_ids", len(order))
    taken = _rows(chunk.versions, order)
    columns: dict[str, Any] = {
        "id": pa.array(vids, type=pa.int64()),
        "item_id": pa.array(item_ids, type=pa.int64()),
        "version": pa.array(versions, type=pa.int32()),
        "parent_id": pa.array(parents, type=pa.int64()),
        "reason": pa.array(reasons, type=pa.string()),
    }
    _insert_columns(tx, "item_versions", columns | {c: taken.column(c) for c in _VERSION_COLUMNS[5:]}, {})
    vid_of_row = np.full(len(chunk), -1, dtype=np.int64)
    vid_of_row[np.asarray(order, dtype=np.int64)] = np.asarray(vids, dtype=np.int64)
    step_vids = vid_of_row[chunk.steps.column("row").to_numpy()]
    steps = chunk.steps
    if len(order) < len(chunk):  # rows left out (unchanged items) keep their steps
        keep = step_vids >= 0
        steps, step_vids = steps.filter(pa.array(keep)), step_vids[keep]
    _insert_columns(
        tx,
        "steps",
        {
            "version_id": pa.array(step_vids, type=pa.int64()),
            "role": steps.column("role"),
            "position": steps.column("position"),
            "text": steps.column("text"),
        },
        {},
    )
    if chunk.images:
        from store.images import save_image

        image_rows = [
            [int(vid_of_row[row]), pos, save_image(tx, image)]
            for row in order
            for pos, image in enumerate(chunk.images.get(row, ()))
        ]
        _insert_frame(tx, "version_images", ["version_id", "position", "image_hash"], image_rows)
    return vids


def write_staged(
    tx: Tx, dataset: Dataset, chunk: StagedChunk, existing: dict[str, tuple[int, int, int, str]]
) -> WriteSummary:
    """write_records for a staged chunk: new ids become items, changed content a new version.

    The same rows as write_records writes (new items first, then new versions of known ones, ids in
    that order), from columns: no Python object per row but the two columns that find the known items.
    """
    from store.items import WriteSummary, _ids, _insert_columns, _reset_state

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
        return summary
    new_item_ids = _ids(tx, "item_ids", len(fresh))
    n_fresh = len(fresh)
    vids = insert_versions(
        tx,
        chunk,
        order,
        item_ids=new_item_ids + [k[0] for k in known_rows],
        versions=[1] * n_fresh + [k[2] + 1 for k in known_rows],
        parents=[None] * n_fresh + [k[1] for k in known_rows],
        reasons=["imported"] * n_fresh + ["reimported"] * len(changed),
    )
    taken = _rows(chunk.versions, fresh)
    _insert_columns(
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
    _reset_state(tx, dataset, changed_items, new_items=new_item_ids)
    summary.added = n_fresh
    summary.new_versions = len(changed)
    summary.item_ids.extend(new_item_ids + changed_items)
    return summary
