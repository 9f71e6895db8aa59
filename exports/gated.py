"""The gated benchmark back in its source formats (PRMBench 1-based steps, ProcessBench 0-based labels).

Each writer takes the items frame the store returns (store.items.items_frame: current versions with
their state) and keeps the gated items itself.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import orjson
import pandas as pd

from importers.records import VERSION_LISTS, VERSION_VALUES

__all__ = [
    "crystal_record",
    "prmbench_record",
    "processbench_record",
    "write_crystal",
    "write_items_jsonl",
    "write_prmbench",
    "write_processbench",
    "write_processbench_all",
]

KEPT = ("complete", "consensus")  # states that pass the gate


def _json(value: Any, default: Any) -> Any:
    return json.loads(value) if isinstance(value, str) and value else default


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and pd.isna(value))


def _numbers(positions: Any, dropped: Any) -> list[int]:
    """Stored 0-based positions back to the file's 1-based numbers, with any the importer set aside."""
    return sorted({i + 1 for i in _json(positions, [])} | set(dropped or []))


def prmbench_record(row: pd.Series, images: list[str] | None = None) -> dict[str, Any]:
    """Pure: one PRMBench / PRMBench-V line with every field its source line had, 1-based steps.

    Source fields come back as they were read (question variants, idx, ground truth, source, image,
    original response, unknown fields); `stepgate` adds the gate's state, decision and each
    annotator's latest step-review judgement. `images`: the image references to write.
    """
    steps = row["steps"] or {}
    meta = row["meta"] if isinstance(row["meta"], dict) else {}
    dropped = meta.get("dropped_step_numbers", {})
    record: dict[str, Any] = dict(meta.get("questions") or {"question": row["question"]})
    record.update(
        {
            "idx": meta.get("idx", row["external_id"]),
            "original_process": list(steps.get("original", [])),
            "modified_process": list(steps.get("modified", [])),
            "modified_steps": _numbers(row["modified_steps"], dropped.get("modified_steps")),
            "error_steps": _numbers(row["error_steps"], dropped.get("error_steps")),
            "reason": row["rationale"] or "",
            "classification": row["error_type"],
        }
    )
    if _given(row["reference_answer"]):
        record["ground_truth"] = row["reference_answer"]
    if _given(row["source"]):
        record["source"] = row["source"]
    if "original_response" in meta:
        record["original_response"] = meta["original_response"]
    if images:
        record["image"] = images[0] if len(images) == 1 else images
    for key, value in (meta.get("extra") or {}).items():
        record.setdefault(key, value)
    record["stepgate"] = _gate(row)
    return record


def _gate(row: pd.Series) -> dict[str, Any]:
    """What the gate decided and who judged what (every annotator's latest label, time spent)."""
    return {
        "status": row["status"],
        "decision": _json(row["decision"], None),
        "version": int(row["version"]),
        "version_reason": row["version_reason"],
        "judgements": [
            {
                "annotator": label["annotator"],
                **label["payload"],
                "seconds_spent": label["seconds_spent"],
                "at": label["created_at"],
            }
            for label in (row.get("labels") or [])
        ],
    }


def processbench_record(row: pd.Series) -> dict[str, Any]:
    """Pure: one ProcessBench line; `label` is the consensus earliest error (0-based, -1 = none).

    The source's fields come back (`id, generator, problem, steps, final_answer_correct`, unknown
    ones); `stepgate` carries the state, the source file's own label, and a discarded item's reason.
    """
    steps = row["steps"] or {}
    decision = _json(row["decision"], None) or {}
    meta = row["meta"] if isinstance(row["meta"], dict) else {}
    record: dict[str, Any] = {
        "id": row["external_id"],
        "generator": meta.get("generator"),
        "problem": row["question"],
        "steps": list(steps.get("solution", [])),
        "final_answer_correct": None
        if pd.isna(row["final_answer_correct"])
        else bool(row["final_answer_correct"]),
        "label": decision.get("label"),
    }
    for key, value in (meta.get("extra") or {}).items():
        record.setdefault(key, value)
    gate = _gate(row)
    gate["source_label"] = None if pd.isna(row["earliest_error"]) else int(row["earliest_error"])
    if row["status"] == "discarded":
        gate["discard_reason"] = decision.get("flag") or "no three annotators agreed within the quorum"
    record["stepgate"] = gate
    return record


