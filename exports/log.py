"""The raw annotation log: every stored row handed in, payload fields spread into columns."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from exports.cells import spreadsheet_frame

__all__ = ["log_table", "write_csv", "write_jsonl", "write_parquet"]


def _plain(value: object) -> object:
    """A list (e.g. chosen features) as JSON text: every column stays a plain scalar type, which
    Parquet readers (pandas, `datasets.load_dataset("parquet")`) and CSV read as they are."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, list | dict) else value


def log_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The stored log with each payload field as a `label_<field>` column (payload kept too); nested
    objects spread to `label_<field>.<key>`, lists kept as JSON text."""
    if frame.empty:
        return frame
    fields = pd.json_normalize([json.loads(p) for p in frame["payload"]]).add_prefix("label_")
    fields.index = frame.index
    for name in fields.columns:
        if fields[name].dtype == object:
            fields[name] = fields[name].map(_plain)
    return pd.concat([frame, fields], axis=1)


def write_parquet(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    table.to_parquet(path, index=False)
    return len(table)


def write_csv(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    spreadsheet_frame(table).to_csv(path, index=False)
    return len(table)


def write_jsonl(frame: pd.DataFrame, path: Path) -> int:
    table = log_table(frame)
    if table.empty:  # pandas writes a lone newline, which no JSON-lines reader takes as "no rows"
        path.write_text("", encoding="utf-8")
        return 0
    table.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
    return len(table)
