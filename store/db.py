"""The one object that owns the database (after datasette's Database): a DuckDB file, or PostgreSQL.

Gradio runs handlers in a thread pool: every thread reads through its own connection, and every write
runs under one lock inside an explicit transaction that is committed before the caller returns,
so an acknowledged annotation is on disk. What differs between the engines is in store/engines.py.
"""

from __future__ import annotations

import functools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
import pandas as pd

from store.cache import Bypass, LruCache, ReadCache, ReadOnly
from store.engines import Engine, engine_for
from store.errors import (
    StoreClosedError,
    StoreError,
    StoreExclusiveNeeded,
    StoreLockedError,
    StoreOpenError,
    StoreUnavailableError,
)
from store.migrations import migrate
from store.objects import ImageStore, image_store

__all__ = [
    "Store",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreOpenError",
    "StoreUnavailableError",
    "Tx",
    "on_all_cores",
]


@contextmanager
def _engine_errors(engine: Engine) -> Iterator[None]:
    """An engine's exception that means something to callers becomes the store error it means."""
    try:
        yield
    except Exception as exc:
        mapped = engine.translate(exc)
        if mapped is None:
            raise
        raise mapped from exc


class _Reader(ABC):
    """Read helpers shared by Store (autocommit reads) and Tx (reads inside a write)."""

    @abstractmethod
    def _cursor(self) -> Any:
        """The connection (DuckDB: cursor) this reader runs its statements on."""

    @property
    @abstractmethod
    def engine(self) -> Engine:
        """The database engine behind this reader."""

    @property
    @abstractmethod
    def cache(self) -> ReadCache:
        """The read cache this reader may use (a transaction bypasses it)."""

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """Run one statement; the result has fetchall() and description on either engine."""
        with _engine_errors(self.engine):
            return self.engine.run(self._cursor(), sql, params)

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
        with _engine_errors(self.engine):
            return self.engine.df(self._cursor(), sql, params)

    def columns(self, sql: str, params: Sequence[Any] | None = None) -> dict[str, np.ndarray]:
        """The result as one NumPy array per column (large id lists: no row tuples)."""
        with _engine_errors(self.engine):
            return self.engine.columns(self._cursor(), sql, params)

    def df_chunks(self, sql: str, params: Sequence[Any] | None, rows: int) -> Iterator[pd.DataFrame]:
        """The result in frames of about `rows` rows, read as they are asked for (a whole export).
        Between two frames the caller must not use this thread's cursor on DuckDB."""
        with _engine_errors(self.engine):
            yield from self.engine.df_chunks(self._cursor(), sql, params, rows)

    @contextmanager
    def reading_frame(self, name: str, frame: pd.DataFrame) -> Iterator[_Reader]:
        """Let SQL join against a data frame (a list of ids, say) for the length of a block."""
        cur = self._cursor()
        self.engine.register(cur, name, frame)
        try:
            yield self
        finally:
            self.engine.unregister(cur, name)


_BYPASS = Bypass()


class Tx(_Reader):
    """A write transaction: reads inside it see its own uncommitted writes."""

    def __init__(self, cursor: Any, store: Store, shared: bool = False) -> None:
        self._cur = cursor
        self.store = store
        self.shared = shared  # a label's transaction beside others (Store.writing(shared=True))
        self.item: int | None = None  # the item a shared transaction holds the lock of
        self.on_commit: list[Callable[[], None]] = []
        self.on_finish: list[Callable[[], object]] = []
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

    def changed(self, dataset_id: int | None = None) -> None:
        """This transaction changed a dataset's items, settings, gold or studies (None: any dataset):
        once it is committed, the store tells whoever listens (the leases reload that dataset's pool)."""
        self.after_commit(lambda: self.store.announce(dataset_id))

    def before_commit(self, callback: Callable[[], object]) -> None:
        """Run callback when the work is done, before the commit; if it raises, nothing is committed
        (images uploaded in parallel are waited for here: no row names an object not yet stored)."""
        self.on_finish.append(callback)

    def require_exclusive(self) -> None:
        """What comes next must not run beside other writers: a shared transaction stops here (raises
        StoreExclusiveNeeded; rolled back, its caller runs it again exclusively); an exclusive one goes on."""
        if self.shared:
            raise StoreExclusiveNeeded("this write must run exclusively: run it again with shared=False")

    @property
    def engine(self) -> Engine:
        return self.store.engine

    def _cursor(self) -> Any:
        return self._cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with _engine_errors(self.engine):
                self.engine.executemany(self._cur, sql, rows)

    def register(self, name: str, frame: Any) -> None:
        """A pandas or Arrow frame joinable by name until unregister (PostgreSQL: a temporary table)."""
        self.engine.register(self._cur, name, frame)

    def unregister(self, name: str) -> None:
        self.engine.unregister(self._cur, name)

    @contextmanager
    def writing(self) -> Iterator[Tx]:
        """Nested writes join the open transaction."""
        yield self