def _metas(texts: Iterable[Any]) -> list[Any]:
    """_json(text, {}) of each stored meta; a text met again (many items share theirs, such as a
    generator's name) is read once: the records only read these objects, never change them."""
    read: dict[str, Any] = {}
    out = []
    for text in texts:
        value = read.get(text) if isinstance(text, str) else None
        if value is None:
            value = _json(text, {})
            if isinstance(text, str) and len(read) < _KEEP_METAS:
                read[text] = value
        out.append(value)
    return out


_KEEP_METAS = 10_000


def _rows(items: pd.DataFrame, kept: tuple[str, ...] | None) -> pd.DataFrame:
    frame = items.copy()
    frame["meta"] = _metas(frame["meta"])
    return frame[frame["status"].isin(kept)] if kept is not None else frame


# orjson writes the same JSON values as json.dumps(ensure_ascii=False, default=str), several times
# faster: numpy scalars as numbers, keys that are not text as text, what else it cannot write as
# str(value); without the spaces after , and : and with null for NaN (which json wrote as NaN, not JSON).
_ORJSON = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


_BATCH = 4096  # lines joined into one write


def _write_lines(path: Path, records: Iterable[dict[str, Any]]) -> int:
    count = 0
    records = iter(records)
    with open(path, "wb") as fh:
        while batch := [
            orjson.dumps(r, default=str, option=_ORJSON) for r in itertools.islice(records, _BATCH)
        ]:
            fh.write(b"".join(batch))
            count += len(batch)
    return count


def _final(path: Path) -> Path:
    """The name the file will have (write_whole hands the writers a hidden partial file)."""
    return path.with_name(path.name.removeprefix(".").removesuffix(".partial"))


def _copy_images(files: list[str], path: Path) -> list[str]:
    """Copy an item's images beside the export; the references are relative to the export's folder,
    which is where the importers look for them."""
    folder = _final(path).with_name(_final(path).stem + "-images")
    refs = []
    for name in files:
        source = Path(name)
        folder.mkdir(exist_ok=True)
        shutil.copyfile(source, folder / source.name)
        refs.append(f"{folder.name}/{source.name}")
    return refs


def write_prmbench(items: pd.DataFrame, path: Path) -> int:
    frame = _rows(items, KEPT)
    return _write_lines(
        path,
        [
            prmbench_record(r, _copy_images(list(r.get("image_files") or []), path))
            for _, r in frame.iterrows()
        ],
    )


def write_processbench(items: pd.DataFrame, path: Path) -> int:
    """The consensus items only: the gated benchmark."""
    frame = _rows(items, KEPT)
    return _write_lines(path, [processbench_record(r) for _, r in frame.iterrows()])


def write_processbench_all(items: pd.DataFrame, path: Path) -> int:
    """Consensus and discarded items; a discarded one carries its reason under `stepgate`."""
    frame = _rows(items, (*KEPT, "discarded"))
    return _write_lines(path, [processbench_record(r) for _, r in frame.iterrows()])


# items-jsonl's line: these columns, then meta, steps, labels, then ITEM_TAIL's, then gold.
ITEM_HEAD = (
    "dataset",
    "task",
    "external_id",
    "version",
    "version_reason",
    *VERSION_VALUES,
    *VERSION_LISTS,
)
ITEM_TAIL = ("status", "decision", "target", "settled_at")
ITEM_OBJECTS = {"head": ITEM_HEAD, "tail": ITEM_TAIL}  # what the store hands as JSON (ItemsJson)


class ItemsJson(Protocol):
    """A frame of items with ITEM_OBJECTS and the steps as JSON (store.items.ItemsJson)."""

    item_ids: list[int]
    objects: dict[str, list[bytes]]
    meta: list[str]
    steps: list[bytes]
    labels: list[list[dict[str, Any]]]


