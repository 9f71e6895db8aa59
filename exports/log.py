"""The raw annotation log: every stored row, payload fields spread into columns."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from store.annotations import annotations_frame

if TYPE_CHECKING:
    from store import Store

__all__ = ["log_table", "only_annotator", "write_csv", "write_jsonl", "write_parquet"]


def log_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Pure: the stored log with each payload field as a `label_<field>` column (payload kept too)."""
    if frame.empty:
        return frame
    fields = pd.json_normalize([json.loads(p) for p in frame["payload"]]).add_prefix("label_")
    fields.index = frame.index
    return pd.concat([frame, fields], axis=1)


def _table(store: Store, dataset_id: int | None, annotator: str | None = None) -> pd.DataFrame:
    # The log is append-only: the export carries every row, not only the current versions.
    frame = annotations_frame(store, dataset_id, current_versions_only=False)
    if annotator is not None:
        frame = frame[frame["annotator"] == annotator].reset_index(drop=True)
    return log_table(frame)


def only_annotator(
    writer: Callable[..., int], annotator: str, store: Store, path: Path, dataset_id: int | None
) -> int:
    """Run one of the writers below over a single annotator's rows."""
    return writer(store, path, dataset_id, annotator)


def write_parquet(store: Store, path: Path, dataset_id: int | None, annotator: str | None = None) -> int:
    table = _table(store, dataset_id, annotator)
    table.to_parquet(path, index=False)
    return len(table)


def write_csv(store: Store, path: Path, dataset_id: int | None, annotator: str | None = None) -> int:
    table = _table(store, dataset_id, annotator)
    table.to_csv(path, index=False)
    return len(table)


def write_jsonl(store: Store, path: Path, dataset_id: int | None, annotator: str | None = None) -> int:
    table = _table(store, dataset_id, annotator)
    table.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
    return len(table)
