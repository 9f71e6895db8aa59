"""The two database engines behind Store, and every difference between them, in one place.

DuckDB (a file, the embedded default) and PostgreSQL (a server, for teams that run several app
replicas) run the same SQL from the rest of store/: `?` placeholders, DuckDB's spelling of types
(DOUBLE, BLOB: two domains on PostgreSQL), frames registered by name to join against. What differs
is here: connecting, placeholders, frames to pandas and back, errors, and how writes are serialised.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from store.errors import StoreConflictError, StoreLockedError, StoreOpenError, StoreUnavailableError
from store.pg_frames import UNTYPED, arrow_table, duckdb_converter, duckdb_frame, pg_columns

__all__ = ["DuckDBEngine", "Engine", "PostgresEngine", "engine_for", "is_server_url"]

_SERVER_SCHEMES = ("postgresql://", "postgres://")


def is_server_url(location: str | Path) -> bool:
    """`--db postgresql://...` selects PostgreSQL; anything else is a DuckDB file path."""
    return isinstance(location, str) and location.startswith(_SERVER_SCHEMES)


class Engine(ABC):
    """One database: its connections (one per thread) and the engine's own spelling of each operation."""

    name: str
    location: str  # what messages call the database (a path, or a URL without its password)
    cache_seconds: float | None = None  # how long the read caches may keep rows (None: until a write)
    # What differs between engines, by name, so that no caller asks which engine it has:
    exclusive = False  # one process holds the whole database (no other replica can be running)
    embedded = False  # the database runs inside this process: its memory settings are ours to make
    file: Path | None = None  # the database's one file, where it is one (a control file goes beside it)

    @abstractmethod
    def connection(self) -> Any:
        """A new connection (or cursor) for one thread."""

    @abstractmethod
    def run(self, con: Any, sql: str, params: Sequence[Any] | None) -> Any:
        """Run one statement; returns an object with fetchall() and description."""

    @abstractmethod
    def df(self, con: Any, sql: str, params: Sequence[Any] | None) -> pd.DataFrame: ...

    @abstractmethod
    def df_chunks(
        self, con: Any, sql: str, params: Sequence[Any] | None, rows: int
    ) -> Iterator[pd.DataFrame]:
        """The result in frames of about `rows` rows, read from the database as they are asked for."""

    @abstractmethod
    def columns(self, con: Any, sql: str, params: Sequence[Any] | None) -> dict[str, np.ndarray]:
        """The result as one NumPy array per column: a million ids without a million row tuples."""

    @abstractmethod
    def executemany(self, con: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    def register(self, con: Any, name: str, frame: pd.DataFrame | pa.Table) -> None:
        """Make a frame joinable by name on this connection until unregister()."""

    @abstractmethod
    def unregister(self, con: Any, name: str) -> None: ...

    @abstractmethod
    def begin(self, con: Any, shared: bool = False, item: int | None = None) -> None:
        """Open a write transaction; writes are serialised across every process on the database, but
        for `shared` ones (labels), which run beside each other and hold their rules by an item's lock,
        row locks and unique constraints (see _WRITE_LOCK), never beside an exclusive one. `item`: a
        shared transaction's item, locked against every other shared transaction on it."""

    @abstractmethod
    def commit(self, con: Any) -> None: ...

    @abstractmethod
    def rollback(self, con: Any) -> None: ...

    @abstractmethod
    def close_connection(self, con: Any) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @contextmanager
    def all_cores(self) -> Iterator[None]:
        """Work over a whole dataset (an import's write, an export, a report) may use every core."""
        yield

    @abstractmethod
    def prepare(self, con: Any) -> None:
        """Run inside the first write transaction, before the migrations."""

    @abstractmethod
    def checkpoint(self, con: Any) -> None:
        """Write what is committed into the main file (DuckDB); the server does its own."""

    @abstractmethod
    def analyze(self, con: Any, tables: Sequence[str]) -> None:
        """Refresh the planner's statistics of tables a bulk write grew."""

    @abstractmethod
    def json_int_array(self, expr: str) -> str:
        """SQL for a JSON list of integers held as text (error_steps, say) as an INTEGER array."""

    @abstractmethod
    def map_agg(self, key: str, value: str, order: str | None = None) -> str:
        """SQL for an aggregate that reads back as a dict {key: value} (a group's steps by role)."""

    @abstractmethod
    def records_agg(self, fields: dict[str, str], order: str) -> str:
        """SQL for an aggregate that reads back as a list of dicts {name: value}, in `order`."""

    def json_object(self, fields: dict[str, str]) -> str | None:
        """SQL for the fields as one compact JSON object {name: value, ...} in UTF-8 bytes, spelled as
        orjson spells it (strings, integers, booleans, nulls; only the case of a \\u00XX escape's hex
        digits may differ), or None where the engine spells JSON otherwise (PostgreSQL's has spaces):
        the caller then writes the values itself. Lets a whole export skip Python objects."""
        return None

    def json_lists_agg(self, key: str, order: str, value: str) -> str | None:
        """SQL for an aggregate: the group's values as JSON {key: [value, ...], ...} spelled as
        json_object's, keys in order, each list in ``order``; None as json_object."""
        return None

    def translate(self, exc: Exception) -> Exception | None:
        """The store error an engine exception means, or None when it is not the engine's."""
        return None


# Failures of the file or the engine, not of our SQL: disk full, read-only folder, invalidated database.
_DUCKDB_BROKEN = (
    duckdb.IOException,
    duckdb.FatalException,
    duckdb.InternalException,
    duckdb.PermissionException,
)


def _struct(fields: dict[str, str]) -> str:
    """DuckDB's struct literal {'name': expr, ...}."""
    return "{" + ", ".join(f"'{name}': {expr}" for name, expr in fields.items()) + "}"


class DuckDBEngine(Engine):
    """A DuckDB file: one process holds it (the file lock), so its write lock is the whole truth.

    Its statements run on the calling thread alone (DuckDB's `threads` setting at 1), except inside
    all_cores(). A label's five statements touch a few rows each, and handing their pipelines to
    DuckDB's worker threads and waiting for them back costs more than it gains (bench/run.py --parts,
    three pairs of runs: a submit's SQL 6.4-7.0 ms at p50 on one thread, 7.4-8.1 ms on two; see
    docs/PERFORMANCE.md), while an import's write or an export is faster on every core.
    The setting belongs to the whole database, so all_cores() counts who is inside it: the cores
    stay on until the last one leaves, and a label that runs meanwhile runs as it did before.
    """

    name = "duckdb"
    exclusive = True
    embedded = True

    def __init__(self, path: Path) -> None:
        self.location = str(path)
        self.file = path
        if not path.parent.exists():
            raise StoreOpenError(f"the folder {path.parent} does not exist: cannot open {path}")
        try:
            self._con = duckdb.connect(str(path), config={"threads": 1})
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreLockedError(
                    f"{path} is already open in another stepgate process (or another DuckDB "
                    f"client). Stop that process first, or point --db at another file. ({text})"
                ) from exc
            raise StoreOpenError(f"cannot open {path}: {text}") from exc
        self._settings = self._con.cursor()  # SET threads runs here, never on a connection in use
        self._cores = os.cpu_count() or 1
        self._inside_all_cores = 0
        self._cores_lock = threading.Lock()

    @contextmanager
    def all_cores(self) -> Iterator[None]:
        with self._cores_lock:
            self._inside_all_cores += 1
            if self._inside_all_cores == 1 and self._cores > 1:
                self._settings.execute(f"SET threads = {self._cores}")
        try:
            yield
        finally:
            with self._cores_lock:
                self._inside_all_cores -= 1
                if self._inside_all_cores == 0 and self._cores > 1:
                    with suppress(duckdb.Error):  # a closed database has no threads to set
                        self._settings.execute("SET threads = 1")

    def connection(self) -> duckdb.DuckDBPyConnection:
        return self._con.cursor()

    def run(self, con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None) -> Any:
        return con.execute(sql, params or [])

    def df(self, con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None) -> pd.DataFrame:
        return con.execute(sql, params or []).df()

    def df_chunks(
        self, con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None, rows: int
    ) -> Iterator[pd.DataFrame]:
        cursor = con.execute(sql, params or [])
        while True:
            frame = cursor.fetch_df_chunk(max(1, rows // 2048))  # DuckDB counts vectors of 2048 rows
            if frame.empty:
                return
            yield frame

    def columns(
        self, con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None
    ) -> dict[str, np.ndarray]:
        return con.execute(sql, params or []).fetchnumpy()

    def executemany(self, con: duckdb.DuckDBPyConnection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        con.executemany(sql, rows)

    def register(self, con: duckdb.DuckDBPyConnection, name: str, frame: pd.DataFrame | pa.Table) -> None:
        con.register(name, frame)

    def unregister(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        con.unregister(name)

    def begin(self, con: duckdb.DuckDBPyConnection, shared: bool = False, item: int | None = None) -> None:
        con.execute("BEGIN TRANSACTION")  # one process: Store's lock serialises every write

    def commit(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute("COMMIT")

    def rollback(self, con: duckdb.DuckDBPyConnection) -> None:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")

    def json_int_array(self, expr: str) -> str:
        return f"CAST({expr} AS INTEGER[])"

    def map_agg(self, key: str, value: str, order: str | None = None) -> str:
        by = f" ORDER BY {order}" if order else ""
        return f"map(list({key}{by}), list({value}{by}))"

    def records_agg(self, fields: dict[str, str], order: str) -> str:
        return f"list({_struct(fields)} ORDER BY {order})"

    # to_json writes orjson's bytes (checked for every code point) but for \u000B..\u001F's upper-case
    # hex, which the reader puts right (store.items._orjson_spelling)
    def json_object(self, fields: dict[str, str]) -> str | None:
        return f"encode(CAST(to_json({_struct(fields)}) AS VARCHAR))"

    def json_lists_agg(self, key: str, order: str, value: str) -> str | None:
        # One list of (key, order, value) sorted, where ordered aggregates per key and then per group
        # cost half as much again; a group of one key (most) is written whole, others key by key.
        rows = f"list_sort(list({{'k': {key}, 'o': {order}, 'v': {value}}}))"
        one = f"'{{' || CAST(to_json({rows}[1].k) AS VARCHAR) || ':' || CAST(to_json(list_transform({rows}, lambda x: x.v)) AS VARCHAR) || '}}'"
        each = (
            f"list_transform(list_sort(list_distinct(list_transform({rows}, lambda x: x.k))), lambda r: "
            f"CAST(to_json(r) AS VARCHAR) || ':' || "
            f"CAST(to_json(list_transform(list_filter({rows}, lambda x: x.k = r), lambda x: x.v)) AS VARCHAR))"
        )
        return f"encode(CASE WHEN {rows}[1].k = {rows}[-1].k THEN {one} ELSE '{{' || array_to_string({each}, ',') || '}}' END)"

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """DuckDB reads the migrations as they are."""

    def checkpoint(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute("CHECKPOINT")

    def analyze(self, con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> None:
        """DuckDB keeps its statistics as it writes."""

    def close_connection(self, con: duckdb.DuckDBPyConnection) -> None:
        with suppress(duckdb.Error):
            con.close()

    def close(self) -> None:
        self._con.close()

    def translate(self, exc: Exception) -> Exception | None:
        if isinstance(exc, duckdb.ConstraintException):
            return StoreConflictError(str(exc))
        if isinstance(exc, _DUCKDB_BROKEN):
            return StoreOpenError(
                f"the database file cannot be read or written ({type(exc).__name__}: {exc})"
            )
        return None


# Every write transaction on PostgreSQL takes this transaction-scoped advisory lock first. Rare writes
# (imports, item versions, settings, users, decisions' follow-ups, jobs) take it EXCLUSIVE: they are
# serialised across replicas as one DuckDB process serialises them, and every read-then-write rule of
# theirs holds as it does there. The label path (services/annotate._submit, a skip) takes it SHARED:
# labels run side by side, and never beside an exclusive writer. Each rule a label's read-then-write
# relies on is then held by PostgreSQL itself, here is where (READ COMMITTED: every statement after the
# row lock sees everything committed before it was granted):
# - every rule of one item (below) first: labels on the same item run one after the other, under the
#   item's own transaction lock, taken with BEGIN (Store.writing(shared=True, item=...)); claims never
#   take it, so a claim never waits for a label (and a label never waits for a claim but at the UPDATE
#   of the item's state row, as before);
# - an item's target (never more annotators than it needs): a claim locks the item's state row (FOR
#   UPDATE SKIP LOCKED, store/leases.py) and counts labels and live leases under it; a label is taken
#   from a live lease holder (counted already, as a lease or a label), or from a lapsed lease only while
#   nobody took its place, counted under the same row lock, FOR UPDATE (SharedScheduler.may_label);
# - a label stored once (the same annotator, the same item): the item's lock, under which the item's
#   rows are read (a correction only where the dataset allows it; `first_label`);
# - a request id seen once: the UNIQUE constraint on annotations.request_id (and study_labels'), whose
#   insert waits for a concurrent one with the same id and then fails (AnnotationConflict: rolled back,
#   the first submit read and answered); a retry on the same item is found under the item's lock first;
# - the item's state as the decision over all its labels, an escalation's raised target: the item's
#   lock (every label on the item passes through it), the state read after it (store/state.locked_state)
#   and the UPDATE of that row;
# - the current version a label is for: read from the database under the item's lock; versions change
#   only in exclusive writes (imports, edits, generators; a gate accept goes exclusive, below);
# - what follows a decision (a new version, a regeneration or a new variant, a failed item past its cap)
#   needs more than one row: the shared attempt raises StoreExclusiveNeeded before it writes any of it
#   (services/decide.settle, or any nested Store.writing()), rolls back, and runs again exclusively;
# - settings, users, gold and study assignments a label reads: written only exclusively, so never
#   changing under a label.
# SERIALIZABLE is not used: no rule of the label path spans rows beyond the item's without going
# exclusive, so nothing retries for serialisation failures. DuckDB: one process, its own lock, unchanged.
_WRITE_LOCK = 0x5374_6570_6761_7465  # "Stepgate"
_ITEM_LOCK = 0x5374_6570  # "Step": an item's lock, (this ^ id >> 31, id & 0x7FFFFFFF) in the two-key space
# Every session: timestamps in UTC; whole results planned as whole results (a server-side cursor is
# otherwise planned for its first tenth: nested loops that made a 10k-item export take 17 s, not 0.4 s).
_SESSION = "-c TimeZone=UTC -c cursor_tuple_fraction=1"
# The domains that let DuckDB's spelling of types (in the shipped migrations) run unchanged.
_DOMAINS = {"double": "double precision", "blob": "bytea"}


class PostgresEngine(Engine):
    """A PostgreSQL database (psycopg 3): a connection per thread, autocommit reads."""

    name = "postgresql"
    cache_seconds = 2.0  # other replicas write too: a role change or a removal reaches this one soon
    typed_frames = True  # frames typed as DuckDB types them (False: pandas guesses, as before; bench)

    def __init__(self, url: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self.url = url
        self.location = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
        first = self.connection()  # fail here, with the server's reason, not at the first query
        self.close_connection(first)

    def connection(self) -> Any:
        psycopg = self._psycopg
        try:
            con = psycopg.connect(self.url, autocommit=True, options=_SESSION)
        except psycopg.OperationalError as exc:
            raise StoreOpenError(f"cannot connect to {self.location}: {str(exc).strip()}") from exc
        except psycopg.ProgrammingError as exc:  # a malformed URL
            raise StoreOpenError(f"cannot use {self.location} as a database: {exc}") from exc
        # numeric (sum and avg of integers) reads as float, as DuckDB hands back DOUBLE
        con.adapters.register_loader("numeric", psycopg.types.numeric.FloatLoader)
        return con

    def run(self, con: Any, sql: str, params: Sequence[Any] | None) -> Any:
        cur = con.cursor()
        cur.execute(_placeholders(sql), _values(params))
        return cur

    def df(self, con: Any, sql: str, params: Sequence[Any] | None) -> pd.DataFrame:
        cur = self.run(con, sql, params)
        return self._frame(cur.description, cur.fetchall())

    def _frame(self, description: Any, rows: list[tuple]) -> pd.DataFrame:
        names = [d.name for d in description]
        typed = arrow_table(description, rows) if self.typed_frames else None
        if typed is not None:
            return duckdb_frame(*typed)
        if not rows:
            return pd.DataFrame({n: pd.Series(dtype=object) for n in names})
        return pd.DataFrame.from_records(rows, columns=names, coerce_float=True)

    def df_chunks(
        self, con: Any, sql: str, params: Sequence[Any] | None, rows: int
    ) -> Iterator[pd.DataFrame]:
        # A server-side cursor (kept past a commit: reads run in autocommit): the server holds the rest.
        with con.cursor(name=f"stepgate_{uuid.uuid4().hex}", withhold=True) as cursor:
            cursor.execute(_placeholders(sql), _values(params))
            while True:
                batch = cursor.fetchmany(rows)
                if not batch:
                    return
                yield self._frame(cursor.description, batch)

    def columns(self, con: Any, sql: str, params: Sequence[Any] | None) -> dict[str, np.ndarray]:
        cur = self.run(con, sql, params)
        typed = arrow_table(cur.description, cur.fetchall()) if self.typed_frames else None
        if typed is not None and not typed[1]:  # DuckDB's own conversion: the arrays fetchnumpy gives
            with duckdb_converter() as converter:
                return converter.from_arrow(typed[0]).fetchnumpy()  # type: ignore[no-any-return]
        frame = duckdb_frame(*typed) if typed is not None else self._frame(cur.description, [])
        return {name: frame[name].to_numpy() for name in frame.columns}

    def executemany(self, con: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        con.cursor().executemany(_placeholders(sql), [_values(r) for r in rows])

    def register(self, con: Any, name: str, frame: pd.DataFrame | pa.Table) -> None:
        columns = pg_columns(frame)
        for column, (kind, values) in columns.items():
            if kind == UNTYPED:  # no value to tell: the type of the store's column of that name
                found = con.execute(
                    "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                    "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 "
                    "AND a.attname = %s LIMIT 1",
                    [column],
                ).fetchone()
                columns[column] = (found[0] if found else "TEXT", values)
        spec = ", ".join(f'"{c}" {t}' for c, (t, _) in columns.items())
        quoted = ", ".join(f'"{c}"' for c in columns)
        cur = con.cursor()
        cur.execute(f'CREATE TEMPORARY TABLE "{name}" ({spec})')
        values = [v for _, v in columns.values()]
        with cur.copy(f'COPY "{name}" ({quoted}) FROM STDIN') as copy:
            for row in zip(*values, strict=True):
                copy.write_row(row)

    def unregister(self, con: Any, name: str) -> None:
        # In a failed transaction the rollback drops the table; a DROP now would only raise again.
        if con.info.transaction_status != self._psycopg.pq.TransactionStatus.INERROR:
            con.execute(f'DROP TABLE IF EXISTS pg_temp."{name}"')

    def begin(self, con: Any, shared: bool = False, item: int | None = None) -> None:
        # One round trip: the statements in one simple query (the keys are numbers of ours).
        lock = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        sql = f"BEGIN; SELECT {lock}({_WRITE_LOCK})"
        if item is not None:  # the two-key space: never the write lock's; ids up to 2^62 (services)
            item = int(item)
            sql += f"; SELECT pg_advisory_xact_lock({_ITEM_LOCK ^ (item >> 31)}, {item & 0x7FFFFFFF})"
        con.execute(sql)

    def prepare(self, con: Any) -> None:
        present = {
            r[0]
            for r in con.execute(
                "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                "WHERE n.nspname = current_schema() AND t.typname = ANY(%s)",
                [list(_DOMAINS)],
            ).fetchall()
        }
        for name, base in _DOMAINS.items():
            if name not in present:
                con.execute(f'CREATE DOMAIN "{name}" AS {base}')

    def json_int_array(self, expr: str) -> str:
        return f"ARRAY(SELECT CAST(jsonb_array_elements_text(CAST({expr} AS JSONB)) AS INTEGER))"

    def map_agg(self, key: str, value: str, order: str | None = None) -> str:
        by = f" ORDER BY {order}" if order else ""
        return f"json_object_agg({key}, {value}{by})"

    def records_agg(self, fields: dict[str, str], order: str) -> str:
        # Timestamps as text in DuckDB's (and Python's str()) spelling: JSON would write ISO 8601's T.
        pairs = ", ".join(
            f"'{name}', {_as_text(expr) if name.endswith('_at') else expr}" for name, expr in fields.items()
        )
        return f"json_agg(json_build_object({pairs}) ORDER BY {order})"

    def checkpoint(self, con: Any) -> None:
        """The server checkpoints on its own."""

    def analyze(self, con: Any, tables: Sequence[str]) -> None:
        # Without it the planner reads a fresh import's tables as nearly empty until autovacuum
        # comes by (a 10k-item import was estimated at 7.7k rows), and picks nested loops.
        con.execute(f"ANALYZE {', '.join(tables)}")

    def commit(self, con: Any) -> None:
        con.execute("COMMIT")

    def rollback(self, con: Any) -> None:
        with suppress(self._psycopg.Error):
            con.execute("ROLLBACK")

    def close_connection(self, con: Any) -> None:
        with suppress(self._psycopg.Error):
            con.close()

    def close(self) -> None:
        """Connections belong to threads and are closed with them (Store.close closes each)."""

    def translate(self, exc: Exception) -> Exception | None:
        psycopg = self._psycopg
        if isinstance(exc, psycopg.errors.IntegrityError):
            return StoreConflictError(str(exc).strip())
        if isinstance(exc, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected):
            return StoreConflictError(str(exc).strip())
        if isinstance(exc, psycopg.OperationalError | psycopg.errors.DiskFull):
            return StoreUnavailableError(
                f"the database {self.location} cannot be reached or written ({str(exc).strip()})"
            )
        return None


def _as_text(timestamp: str) -> str:
    """A TIMESTAMP as Python's str() writes a datetime: microseconds only when there are some."""
    return (
        f"CASE WHEN date_part('microseconds', {timestamp})::bigint % 1000000 = 0 "
        f"THEN to_char({timestamp}, 'YYYY-MM-DD HH24:MI:SS') "
        f"ELSE to_char({timestamp}, 'YYYY-MM-DD HH24:MI:SS.US') END"
    )


@functools.lru_cache(maxsize=4096)
def _placeholders(sql: str) -> str:
    """DuckDB's `?` as psycopg's `%s` (and a literal `%` doubled), outside quoted strings and names."""
    out: list[str] = []
    quote = ""
    for ch in sql:
        if quote:
            if ch == quote:
                quote = ""
            out.append("%%" if ch == "%" else ch)
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


def _values(params: Sequence[Any] | None) -> list[Any]:
    """numpy scalars (from frames) as plain Python values, which psycopg adapts."""
    return [v.item() if hasattr(v, "item") and not isinstance(v, bytes | str) else v for v in params or []]


def engine_for(location: str | Path) -> Engine:
    return PostgresEngine(str(location)) if is_server_url(location) else DuckDBEngine(Path(location))
