"""The raw annotation log: every stored row handed in, payload fields spread into columns."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

__all__ = ["log_table", "write_csv", "write_jsonl", "write_parquet"]


def log_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The stored log with each payload field as a `label_<field>` column (payload kept too)."""
    if frame.empty:
        return frame
    fields = pd.json_normalize([json.loads(p) for p in frame["payload"]]).add_prefix("label_")
    fields.index = frame.index
    return pd.concat([frame, fields], axis=1)


def write_parquet(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    table.to_parquet(path, index=False)
    return len(table)


def write_csv(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    table.to_csv(path, index=False)
    return len(table)


def write_jsonl(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    table.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
    return len(table)