class Store(_Reader):
    """A database (a DuckDB file, or PostgreSQL at a postgresql:// URL), its image folder, serialised writes."""

    def __init__(
        self, path: str | Path, *, data_dir: str | Path | None = None, images: str | None = None
    ) -> None:
        self._engine = engine_for(path)
        self.location = self._engine.location
        self.path: Path | None = self._engine.file  # the database's file (DuckDB); None over a server
        # Images live beside a database file, named by content hash (see store/images.py for why);
        # replicas over a server share the folder they are given (default: ./stepgate.files).
        if data_dir:
            self.data_dir = Path(data_dir)
        elif self.path is not None:
            self.data_dir = self.path.with_name(self.path.name + ".files")
        else:
            self.data_dir = Path("stepgate.files").absolute()
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._cursors: list[Any] = []
        self._cursors_lock = threading.Lock()
        self._closed = False
        self.versions = LruCache()  # ItemView by version id: versions are immutable
        # Who is told after a commit that changed a dataset (Tx.changed): the leases composed with this
        # store (services/leasing.py); the store itself knows nothing of them.
        self._listeners: list[Callable[[int | None], None]] = []
        # Small read caches (datasets, users, current versions, item order); forget() after structural writes.
        self._cache = ReadCache(max_age=self._engine.cache_seconds)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._engine.close()
            raise StoreOpenError(f"cannot create the image folder {self.data_dir}: {exc.strerror}") from exc
        # Where image bytes go: the folder data_dir/images, or object storage (`images`: s3://...).
        try:
            self.images: ImageStore = image_store(images, self.data_dir)
        except StoreError:
            self._engine.close()
            raise
        with self.writing() as tx:
            self._engine.prepare(tx._cursor())
            migrate(tx)

    @property
    def engine(self) -> Engine:
        return self._engine

    def in_transaction(self) -> bool:
        """This thread is inside writing()."""
        return getattr(self._local, "tx", None) is not None

    def _cursor(self) -> Any:
        if self._closed:
            raise StoreClosedError(f"the store over {self.location} is closed")
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._engine.connection()
            self._local.cursor = cur
            with self._cursors_lock:
                self._cursors.append(cur)
        return cur

    @contextmanager
    def writing(self, *, shared: bool = False, item: int | None = None) -> Iterator[Tx]:
        """One serialised transaction: committed on success, rolled back on any error.

        `shared`: a label's transaction (services/annotate._submit, a skip). Over PostgreSQL it runs
        beside other shared ones, in this process and others, and never beside an exclusive one
        (store/engines.py `_WRITE_LOCK` says which rule is then held where); what it must not do shared
        raises StoreExclusiveNeeded (Tx.require_exclusive) for its caller to run it again exclusively.
        `item`: the one item a shared write labels, locked with BEGIN against every other shared write on
        it (store/state.locked_state reads its state under that lock).
        On DuckDB (one process) every write is exclusive, as before."""
        shared = shared and not self._engine.exclusive
        outer = getattr(self._local, "tx", None)
        if outer is not None:
            if outer.shared and not shared:
                outer.require_exclusive()  # an exclusive write nested in a shared one: run it all again
            yield outer
            return
        # A shared write waits for no other thread of this process: the database serialises what must be.
        with nullcontext() if shared else self._write_lock:
            cur = self._cursor()
            with _engine_errors(self._engine):
                self._engine.begin(cur, shared, item if shared else None)
            tx = self._local.tx = Tx(cur, self, shared)
            tx.item = item if shared else None
            try:
                yield tx
                for finish in tx.on_finish:
                    finish()
            except BaseException:
                self._local.tx = None
                self._engine.rollback(cur)
                raise
            self._local.tx = None
            try:
                self._engine.commit(cur)
            except Exception as exc:
                self._engine.rollback(cur)
                raise StoreOpenError(f"could not commit to {self.location}: {exc}") from exc
            for callback in tx.on_commit:
                callback()

    @property
    def cache(self) -> ReadCache:
        return self._cache

    def listen(self, callback: Callable[[int | None], None]) -> None:
        """Call back with a dataset's id after each commit that changed it (None: any dataset)."""
        if callback not in self._listeners:
            self._listeners.append(callback)

    def announce(self, dataset_id: int | None = None) -> None:
        """Tell the listeners that a dataset changed (Tx.changed does, after its commit)."""
        for callback in list(self._listeners):
            callback(dataset_id)

    @property
    def store(self) -> Store:
        """The store itself, as Tx.store is its store: code that takes either reaches the owner alike."""
        return self

    def forget(self) -> None:
        """Drop the read caches: called after a commit that changed datasets, users, items or versions."""
        self._cache.forget()

    def analyze(self, tables: Sequence[str]) -> None:
        """After a bulk write, outside its transaction: the planner's statistics (PostgreSQL)."""
        self._engine.analyze(self._cursor(), tables)

    @contextmanager
    def all_cores(self) -> Iterator[None]:
        """Work over a whole dataset inside (an import, an export, a report): the database may use every
        core for it, where a label's few rows run on the calling thread (store/engines.py DuckDBEngine)."""
        with self._engine.all_cores():
            yield

    def checkpoint(self) -> None:
        with self._write_lock:
            self._engine.checkpoint(self._cursor())

    def close(self) -> None:
        if self._closed:
            return
        with self._write_lock:
            self._closed = True
            with self._cursors_lock:
                for cur in self._cursors:
                    self._engine.close_connection(cur)
                self._cursors.clear()
            self._engine.close()
        self.images.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def on_all_cores(use_case: Callable[Concatenate[Store, _P], _R]) -> Callable[Concatenate[Store, _P], _R]:
    """A use case over a whole dataset (a reviewer's search, report or figures; its first argument the
    store) runs with the database's every core, as Store.all_cores() says."""

    @functools.wraps(use_case)
    def on_every_core(store: Store, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with store.all_cores():
            return use_case(store, *args, **kwargs)

    return on_every_core
