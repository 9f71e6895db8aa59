"""A small thread-safe LRU for immutable rows (item versions never change once written)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["LruCache"]


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
