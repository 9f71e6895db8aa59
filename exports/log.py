"""The raw annotation log: every stored row, payload fields spread into columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from store.annotations import annotations_frame

if TYPE_CHECKING:
    from store import Store

__all__ = ["log_table", "write_csv", "write_jsonl", "write_parquet"]


def log_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Pure: the stored log with each payload field as a `label_<field>` column (payload kept too)."""
    if frame.empty:
        return frame
    fields = pd.json_normalize([json.loads(p) for p in frame["payload"]]).add_prefix("label_")
    fields.index = frame.index
    return pd.concat([frame, fields], axis=1)


def _table(store: Store, dataset_id: int | None) -> pd.DataFrame:
    # The log is append-only: the export carries every row, not only the current versions.
    return log_table(annotations_frame(store, dataset_id, current_versions_only=False))


def write_parquet(store: Store, path: Path, dataset_id: int | None) -> int:
    table = _table(store, dataset_id)
    table.to_parquet(path, index=False)
    return len(table)


def write_csv(store: Store, path: Path, dataset_id: int | None) -> int:
    table = _table(store, dataset_id)
    table.to_csv(path, index=False)
    return len(table)


def write_jsonl(store: Store, path: Path, dataset_id: int | None) -> int:
    table = _table(store, dataset_id)
    table.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
    return len(table)
