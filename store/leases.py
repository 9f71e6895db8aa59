"""Leases in the database, for several app replicas over one PostgreSQL database: SharedScheduler, the
second implementation of store/assignments.py's Leases protocol (chosen when the app is composed,
services/leasing.py).

On DuckDB one process owns the file, so the in-memory Scheduler (store/assignments.py) is the whole
truth. Replicas each have their own SharedScheduler: its memory still orders the work (started items
first, gold turns, skips), but before an item is leased the database decides whether it has room.
The item's state row is locked with `FOR UPDATE SKIP LOCKED` (a replica claiming the same item at
that moment makes this one move on; an item with no place is let go at once, under a savepoint), the
labels and live leases of others are counted in the same transaction, and the lease is a row of
`assignments` (status 'leased') that every replica sees. So two replicas never hand an item to more
annotators than its target, a label submitted to a replica other than the one that handed out the
item finds its lease, and an annotator who comes back through another replica is handed the item they
hold (held_item), as the same replica would.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING

from store.assignments import Pool, Scheduler

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["SharedScheduler"]

_CURRENT = "JOIN items i ON i.id = a.item_id AND a.version_id = i.current_version_id"
# What fills an open item: others' labels on the current version and others' live leases (a lease
# of someone who has labelled the item is used up), and whether this annotator labelled it.
_FILLED = (
    f"SELECT (SELECT count(DISTINCT a.annotator_id) FROM annotations a {_CURRENT} "
    " WHERE a.item_id = ? AND a.annotator_id <> ?), "
    "(SELECT count(*) FROM assignments l WHERE l.item_id = ? AND l.annotator_id <> ? "
    " AND l.status = 'leased' AND l.expires_at > ? AND NOT EXISTS ("
    f"  SELECT 1 FROM annotations a {_CURRENT} WHERE a.item_id = l.item_id AND a.annotator_id = l.annotator_id) "
    # a study rater's lease takes no place of the gate's (store/assignments.py, taken_by_others)
    " AND NOT EXISTS (SELECT 1 FROM study_assignments sa WHERE sa.item_id = l.item_id "
    "  AND sa.annotator_id = l.annotator_id)), "
    f"EXISTS (SELECT 1 FROM annotations a {_CURRENT} WHERE a.item_id = ? AND a.annotator_id = ?)"
)
_FULL = 1 << 30  # what taken_by_others says of an item it cannot give now
_WAIT_FOR_ROW = 0.25  # seconds a claim waits for an item's row that another transaction holds
_FINGERPRINT_EVERY = 2.0  # seconds between checks that another replica changed a dataset's items


class _ClaimLock:
    """The scheduler's lock, inside a database transaction of this thread's own (or the write
    transaction it is already in): the rows a claim locks stay locked until its lease is written."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.RLock()
        self._local = threading.local()

    @property
    def mutex(self) -> threading.RLock:
        """The lock alone, for what touches memory only (Scheduler.memory_lock): no transaction."""
        return self._lock

    def __enter__(self) -> _ClaimLock:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._local.own = not self._store.in_transaction()
            if self._local.own:
                self._store.execute("BEGIN")
        self._local.depth = depth + 1
        self._lock.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Committed before the lock is released: a thread of this process never meets the row locks
        # of a claim its neighbour has finished.
        try:
            if self._local.depth == 1 and self._local.own:
                self._store.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self._local.depth -= 1
            self._lock.release()


