"""Records made ready for the database without it: hashed and laid out as Arrow columns, kept on disk.

The work of an import that needs no lock (services.imports runs it before the write transaction,
in two processes for a large file): each record's content hash, its version's columns, its steps
as one Arrow column of texts; store.bulk.write_staged and store.versions.insert_versions write them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from importers.images import image_hash
from importers.records import ImageData, ItemRecord
from store.fastjson import canonical_bytes

__all__ = [
    "Spill",
    "StagedChunk",
    "content_body",
    "content_hash",
    "stage_records",
]


def content_hash(record: ItemRecord) -> str:
    """What makes two imports of an item the same: its content, not where it was read from.

    sha256 of json.dumps(content_body(record), sort_keys=True, default=str, separators=(",", ":")),
    byte for byte (every stored hash was made so), computed faster by store.fastjson.
    """
    return hashlib.sha256(canonical_bytes(content_body(record))).hexdigest()


def content_body(record: ItemRecord) -> dict[str, Any]:
    """The fields content_hash hashes: changing any of them makes a new version on re-import."""
    return {
        "question": record.question,
        "steps": record.steps,
        "reference_answer": record.reference_answer,
        "reference_solution": record.reference_solution,
        "error_steps": record.error_steps,
        "modified_steps": record.modified_steps,
        "earliest_error": record.earliest_error,
        "error_type": record.error_type,
        "rationale": record.rationale,
        "source": record.source,
        "final_answer_correct": record.final_answer_correct,
        "options": record.options,
        "images": [image_hash(i.data) for i in record.images],
        "meta": record.meta,
    }


def _meta_text(meta: dict[str, Any]) -> str:
    """json.dumps(meta, default=str); the encoder json keeps for plain calls when nothing needs str()."""
    if not meta:
        return "{}"
    try:
        return json.dumps(meta)
    except TypeError:
        return json.dumps(meta, default=str)


def _json_list(values: list[Any]) -> str:
    """A list column's stored text (json.dumps; "[]" for none)."""
    return json.dumps(values) if values else "[]"


_STAGED_TYPES = {"final_answer_correct": "bool_", "earliest_error": "int32", "line": "int64"}  # else string


@dataclass
class StagedChunk:
    """Records made ready for the database without it: one row per record, one per step, the images."""

    versions: pa.Table  # external_id, content_hash, the version's own columns, line
    steps: pa.Table  # row (the record's index in the chunk), role, position, text
    images: dict[int, list[ImageData]]  # row -> its images (few formats carry any)

    def __len__(self) -> int:
        return self.versions.num_rows

    def version_rows(self, rows: list[int]) -> pa.Table:
        """The versions table's rows, in this order; the table itself when that is all of them (a new dataset)."""
        if len(rows) == self.versions.num_rows and rows == list(range(self.versions.num_rows)):
            return self.versions
        return self.versions.take(pa.array(rows, type=pa.int64()))


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
                written = known[key] = _meta_text(meta)
            out.append(written)
        else:
            out.append(_meta_text(meta))
    return out


def stage_records(records: Sequence[ItemRecord], hashes: Sequence[str] | None = None) -> StagedChunk:
    """Hash and lay out records column by column: the work of an import that needs no lock.

    ``hashes``: the records' content hashes when the caller has them (a bundle carries its own).
    """
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
