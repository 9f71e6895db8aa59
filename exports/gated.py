"""The gated benchmark back in its source formats (PRMBench 1-based steps, ProcessBench 0-based labels).

Each writer takes the items frame the store returns (store.items.items_frame: current versions with
their state) and keeps the gated items itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "prmbench_record",
    "processbench_record",
    "write_items_jsonl",
    "write_prmbench",
    "write_processbench",
]

KEPT = ("complete", "consensus")  # states that pass the gate


def _json(value: Any, default: Any) -> Any:
    return json.loads(value) if isinstance(value, str) and value else default


def prmbench_record(row: pd.Series) -> dict[str, Any]:
    """Pure: one PRMBench line; step numbers go back to 1-based."""
    steps = row["steps"] or {}
    return {
        "idx": row["meta"].get("idx", row["external_id"])
        if isinstance(row["meta"], dict)
        else row["external_id"],
        "question": row["question"],
        "original_process": list(steps.get("original", [])),
        "modified_process": list(steps.get("modified", [])),
        "modified_steps": [i + 1 for i in _json(row["modified_steps"], [])],
        "error_steps": [i + 1 for i in _json(row["error_steps"], [])],
        "reason": row["rationale"] or "",
        "classification": row["error_type"],
        "stepgate": {
            "status": row["status"],
            "decision": _json(row["decision"], None),
            "version": int(row["version"]),
        },
    }


def processbench_record(row: pd.Series) -> dict[str, Any]:
    """Pure: one ProcessBench line; the label is the consensus earliest error (0-based, -1 = none)."""
    steps = row["steps"] or {}
    decision = _json(row["decision"], None) or {}
    return {
        "id": row["external_id"],
        "generator": (row["meta"] or {}).get("generator"),
        "problem": row["question"],
        "steps": list(steps.get("solution", [])),
        "final_answer_correct": None
        if pd.isna(row["final_answer_correct"])
        else bool(row["final_answer_correct"]),
        "label": decision.get("label"),
    }


def _rows(items: pd.DataFrame, gated_only: bool) -> pd.DataFrame:
    frame = items.copy()
    frame["meta"] = [_json(m, {}) for m in frame["meta"]]
    return frame[frame["status"].isin(KEPT)] if gated_only else frame


def _write_lines(path: Path, records: list[dict[str, Any]]) -> int:
    with open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    return len(records)


def write_prmbench(items: pd.DataFrame, path: Path) -> int:
    frame = _rows(items, gated_only=True)
    return _write_lines(path, [prmbench_record(r) for _, r in frame.iterrows()])


def write_processbench(items: pd.DataFrame, path: Path) -> int:
    frame = _rows(items, gated_only=True)
    return _write_lines(path, [processbench_record(r) for _, r in frame.iterrows()])


def write_items_jsonl(items: pd.DataFrame, path: Path) -> int:
    """Every item with its state, gated or not: the full picture for analysis."""
    frame = _rows(items, gated_only=False)
    records = frame.drop(columns=["item_id"]).to_dict(orient="records")
    for record in records:
        record["steps"] = {k: list(v) for k, v in (record["steps"] or {}).items()}
    return _write_lines(path, records)
