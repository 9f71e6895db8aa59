"""The one object that owns the DuckDB file (after datasette's Database).

Gradio runs handlers in a thread pool: every thread reads through its own cursor, and every write
runs under one lock inside an explicit transaction that is committed before the caller returns,
so an acknowledged annotation is on disk.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from store.assignments import Scheduler
from store.cache import Bypass, LruCache, ReadCache, ReadOnly
from store.errors import StoreClosedError, StoreError, StoreLockedError, StoreOpenError, StoreUnavailableError
from store.migrations import migrate

__all__ = [
    "Store",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreOpenError",
    "StoreUnavailableError",
    "Tx",
]


# Failures of the file or the engine, not of our SQL: disk full, read-only folder, invalidated database.
_BROKEN = (duckdb.IOException, duckdb.FatalException, duckdb.InternalException, duckdb.PermissionException)


class _Reader(ABC):
    """Read helpers shared by Store (autocommit reads) and Tx (reads inside a write)."""

    @abstractmethod
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """The cursor this reader runs its statements on."""

    @property
    @abstractmethod
    def cache(self) -> ReadCache:
        """The read cache this reader may use (a transaction bypasses it)."""

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> duckdb.DuckDBPyConnection:
        try:
            return self._cursor().execute(sql, params or [])
        except _BROKEN as exc:
            raise StoreOpenError(
                f"the database file cannot be read or written ({type(exc).__name__}: {exc})"
            ) from exc

    def fetchall(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
        return self.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Sequence[Any] | None = None) -> tuple | None:
        # Fetch everything: DuckDB refuses other work on a cursor whose result is unfinished.
        rows = self.execute(sql, params).fetchall()
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        row = self.fetchone(sql, params)
        return None if row is None else row[0]

    def records(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def df(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        return self.execute(sql, params).df()

    @contextmanager
    def reading_frame(self, name: str, frame: pd.DataFrame) -> Iterator[_Reader]:
        """Let SQL join against a data frame (a list of ids, say) for the length of a block."""
        cur = self._cursor()
        cur.register(name, frame)
        try:
            yield self
        finally:
            cur.unregister(name)


_BYPASS = Bypass()


class Tx(_Reader):
    """A write transaction: reads inside it see its own uncommitted writes."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, store: Store) -> None:
        self._cur = cursor
        self.store = store
        self.on_commit: list[Callable[[], None]] = []
        self._cache: ReadCache = ReadOnly(store.cache)

    @property
    def cache(self) -> ReadCache:
        return self._cache

    def forget_after_commit(self) -> None:
        """This transaction changes rows the read cache holds: it reads them from the database from
        now on, and the cache is dropped once the change is committed."""
        self._cache = _BYPASS
        self.after_commit(self.store.forget)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run callback once the transaction is committed (in-memory state follows the disk, never leads)."""
        self.on_commit.append(callback)

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        return self._cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cur.executemany(sql, rows)

    def register(self, name: str, frame: pd.DataFrame) -> None:
        self._cur.register(name, frame)

    def unregister(self, name: str) -> None:
        self._cur.unregister(name)

    @contextmanager
    def writing(self) -> Iterator[Tx]:
        """Nested writes join the open transaction."""
        yield self


class Store(_Reader):
    """A DuckDB database file, its image folder, and serialised writes."""

    def __init__(self, path: str | Path, *, data_dir: str | Path | None = None) -> None:
        self.path = Path(path)
        # Images live beside the database, named by content hash (see store/images.py for why).
        self.data_dir = Path(data_dir) if data_dir else self.path.with_name(self.path.name + ".files")
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        self._closed = False
        self.scheduler = Scheduler()
        self.versions = LruCache()  # ItemView by version id: versions are immutable
        # Small read caches (datasets, users, current versions, item order); forget() after structural writes.
        self._cache = ReadCache()
        self._con = self._connect()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._con.close()
            raise StoreOpenError(f"cannot create the image folder {self.data_dir}: {exc.strerror}") from exc
        with self.writing() as tx:
            migrate(tx)

    def _connect(self) -> duckdb.DuckDBPyConnection:
        if not self.path.parent.exists():
            raise StoreOpenError(f"the folder {self.path.parent} does not exist: cannot open {self.path}")
        try:
            return duckdb.connect(str(self.path))
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreLockedError(
                    f"{self.path} is already open in another stepgate process (or another DuckDB "
                    f"client). Stop that process first, or point --db at another file. ({text})"
                ) from exc
            raise StoreOpenError(f"cannot open {self.path}: {text}") from exc

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        if self._closed:
            raise StoreClosedError(f"the store over {self.path} is closed")
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._con.cursor()
            self._local.cursor = cur
            with self._cursors_lock:
                self._cursors.append(cur)
        return cur

    @contextmanager
    def writing(self) -> Iterator[Tx]:
        """One serialised transaction: committed on success, rolled back on any error."""
        with self._write_lock:
            cur = self._cursor()
            outer = getattr(self._local, "tx", None)
            if outer is not None:
                yield outer
                return
            cur.execute("BEGIN TRANSACTION")
            tx = self._local.tx = Tx(cur, self)
            try:
                yield tx
            except BaseException:
                self._local.tx = None
                with suppress(duckdb.Error):
                    cur.execute("ROLLBACK")
                raise
            self._local.tx = None
            try:
                cur.execute("COMMIT")
            except duckdb.Error as exc:
                with suppress(duckdb.Error):
                    cur.execute("ROLLBACK")
                raise StoreOpenError(f"could not commit to {self.path}: {exc}") from exc
            for callback in tx.on_commit:
                callback()

    @property
    def cache(self) -> ReadCache:
        return self._cache

    @property
    def store(self) -> Store:
        """The store itself, as Tx.store is its store: code that takes either reaches the owner alike."""
        return self

    def forget(self) -> None:
        """Drop the read caches: called after a commit that changed datasets, users, items or versions."""
        self._cache.forget()

    def checkpoint(self) -> None:
        with self._write_lock:
            self._cursor().execute("CHECKPOINT")

    def close(self) -> None:
        if self._closed:
            return
        with self._write_lock:
            self._closed = True
            with self._cursors_lock:
                for cur in self._cursors:
                    with suppress(duckdb.Error):
                        cur.close()
                self._cursors.clear()
            self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
