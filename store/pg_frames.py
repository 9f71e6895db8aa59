"""PostgreSQL's frames both ways: results typed as DuckDB types them, and frames as typed columns.

Out: psycopg's C loader makes the rows (faster than any COPY read through psycopg: COPY hands Python a
message per row; measured in bench/pg_reads.py); Arrow types each column by the type the server names
(int32 for INTEGER, never a guess from the values), and the frame is built as DuckDB's .df() builds it
(nullable integers where a NULL is, str columns), so QC and exports write the same bytes on both engines.
In: a pandas or Arrow frame registered by name (store.engines.PostgresEngine.register) becomes a
temporary table of these column types.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

__all__ = ["UNTYPED", "arrow_table", "duckdb_converter", "duckdb_frame", "pg_columns"]

UNTYPED = "untyped"  # a column of only NULLs: register() looks its type up


def _pg_type(values: list[Any]) -> str:
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            return "BOOLEAN"
        if isinstance(v, int):
            return "BIGINT"
        if isinstance(v, float):
            return "DOUBLE PRECISION"
        if isinstance(v, bytes | bytearray | memoryview):
            return "BYTEA"
        if isinstance(v, datetime):
            return "TIMESTAMP"
        if isinstance(v, date):
            return "DATE"
        return "TEXT"
    return UNTYPED


_ARROW_TYPES = {
    "bool": "BOOLEAN",
    "int8": "SMALLINT",
    "int16": "SMALLINT",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "float": "REAL",
    "double": "DOUBLE PRECISION",
    "string": "TEXT",
    "large_string": "TEXT",
    "binary": "BYTEA",
    "large_binary": "BYTEA",
}


def _plain(value: Any) -> Any:
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:  # NaN: a missing value, as DuckDB reads it
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, bytes | str):
        return value.item()
    return value


def pg_columns(frame: pd.DataFrame | pa.Table) -> dict[str, tuple[str, list[Any]]]:
    """Each column's PostgreSQL type and its values as plain Python objects."""
    out: dict[str, tuple[str, list[Any]]] = {}
    if isinstance(frame, pa.Table):
        for name in frame.column_names:
            column = frame.column(name)
            values = column.to_pylist()
            out[name] = (_ARROW_TYPES.get(str(column.type)) or _pg_type(values), values)
        return out
    for name in frame.columns:
        values = [_plain(v) for v in frame[name].tolist()]
        out[str(name)] = (_pg_type(values), values)
    return out


@functools.cache
def _arrow_of_oid() -> dict[int, pa.DataType]:
    """Arrow's type for each server type OID that goes into Arrow (built on first use: pyarrow loads late)."""
    return {
        16: pa.bool_(),
        19: pa.string(),  # name
        20: pa.int64(),
        21: pa.int16(),
        23: pa.int32(),
        25: pa.string(),
        700: pa.float32(),
        701: pa.float64(),
        1042: pa.string(),
        1043: pa.string(),
        1082: pa.date32(),
        1114: pa.timestamp("us"),
        1700: pa.float64(),  # numeric: psycopg reads it as float here (connection()), as DuckDB's DOUBLE
    }


# json, jsonb and arrays: the Python values psycopg made (dicts, lists), as objects
_OBJECT_OIDS = {114, 3802, 1000, 1005, 1007, 1009, 1015, 1016, 1021, 1022}


def arrow_table(description: Any, rows: list[tuple]) -> tuple[pa.Table, dict[str, list[Any]]] | None:
    """The rows as an Arrow table and the columns kept as Python objects; None for a type not listed."""
    names = [d.name for d in description]
    if len(set(names)) != len(names):
        return None
    arrow_of_oid = _arrow_of_oid()
    if all(d.type_code in arrow_of_oid for d in description):  # the tuples straight into Arrow, in C
        fields = pa.struct([(d.name, arrow_of_oid[d.type_code]) for d in description])
        try:
            return pa.Table.from_struct_array(pa.array(rows, type=fields)), {}
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # infinity dates, say
            return None
    values = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    arrays: dict[str, pa.Array] = {}
    objects: dict[str, list[Any]] = {}
    for d, column in zip(description, values, strict=True):
        if d.type_code in _OBJECT_OIDS:
            objects[d.name] = list(column)
            arrays[d.name] = pa.nulls(len(column))
        elif d.type_code in arrow_of_oid:
            try:
                arrays[d.name] = pa.array(column, type=arrow_of_oid[d.type_code])
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # infinity dates, say
                return None
        else:
            return None
    return pa.table(arrays), objects


_CONVERTER: list[duckdb.DuckDBPyConnection] = []
_CONVERTER_LOCK = threading.Lock()


@contextmanager
def duckdb_converter() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB cursor of this thread's own (an in-memory database, opened once: 35 ms) to convert with."""
    with _CONVERTER_LOCK:
        if not _CONVERTER:
            _CONVERTER.append(duckdb.connect(":memory:"))
        cursor = _CONVERTER[0].cursor()
    try:
        yield cursor
    finally:
        cursor.close()


@functools.cache
def _nullable() -> dict[pa.DataType, Any]:
    """pandas' nullable dtype for each Arrow type DuckDB's .df() makes nullable (pandas loads late)."""
    return {
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }


def duckdb_frame(table: pa.Table, objects: dict[str, list[Any]]) -> pd.DataFrame:
    """A frame of the same dtypes as DuckDB's .df() of the same result (one Arrow conversion: per column
    costs five times more)."""
    for i, column in enumerate(table.columns):
        if pa.types.is_date32(column.type):  # DuckDB hands DATE to pandas as a timestamp
            table = table.set_column(
                i, table.field(i).with_type(pa.timestamp("us")), column.cast(pa.timestamp("us"))
            )
    nullable = [
        n
        for n, c in zip(table.column_names, table.columns, strict=True)
        if c.null_count and c.type in _nullable()
    ]
    # DuckDB hands a text column with no value in it (none at all, or only NULLs) as objects: None
    unset = [
        n
        for n, c in zip(table.column_names, table.columns, strict=True)
        if pa.types.is_string(c.type) and c.null_count == len(c)
    ]
    plain = [n for n in table.column_names if n not in objects and n not in nullable and n not in unset]
    frame = table.select(plain).to_pandas()
    if nullable:
        masked = table.select(nullable).to_pandas(types_mapper=_nullable().get)
        for name in nullable:
            frame[name] = masked[name]
    for name in unset:
        frame[name] = pd.Series([None] * table.num_rows, dtype=object)
    for name, values in objects.items():
        frame[name] = pd.Series(values, dtype=object)
    return frame[table.column_names] if objects or nullable or unset else frame
