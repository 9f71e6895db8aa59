"""A small thread-safe LRU for immutable rows (item versions never change once written)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

__all__ = ["MISS", "Bypass", "LruCache", "ReadCache", "ReadOnly"]


class LruCache:
    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = capacity
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)


MISS = object()  # what ReadCache.get returns for a key it does not hold (None is a value)


class ReadCache:
    """Small read caches of committed rows (datasets, users, current versions, item order), owned by Store.

    Filled only from reads outside a transaction and dropped after commits that change what they hold
    (Tx.forget_after_commit), so a rolled-back write never leaves a cached row behind. A transaction
    reads through it (committed rows) until it writes rows the cache holds; from then on it bypasses it.
    """

    def __init__(self, max_age: float | None = None) -> None:
        self._data: dict[Any, Any] = {}
        self._lock = threading.Lock()
        # Replicas over PostgreSQL drop what they hold this often: another replica's changes (a role,
        # a removed user, a dataset's settings) never reach its forget().
        self._max_age = max_age
        self._since = time.monotonic()

    def get(self, key: Any) -> Any:
        with self._lock:
            if self._max_age is not None and time.monotonic() - self._since > self._max_age:
                self._data.clear()
                self._since = time.monotonic()
            return self._data.get(key, MISS)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value

    def forget(self) -> None:
        with self._lock:
            self._data.clear()
            self._since = time.monotonic()


class ReadOnly(ReadCache):
    """What a transaction sees before it changes cached rows: committed entries, nothing new kept."""

    def __init__(self, cache: ReadCache) -> None:
        self._cache = cache

    def get(self, key: Any) -> Any:
        return self._cache.get(key)

    def put(self, key: Any, value: Any) -> None:
        return None

    def forget(self) -> None:
        return None


class Bypass(ReadCache):
    """What a transaction sees: every read goes to the database, nothing it reads is kept."""

    def get(self, key: Any) -> Any:
        return MISS

    def put(self, key: Any, value: Any) -> None:
        return None