class SharedPool(Pool):
    """A pool whose leases are rows of the database, checked against every replica's work."""

    store: Store

    def has_place(self, item_id: int, annotator_id: int, now: datetime) -> bool:
        """The pool's rule, looked at under a savepoint: an item with no place for this annotator is let
        go at once (rolled back to the savepoint, its row lock goes). A claim holding every row it passed
        over until its commit made the other replicas' claims wait on them in turn, each its own
        replica's scheduler held meanwhile (four replicas and a kill -9: 3.4-3.7 labels a second in about
        one run of two, against 17-20, tests/perf/test_replicas_load.py)."""
        self.store.execute("SAVEPOINT look")
        placed = super().has_place(item_id, annotator_id, now)
        if not placed:
            self.store.execute("ROLLBACK TO SAVEPOINT look")
        return placed

    def taken_by_others(self, item_id: int, annotator_id: int, now: datetime) -> int:
        """Places taken on the item, from the database, its state row locked: this replica's memory
        misses the labels and leases that went through other replicas. The pool's rules (closed, gold,
        skipped) stay the memory's; a place the database cannot give now counts as full."""
        locked = _lock_state(self.store, item_id)
        if locked is None:  # another replica is claiming or settling it right now
            return _FULL
        status, target = locked
        self.target[item_id] = target if status == "open" else 0  # 0: settled by another replica
        # Counted after the lock, in a statement of its own: it sees every claim committed before.
        taken = _taken(self.store, item_id, annotator_id, now)
        if taken is None:  # labelled through another replica
            self.mark_done(item_id, annotator_id)  # done and done_by kept as one
            return _FULL
        return taken

    def live_leases(self, item_id: int, now: datetime) -> dict[int, datetime]:
        """The item's live leases not used up yet, from the database (memory follows it)."""
        rows = self.store.fetchall(
            "SELECT l.annotator_id, l.expires_at FROM assignments l WHERE l.item_id = ? "
            "AND l.status = 'leased' AND l.expires_at > ? AND NOT EXISTS ("
            f"SELECT 1 FROM annotations a {_CURRENT} WHERE a.item_id = l.item_id "
            "AND a.annotator_id = l.annotator_id)",
            [item_id, now],
        )
        live = {int(who): until for who, until in rows}
        for who in set(self.leases.get(item_id, {})) - set(live):
            if self.held.get(who) == item_id:
                del self.held[who]
        self.leases[item_id] = dict(live)
        return self.leases[item_id]

    def held_item(self, dataset_id: int, annotator_id: int, now: datetime) -> int | None:
        """The annotator's live lease in the dataset from the database: one handed out by another
        replica is resumed here as it would be there, and one that ended there is gone here."""
        row = self.store.fetchone(
            "SELECT l.item_id, l.expires_at FROM assignments l WHERE l.annotator_id = ? AND l.dataset_id = ? "
            "AND l.status = 'leased' AND l.expires_at > ? AND NOT EXISTS ("
            f"SELECT 1 FROM annotations a {_CURRENT} WHERE a.item_id = l.item_id "
            "AND a.annotator_id = l.annotator_id) "
            # a study rater's label uses up the lease as a gate label does
            f"AND NOT EXISTS (SELECT 1 FROM study_labels a {_CURRENT} WHERE a.item_id = l.item_id "
            "AND a.annotator_id = l.annotator_id) ORDER BY l.leased_at DESC LIMIT 1",
            [annotator_id, dataset_id, now],
        )
        remembered = self.held.get(annotator_id)
        if row is None:
            if remembered is not None:
                self.leases.get(remembered, {}).pop(annotator_id, None)
                del self.held[annotator_id]
            return None
        item_id = int(row[0])
        if remembered is not None and remembered != item_id:
            self.leases.get(remembered, {}).pop(annotator_id, None)
        self.leases.setdefault(item_id, {})[annotator_id] = row[1]
        self.held[annotator_id] = item_id
        return item_id

    def give_back(self, item_id: int, annotator_id: int) -> None:
        super().give_back(item_id, annotator_id)
        self.store.execute(  # in the claim lock's transaction: no replica resumes it (held_item)
            "DELETE FROM assignments WHERE item_id = ? AND annotator_id = ? AND status = 'leased'",
            [item_id, annotator_id],
        )

    def lease(self, item_id: int, annotator_id: int, now: datetime, seconds: int) -> None:
        super().lease(item_id, annotator_id, now, seconds)
        until = now + timedelta(seconds=seconds)
        # One live lease per annotator and dataset, as in memory: a new claim ends the previous one.
        self.store.execute(
            "DELETE FROM assignments WHERE annotator_id = ? AND status = 'leased' AND item_id <> ? "
            "AND dataset_id = (SELECT dataset_id FROM item_state WHERE item_id = ?)",
            [annotator_id, item_id, item_id],
        )
        self.store.execute(
            "INSERT INTO assignments (item_id, annotator_id, dataset_id, status, leased_at, expires_at, updated_at) "
            "SELECT item_id, ?, dataset_id, 'leased', ?, ?, ? FROM item_state WHERE item_id = ? "
            "ON CONFLICT (item_id, annotator_id) DO UPDATE SET status = 'leased', "
            "leased_at = excluded.leased_at, expires_at = excluded.expires_at, updated_at = excluded.updated_at",
            [annotator_id, now, until, now, item_id],
        )


