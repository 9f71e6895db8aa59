"""Many rows at once: ids drawn from a sequence, and inserts through Arrow (no per-row Python work)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from store.db import Tx

__all__ = ["insert_columns", "insert_rows", "new_ids"]


def new_ids(tx: Tx, sequence: str, n: int) -> list[int]:
    """``n`` ids drawn from ``sequence``, in order."""
    if n == 0:
        return []
    return [r[0] for r in tx.fetchall(f"SELECT nextval('{sequence}') FROM generate_series(1, ?)", [n])]


def insert_columns(tx: Tx, table: str, columns: dict[str, Any], types: dict[str, pa.DataType]) -> None:
    """Bulk insert through an Arrow table: no per-row Python work on the DuckDB side."""
    first = next(iter(columns.values()))
    if len(first) == 0:
        return
    arrow = pa.table(
        {
            name: values
            if isinstance(values, pa.Array | pa.ChunkedArray)
            else pa.array(values, type=types.get(name))
            for name, values in columns.items()
        }
    )
    name = f"_incoming_{table}"
    tx.register(name, arrow)
    try:
        cols = ", ".join(columns)
        tx.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
    finally:
        tx.unregister(name)


def insert_rows(tx: Tx, table: str, columns: Sequence[str], rows: list[list[Any]]) -> None:
    """insert_columns for rows (each a list in ``columns``' order)."""
    if rows:
        insert_columns(tx, table, {c: [r[i] for r in rows] for i, c in enumerate(columns)}, {})