def write_items_jsonl(items: Iterable[tuple[ItemsJson, list[bool]]], path: Path) -> int:
    """Every item with its state, gated or not: the full picture for analysis.

    ``items``: frames of items, each with whether each item is gold, written as they come (the next
    one is read while this one is written). A line is the JSON the database wrote (ITEM_OBJECTS,
    steps) spliced around meta and labels, which are written here: no item becomes a Python dict."""
    count = 0
    metas: dict[str, bytes] = {}
    with open(path, "wb") as fh:
        for frame, gold in _read_ahead(items):
            lines = _item_lines(frame, gold, metas)
            while batch := list(itertools.islice(lines, _BATCH)):  # a frame's text is not held twice
                fh.write(b"".join(batch))
            count += len(frame.item_ids)
    return count


_OPTIONS = _ORJSON & ~orjson.OPT_APPEND_NEWLINE


def _item_lines(frame: ItemsJson, gold: list[bool], metas: dict[str, bytes]) -> Iterator[bytes]:
    """One frame's lines: {head..., "meta", "steps", "labels", tail..., "gold"}, as one JSON object
    of those fields written by orjson would be. A meta text met again (many items share theirs)
    is written once."""
    meta = []
    for text in frame.meta:
        written = metas.get(text)
        if written is None:
            written = orjson.dumps(_json(text, {}), default=str, option=_OPTIONS)
            if len(metas) < _KEEP_METAS:
                metas[text] = written
        meta.append(written)
    labels = [
        orjson.dumps(values, default=str, option=_OPTIONS) if values else b"[]" for values in frame.labels
    ]
    ends = (b',"gold":false}\n', b',"gold":true}\n')
    return (
        b"".join(
            (head[:-1], b',"meta":', m, b',"steps":', steps, b',"labels":', label, b",", tail[1:-1], ends[g])
        )
        for head, m, steps, label, tail, g in zip(
            frame.objects["head"], meta, frame.steps, labels, frame.objects["tail"], gold, strict=True
        )
    )


def _read_ahead(frames: Iterable[Any]) -> Iterator[Any]:
    """The frames, the next one fetched in another thread while the caller works on this one (the
    database reads without holding the GIL: a second core runs it). The first is read here, so the
    reading starts on the caller's connection; then one thread pulls every other frame, so the
    iterator is never advanced from two threads at once."""
    source = iter(frames)
    frame = next(source, None)
    if frame is None:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="export-read") as pool:
        while frame is not None:
            pending = pool.submit(next, source, None)
            yield frame
            frame = pending.result()


GATE_KEPT = ("accepted",)  # quality-gate items that passed the human gate (edited or not)


def crystal_record(row: pd.Series, images: list[str] | None = None) -> dict[str, Any]:
    """Pure: one CRYSTAL-style line of an accepted item: its current (accepted, possibly edited)
    steps as `reference_steps`, question, image, options, answer, source, and the source line's
    other fields; `stepgate` carries the decision, version and each annotator's label."""
    steps = row["steps"] or {}
    meta = row["meta"] if isinstance(row["meta"], dict) else {}
    record: dict[str, Any] = {
        "id": row["external_id"],
        "question": row["question"],
        "options": _json(row["options"], []),
        "answer": row["reference_answer"] if _given(row["reference_answer"]) else None,
        "reference_steps": list(steps.get("candidate", [])),
    }
    if _given(row["source"]):
        record["source"] = row["source"]
    if images:
        record["image"] = images[0] if len(images) == 1 else images
    for key, value in (meta.get("extra") or {}).items():
        record.setdefault(key, value)
    record["stepgate"] = _gate(row)
    return record


def write_crystal(items: pd.DataFrame, path: Path) -> int:
    """The accepted quality-gate items as a new dataset (the figure's "Save as new dataset"), their
    images copied beside the file; the crystal importer reads it back."""
    frame = _rows(items, GATE_KEPT)
    return _write_lines(
        path,
        [
            crystal_record(r, _copy_images(list(r.get("image_files") or []), path))
            for _, r in frame.iterrows()
        ],
    )