class SharedScheduler(Scheduler):
    """The Scheduler of one replica over PostgreSQL (see the module's docstring)."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self._store = store
        claim = _ClaimLock(store)
        self.lock = claim  # type: ignore[assignment]
        self.memory_lock = claim.mutex
        self._checked: dict[int, tuple[float, tuple[object, ...]]] = {}

    def new_pool(self) -> Pool:
        pool = SharedPool()
        pool.store = self._store
        return pool

    def pool(self, db: Store | Tx, dataset_id: int) -> Pool:
        """The dataset's pool, reloaded when another replica changed its items, settings or gold."""
        with self.lock:
            now = time.monotonic()
            checked = self._checked.get(dataset_id)
            if checked is None or now - checked[0] > _FINGERPRINT_EVERY:
                mark = _fingerprint(db, dataset_id)
                if checked is not None and checked[1] != mark:
                    self.invalidate(dataset_id)
                self._checked[dataset_id] = (now, mark)
            return super().pool(db, dataset_id)

    def target_of(self, db: Store | Tx, dataset_id: int, item_id: int) -> int | None:
        """From the database: another replica may have raised it (an escalation) or settled the item."""
        value = db.scalar("SELECT target FROM item_state WHERE item_id = ? AND status = 'open'", [item_id])
        return None if value is None else int(value)

    def held_by_others(
        self, db: Store | Tx, dataset_id: int, annotator_id: int, now: datetime
    ) -> tuple[int, datetime | None]:
        """Open items this annotator could take but for others' live leases, on every replica."""
        row = db.fetchone(
            "SELECT count(DISTINCT s.item_id), min(l.expires_at) FROM item_state s "
            "JOIN assignments l ON l.item_id = s.item_id AND l.status = 'leased' AND l.expires_at > ? "
            "AND l.annotator_id <> ? "
            "WHERE s.dataset_id = ? AND s.status = 'open' AND NOT EXISTS ("
            f"SELECT 1 FROM annotations a {_CURRENT} WHERE a.item_id = s.item_id "
            "AND a.annotator_id IN (?, l.annotator_id))",
            [now, annotator_id, dataset_id, annotator_id],
        )
        return (int(row[0]), row[1]) if row else (0, None)

    def may_label(
        self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int, now: datetime
    ) -> str:
        """From the lease rows: the item may have been handed out by another replica, and a lease this
        replica remembers may have ended there (the annotator took another item)."""
        row = db.fetchone(
            "SELECT expires_at FROM assignments WHERE item_id = ? AND annotator_id = ? AND status = 'leased'",
            [item_id, annotator_id],
        )
        if self.study_of(db, dataset_id, item_id, annotator_id) is not None:  # a study rater's own item
            return super().may_label(db, dataset_id, item_id, annotator_id, now)
        if self.is_gold(db, dataset_id, item_id):  # no capacity to run out of
            verdict = super().may_label(db, dataset_id, item_id, annotator_id, now)
            return "leased" if verdict == "leased" or row is not None else verdict
        if row is None:
            return "no"
        if row[0] > now:
            return "leased"
        # Lapsed: its place may have gone to a claim. Counted under the item's state row, which every
        # claim locks before it counts (store/engines.py _WRITE_LOCK): one of them gets the place.
        db.execute("SELECT 1 FROM item_state WHERE item_id = ? FOR UPDATE", [item_id])
        target = self.target_of(db, dataset_id, item_id)
        taken = _taken(db, item_id, annotator_id, now)
        if target is not None and taken is not None and taken < target:
            return "leased"  # it lapsed, but nobody took the place
        return "lapsed"


def _lock_state(db: Store, item_id: int) -> tuple[str, int] | None:
    """Lock the item's state row for this claim: (status, target), or None while another transaction
    holds it past a short wait (a claim elsewhere, or a label being settled). SKIP LOCKED, not a
    blocking lock: a settling submit may wait for this replica's scheduler, which this claim holds."""
    deadline = time.monotonic() + _WAIT_FOR_ROW
    while True:
        row = db.fetchone(
            "SELECT status, target FROM item_state WHERE item_id = ? FOR UPDATE SKIP LOCKED", [item_id]
        )
        if row is not None:
            return str(row[0]), int(row[1])
        if time.monotonic() > deadline:
            return None
        time.sleep(0.005)


def _taken(db: Store | Tx, item_id: int, annotator_id: int, now: datetime) -> int | None:
    """Others' labels and live leases on the item; None when this annotator has labelled it."""
    row = db.fetchone(_FILLED, [item_id, annotator_id, item_id, annotator_id, now, item_id, annotator_id])
    if row is None:  # pragma: no cover - a SELECT without FROM always has a row
        return _FULL
    labelled, leased, mine = row
    return None if mine else int(labelled) + int(leased)


def _fingerprint(db: Store | Tx, dataset_id: int) -> tuple[object, ...]:
    row = db.fetchone(
        "SELECT (SELECT settings FROM datasets WHERE id = ?), "
        "(SELECT count(*) FROM items WHERE dataset_id = ?), "
        "(SELECT max(current_version_id) FROM items WHERE dataset_id = ?), "
        "(SELECT count(*) FROM gold WHERE dataset_id = ?), "
        "(SELECT count(*) FROM study_items si JOIN studies st ON st.id = si.study_id WHERE st.dataset_id = ?), "
        "(SELECT count(*) FROM study_assignments sa JOIN studies st ON st.id = sa.study_id "
        " WHERE st.dataset_id = ?), "
        "(SELECT count(*) FROM study_labels sl JOIN studies st ON st.id = sl.study_id WHERE st.dataset_id = ?)",
        [dataset_id] * 7,
    )
    return tuple(row) if row else ()
