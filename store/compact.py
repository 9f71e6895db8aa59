"""A dataset's open items and their targets in flat arrays, for the scheduler's pool (store/assignments.py).

A dict of a million item ids to targets holds a million Python ints and dict slots, about 100 bytes an
item (82 MB at 1M items, and 165 MB at the peak of building it from a list of row tuples). Here the
ids are one sorted array of 8-byte ints and the targets one array of 4-byte ints beside it (12 bytes an
item), read from DuckDB as NumPy columns, never as Python tuples. Lookups bisect the sorted ids.
"""

from __future__ import annotations

import bisect
import hashlib
import operator
from array import array
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["OpenTargets", "load_open_targets", "seeded_order"]

_GONE = -1  # the slot of an item no longer open (settled, or popped by the pool)


class OpenTargets(MutableMapping[int, int]):
    """item id -> target, like the dict it replaces (same answers to in, [], get, pop, items, len).

    The ids loaded at first are fixed and sorted; an item closed since keeps its slot, marked gone.
    An id set that was not loaded (none today: new items reload the pool) goes to a small dict.
    """

    def __init__(self, ids: array, targets: array) -> None:
        if len(ids) != len(targets):  # pragma: no cover - built only by load_open_targets
            raise ValueError("ids and targets differ in length")
        self.ids = ids  # ascending; also the pool's hand-out order
        self._targets = targets
        self._extra: dict[int, int] = {}
        self._len = sum(1 for t in targets if t != _GONE) if _GONE in targets else len(targets)

    def _slot(self, item_id: int) -> int:
        i = bisect.bisect_left(self.ids, item_id)
        return i if i < len(self.ids) and self.ids[i] == item_id else -1

    def __contains__(self, item_id: object) -> bool:
        try:
            item_id = operator.index(item_id)  # type: ignore[arg-type]
        except TypeError:
            return False
        i = self._slot(item_id)
        return self._targets[i] != _GONE if i >= 0 else item_id in self._extra

    def __getitem__(self, item_id: int) -> int:
        i = self._slot(item_id)
        if i >= 0:
            target = self._targets[i]
            if target == _GONE:
                raise KeyError(item_id)
            return target
        return self._extra[item_id]

    def get(self, item_id: int, default=None):  # type: ignore[no-untyped-def, override]
        try:
            return self[item_id]
        except KeyError:
            return default

    def __setitem__(self, item_id: int, target: int) -> None:
        if target < 0:
            raise ValueError(f"a target is a count of annotators, not {target}")
        i = self._slot(item_id)
        if i < 0:
            self._extra[item_id] = target
            return
        if self._targets[i] == _GONE:
            self._len += 1
        self._targets[i] = target

    def __delitem__(self, item_id: int) -> None:
        i = self._slot(item_id)
        if i >= 0 and self._targets[i] != _GONE:
            self._targets[i] = _GONE
            self._len -= 1
        else:
            del self._extra[item_id]

    def __iter__(self) -> Iterator[int]:
        targets = self._targets
        for i, item_id in enumerate(self.ids):
            if targets[i] != _GONE:
                yield item_id
        yield from list(self._extra)

    def __len__(self) -> int:
        return self._len + len(self._extra)


def load_open_targets(db: Store | Tx, dataset_id: int) -> OpenTargets:
    """The dataset's open items (ascending id) with their targets, straight from NumPy columns."""
    columns = db.columns(
        "SELECT item_id, target FROM item_state WHERE dataset_id = ? AND status = 'open' ORDER BY item_id",
        [dataset_id],
    )
    ids, targets = array("q"), array("i")
    ids.frombytes(np.ascontiguousarray(columns["item_id"], dtype=np.int64).tobytes())
    targets.frombytes(np.ascontiguousarray(columns["target"], dtype=np.int32).tobytes())
    return OpenTargets(ids, targets)


def seeded_order(ids: array, dataset_id: int) -> array:
    """The ids sorted by sha256(f"order:{dataset_id}:{id}"), as ``sorted(ids, key=digest)`` orders
    them, holding 32 bytes of digest an item instead of a Python bytes object and int (~100 bytes)."""
    digests = bytearray(32 * len(ids))
    for k, item_id in enumerate(ids):
        digests[32 * k : 32 * k + 32] = hashlib.sha256(f"order:{dataset_id}:{item_id}".encode()).digest()
    words = np.frombuffer(digests, dtype=">u8").reshape(-1, 4)  # big-endian: compares as the bytes do
    by_digest = np.lexsort((words[:, 3], words[:, 2], words[:, 1], words[:, 0]))
    return array("q", np.asarray(ids, dtype=np.int64)[by_digest].tobytes())
