"""Who works on what: leases that expire, so an abandoned item returns to the pool.

Leases are one protocol (Leases) with two implementations, chosen when the app is composed
(services/leasing.py) and handed to the services; the Store knows neither, and only tells them after
a commit that a dataset changed (Store.listen, Tx.changed). Here, Scheduler: leases in memory, for
one process over a DuckDB file (the file lock guarantees there is one), rebuilt from the annotation
log on demand: a lease is a promise of seconds, not data, so after a crash every lease has simply
expired and its item is back in the pool. What is done comes from the log itself; skips are stored.
Claims and the gate's capacity check run under the scheduler's lock, so many annotators asking at
the same moment never push an item past its target, and no annotator gets an item twice. For
several replicas over PostgreSQL, store/leases.py's SharedScheduler keeps the leases in the database.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import filterfalse
from typing import TYPE_CHECKING, Any, Protocol

from store.annotations import RULING
from store.cache import MISS
from store.compact import load_open_targets, seeded_order
from store.datasets import get_dataset

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["Claim", "Leases", "Pool", "Scheduler", "progress"]


@dataclass(frozen=True)
class Claim:
    item_id: int
    resumed: bool  # True when the annotator already held this lease


class Leases(Protocol):
    """Who holds which item of a dataset until when, and what an annotator is given next.

    Two implementations: Scheduler (in memory; one process over DuckDB) and store/leases.py's
    SharedScheduler (lease rows in the database; replicas over PostgreSQL). The after-commit
    records (record_done, record_gold, record_study) follow a committed label; invalidate reloads a
    dataset's pool after its items, settings, gold or studies changed.
    """

    def claim_next(
        self, db: Store | Tx, annotator_id: int, dataset_id: int, *, lease_seconds: int, now: datetime
    ) -> Claim | None:
        """The annotator's live lease if any, else the next open item with room, leased to them."""

    def claim_item(
        self,
        db: Store | Tx,
        annotator_id: int,
        item_id: int,
        dataset_id: int,
        *,
        lease_seconds: int,
        now: datetime,
    ) -> str:
        """Jump to one item: 'done', 'leased', 'full' or 'closed'."""

    def release(self, db: Store, annotator_id: int, item_id: int, dataset_id: int, now: datetime) -> None:
        """Skip: the item goes back to the pool for everyone else; the skip is remembered."""

    def invalidate(self, dataset_id: int | None = None) -> None:
        """Reload a dataset's pool (None: every pool) after its items or settings changed."""

    def upcoming(self, db: Store | Tx, dataset_id: int, after_item: int, n: int) -> list[int]:
        """The next open items after this one in hand-out order (for prefetching)."""

    def target_of(self, db: Store | Tx, dataset_id: int, item_id: int) -> int | None:
        """An open item's current target (None when the item is settled or unknown)."""

    def labelled_by(self, db: Store | Tx, dataset_id: int, annotator_id: int) -> int:
        """How many items of the dataset this annotator has labelled."""

    def holds(self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int, now: datetime) -> bool:
        """The annotator holds this item now."""

    def may_label(
        self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int, now: datetime
    ) -> str:
        """'leased', 'lapsed' or 'no': may this annotator's label on the item be stored."""

    def held_by_others(
        self, db: Store | Tx, dataset_id: int, annotator_id: int, now: datetime
    ) -> tuple[int, datetime | None]:
        """Items this annotator could take but for others' live leases, and when the first runs out."""

    def record_done(
        self, dataset_id: int, item_id: int, annotator_id: int, *, target: int, open_: bool, first_label: bool
    ) -> None:
        """After a committed label: the item's new target, or its removal once settled."""

    def is_gold(self, db: Store | Tx, dataset_id: int, item_id: int) -> bool:
        """The item is a gold item of the dataset."""

    def record_gold(self, dataset_id: int, item_id: int, annotator_id: int, *, first_label: bool) -> None:
        """After a committed answer on a gold item."""

    def study_of(self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int) -> int | None:
        """The study this annotator rates this item for, or None."""

    def record_study(self, dataset_id: int, item_id: int, annotator_id: int, *, first_label: bool) -> None:
        """After a committed study label."""


@dataclass
class Pool:
    """One dataset's open items: targets, who has done each, live leases, skips."""

    target: dict[int, int] = field(default_factory=dict)
    done: dict[int, set[int]] = field(default_factory=dict)
    # annotator -> open items they have done (done's inverse, kept by mark_done): the next item skips
    # them at C speed, where checking each started item cost an annotator ~1 us per item they labelled
    done_by: dict[int, set[int]] = field(default_factory=dict)
    leases: dict[int, dict[int, datetime]] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)  # annotator -> item under a lease
    skipped: dict[int, dict[int, datetime]] = field(default_factory=dict)  # annotator -> item -> when
    order: list[int] = field(default_factory=list)  # open items, ascending id
    started: dict[int, None] = field(default_factory=dict)  # items someone has touched, in start order
    mine: dict[int, int] = field(default_factory=dict)  # annotator -> items labelled (loaded on demand)
    lapsed: dict[int, set[int]] = field(default_factory=dict)  # item -> annotators whose lease expired
    next_fresh: int = 0
    # gold items (store/gold.py): handed to a share of each annotator's claims, outside the targets
    gold: set[int] = field(default_factory=set)
    gold_share: float = 0.0
    gold_seen: dict[int, set[int]] = field(default_factory=dict)  # annotator -> gold items labelled
    claims: dict[int, int] = field(default_factory=dict)  # annotator -> fresh claims so far
    # With gold on, fresh items go out in a seeded shuffle: in id order, a gold item (often settled
    # long ago) would stand out by its id.
    fresh_order: list[int] = field(default_factory=list)
    # agreement studies (store/studies.py): each rater's assigned study items, outside the targets;
    # pending: annotator -> item -> study, in draw order, until the rater's label is in
    study_pending: dict[int, dict[int, int]] = field(default_factory=dict)
    study_assigned: dict[tuple[int, int], int] = field(default_factory=dict)  # (annotator, item) -> study
    study_skipped: dict[int, set[int]] = field(default_factory=dict)  # annotator -> study items skipped

    def live_leases(self, item_id: int, now: datetime) -> dict[int, datetime]:
        leases = self.leases.get(item_id)
        if not leases:
            return {}
        for who in [w for w, until in leases.items() if until <= now]:
            del leases[who]
            self.lapsed.setdefault(item_id, set()).add(who)
            if self.held.get(who) == item_id:
                del self.held[who]
        return leases

    def taken_by_others(self, item_id: int, annotator_id: int, now: datetime) -> int:
        done = self.done.get(item_id, set())
        live = self.live_leases(item_id, now)
        # a study rater's lease on an item open in the gate (a pilot study) takes no place of the gate's
        return len(done - {annotator_id}) + sum(
            1 for w in live if w != annotator_id and w not in done and (w, item_id) not in self.study_assigned
        )

    def eligible(
        self, item_id: int, annotator_id: int, now: datetime, *, allow_skipped: bool = False
    ) -> bool:
        if item_id not in self.target or annotator_id in self.done.get(item_id, ()):
            return False
        if item_id in self.gold:  # handed out only on a gold turn
            return False
        if (annotator_id, item_id) in self.study_assigned:  # theirs to rate in a study, not to gate
            return False
        if not allow_skipped and item_id in self.skipped.get(annotator_id, {}):
            return False
        return self.has_place(item_id, annotator_id, now)

    def has_place(self, item_id: int, annotator_id: int, now: datetime) -> bool:
        """A place left on the item for this annotator: fewer taken by others than its target."""
        return self.taken_by_others(item_id, annotator_id, now) < self.target[item_id]

    def lease(self, item_id: int, annotator_id: int, now: datetime, seconds: int) -> None:
        previous = self.held.get(annotator_id)
        if previous is not None and previous != item_id:
            self.leases.get(previous, {}).pop(annotator_id, None)
        self.leases.setdefault(item_id, {})[annotator_id] = now + timedelta(seconds=seconds)
        self.held[annotator_id] = item_id
        if item_id not in self.gold and (annotator_id, item_id) not in self.study_assigned:
            self.started.setdefault(item_id, None)

    def held_item(self, dataset_id: int, annotator_id: int, now: datetime) -> int | None:
        """The item this annotator holds a lease on, if any (store/leases.py: on any replica)."""
        return self.held.get(annotator_id)

    def give_back(self, item_id: int, annotator_id: int) -> None:
        """A lease ended without a label (a study item skipped: it stays theirs, for later)."""
        self.leases.get(item_id, {}).pop(annotator_id, None)
        if self.held.get(annotator_id) == item_id:
            del self.held[annotator_id]

    def end_lease(self, item_id: int, annotator_id: int, first_label: bool) -> None:
        """After a committed label: the lease is used up (and a first label counts as theirs)."""
        if first_label and annotator_id in self.mine:
            self.mine[annotator_id] += 1
        self.leases.get(item_id, {}).pop(annotator_id, None)
        self.lapsed.get(item_id, set()).discard(annotator_id)
        if self.held.get(annotator_id) == item_id:
            del self.held[annotator_id]

    def gold_turn(self, dataset_id: int, annotator_id: int) -> int | None:
        """A gold item for this claim, or None: a seeded draw per (annotator, claim) at the dataset's
        share, so no count or rhythm tells; each annotator meets the gold items in their own order."""
        if self.gold_share <= 0 or not self.gold:
            return None
        turn = self.claims.get(annotator_id, 0)
        draw = hashlib.sha256(f"gold:{dataset_id}:{annotator_id}:{turn}".encode()).digest()
        if int.from_bytes(draw[:8], "big") / 2**64 >= self.gold_share:
            return None
        seen = self.gold_seen.get(annotator_id, set()) | set(self.skipped.get(annotator_id, {}))
        fresh = [i for i in self.gold if i not in seen and annotator_id not in self.done.get(i, ())]
        if not fresh:
            return None
        return min(fresh, key=lambda i: hashlib.sha256(f"{annotator_id}:{i}".encode()).digest())

    def study_turn(self, annotator_id: int, *, skipped: bool = False) -> int | None:
        """The rater's next study item (their assignments in draw order), before any other work:
        a study's batch waits for its last label, and after the gate is done a study is all there is.
        Items they skipped come back only when ``skipped`` (after their other work)."""
        pending = self.study_pending.get(annotator_id)
        if not pending:
            return None
        passed = self.study_skipped.get(annotator_id, set())
        for item_id in pending:
            if (item_id in passed) == skipped:
                return item_id
        return None

    def mark_done(self, item_id: int, annotator_id: int) -> None:
        self.done.setdefault(item_id, set()).add(annotator_id)
        self.done_by.setdefault(annotator_id, set()).add(item_id)

    def close(self, item_id: int) -> None:
        self.target.pop(item_id, None)
        for who in self.done.pop(item_id, ()):
            self.done_by.get(who, set()).discard(item_id)
        self.started.pop(item_id, None)
        for who in self.leases.pop(item_id, {}):
            if self.held.get(who) == item_id:
                del self.held[who]


class Scheduler:
    """Leases in memory for one Store (the Leases protocol); loads a dataset's pool from the log when
    first asked."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        # What only touches memory (after a commit): the same mutex, without the database transaction
        # the replicas' lock opens around a claim (store/leases.py: a BEGIN and a COMMIT a label saved)
        self.memory_lock: Any = self.lock
        self._pools: dict[int, Pool] = {}
        self._stale: dict[int, Pool] = {}

    def pool(self, db: Store | Tx, dataset_id: int) -> Pool:
        with self.lock:
            pool = self._pools.get(dataset_id)
            if pool is None:
                pool = self._pools[dataset_id] = _load_pool(db, dataset_id, self.new_pool())
                stale = self._stale.pop(dataset_id, None)
                if stale is not None:
                    _carry_leases(stale, pool)
            return pool

    def new_pool(self) -> Pool:
        """An empty pool (store/leases.py's replicas keep their leases in the database)."""
        return Pool()

    def invalidate(self, dataset_id: int | None = None) -> None:
        """Reload a pool from the log after items or settings changed; live leases carry over."""
        with self.lock:
            for key in list(self._pools) if dataset_id is None else [dataset_id]:
                if key in self._pools:
                    self._stale[key] = self._pools.pop(key)

    def upcoming(self, db: Store | Tx, dataset_id: int, after_item: int, n: int) -> list[int]:
        """The next open items after this one in hand-out order (for prefetching)."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            if pool.fresh_order:  # gold on: the shuffled order and the gold items come next, so
                # a gold item is as likely to be loaded already as any other (no slower reply)
                ahead = pool.fresh_order[pool.next_fresh : pool.next_fresh + 2 * n]
                fresh = [i for i in ahead if i in pool.target and i not in pool.gold]
                return fresh[: max(1, n // 2)] + sorted(pool.gold)[: n - max(1, n // 2)]
            start = bisect.bisect_right(pool.order, after_item)
            return [i for i in pool.order[start : start + 2 * n] if i in pool.target][:n]

    def target_of(self, db: Store | Tx, dataset_id: int, item_id: int) -> int | None:
        """An open item's current target (None when the item is settled or unknown)."""
        with self.lock:
            return self.pool(db, dataset_id).target.get(item_id)

    def labelled_by(self, db: Store | Tx, dataset_id: int, annotator_id: int) -> int:
        """How many items of the dataset this annotator has labelled, at any version: a count over current
        versions would drop when another annotator's verdict makes a new version (a blind leak). A ruling
        is not a label (services.annotate counts a first label on an item the same way)."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            if annotator_id not in pool.mine:
                pool.mine[annotator_id] = int(
                    db.scalar(
                        "SELECT count(DISTINCT a.item_id) FROM annotations a "
                        "WHERE a.dataset_id = ? AND a.annotator_id = ? AND a.task <> ?",
                        [dataset_id, annotator_id, RULING],
                    )
                ) + int(  # and their study items (each counts once per study)
                    db.scalar(
                        "SELECT count(*) FROM study_assignments a JOIN studies st ON st.id = a.study_id "
                        "WHERE st.dataset_id = ? AND a.annotator_id = ? AND EXISTS (SELECT 1 FROM study_labels l "
                        "WHERE l.study_id = a.study_id AND l.item_id = a.item_id AND l.annotator_id = a.annotator_id)",
                        [dataset_id, annotator_id],
                    )
                )
            return pool.mine[annotator_id]

    def holds(self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int, now: datetime) -> bool:
        """The annotator holds this item: a live lease, or one that lapsed with nobody taking their place."""
        return self.may_label(db, dataset_id, item_id, annotator_id, now) == "leased"

    def may_label(
        self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int, now: datetime
    ) -> str:
        """'leased' (a live lease, or a lapsed one whose place is still free), 'lapsed' (it expired and
        others filled the item), or 'no' (the item was never handed to this annotator)."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            if item_id in pool.study_pending.get(annotator_id, {}):  # assigned to them: no capacity to lose
                return "leased"
            if item_id in pool.gold:  # no capacity to run out of: a lapsed lease may still answer
                if item_id in pool.gold_seen.get(annotator_id, ()):
                    return "no"
                live = annotator_id in pool.live_leases(item_id, now)
                return "leased" if live or annotator_id in pool.lapsed.get(item_id, ()) else "no"
            if item_id not in pool.target:
                return "lapsed" if annotator_id in pool.lapsed.get(item_id, ()) else "no"
            if annotator_id in pool.live_leases(item_id, now):
                return "leased"
            if annotator_id not in pool.lapsed.get(item_id, ()):
                return "no"
            if pool.has_place(item_id, annotator_id, now):
                return "leased"
            return "lapsed"

    def held_by_others(
        self, db: Store | Tx, dataset_id: int, annotator_id: int, now: datetime
    ) -> tuple[int, datetime | None]:
        """Open items this annotator could take but for others' live leases: how many, and when the
        first lease runs out (the item returns to the pool then, unless it is labelled first)."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            count, first = 0, None
            # only items under a lease can be held by others: not a walk over every open item
            for item_id in list(pool.leases):
                target = pool.target.get(item_id)
                if target is None or annotator_id in pool.done.get(item_id, ()):
                    continue
                live = pool.live_leases(item_id, now)
                others = {w: t for w, t in live.items() if w != annotator_id}
                if not others or len(pool.done.get(item_id, set()) - {annotator_id}) >= target:
                    continue
                count += 1
                soonest = min(others.values())
                first = soonest if first is None or soonest < first else first
            return count, first

    def record_done(
        self, dataset_id: int, item_id: int, annotator_id: int, *, target: int, open_: bool, first_label: bool
    ) -> None:
        """After a committed submit: the item's new target, or its removal from the pool once settled."""
        with self.memory_lock:
            pool = self._pools.get(dataset_id)
            if pool is None:
                return
            pool.end_lease(item_id, annotator_id, first_label)
            if open_:
                pool.target[item_id] = target
                pool.mark_done(item_id, annotator_id)
                pool.started.setdefault(item_id, None)
            else:
                pool.close(item_id)

    def is_gold(self, db: Store | Tx, dataset_id: int, item_id: int) -> bool:
        with self.lock:
            return item_id in self.pool(db, dataset_id).gold

    def record_gold(self, dataset_id: int, item_id: int, annotator_id: int, *, first_label: bool) -> None:
        """After a committed answer on a gold item: the lease ends; the item's target is untouched."""
        with self.memory_lock:
            pool = self._pools.get(dataset_id)
            if pool is None:
                return
            pool.end_lease(item_id, annotator_id, first_label)
            pool.gold_seen.setdefault(annotator_id, set()).add(item_id)

    def study_of(self, db: Store | Tx, dataset_id: int, item_id: int, annotator_id: int) -> int | None:
        """The study this annotator rates this item for (a label of theirs on it goes there), or None."""
        with self.lock:
            return self.pool(db, dataset_id).study_assigned.get((annotator_id, item_id))

    def record_study(self, dataset_id: int, item_id: int, annotator_id: int, *, first_label: bool) -> None:
        """After a committed study label: the lease ends and the assignment is done."""
        with self.memory_lock:
            pool = self._pools.get(dataset_id)
            if pool is None:
                return
            pool.end_lease(item_id, annotator_id, first_label)
            pool.study_pending.get(annotator_id, {}).pop(item_id, None)
            pool.study_skipped.get(annotator_id, set()).discard(item_id)

    def claim_next(
        self, db: Store | Tx, annotator_id: int, dataset_id: int, *, lease_seconds: int, now: datetime
    ) -> Claim | None:
        """The annotator's live lease if any, else the next open item with room, leased to them.

        Items already started come first, so that escalations (a 4th, a 5th annotator) settle soonest.
        While there is such an item, a share of claims (``gold_percent``) takes a gold item instead:
        never once the annotator's other work is done, which would single the gold item out.
        """
        with self.lock:
            pool = self.pool(db, dataset_id)
            held = pool.held_item(dataset_id, annotator_id, now)
            if held is not None and annotator_id in pool.live_leases(held, now):
                return Claim(held, resumed=True)
            study_item = pool.study_turn(annotator_id)
            if study_item is not None:
                pool.lease(study_item, annotator_id, now, lease_seconds)
                return Claim(study_item, resumed=False)
            item_id = _next_open(pool, annotator_id, now)
            if item_id is None:
                study_item = pool.study_turn(annotator_id, skipped=True)  # what they skipped, last
                if study_item is not None:
                    pool.lease(study_item, annotator_id, now, lease_seconds)
                    return Claim(study_item, resumed=False)
                return None
            gold = pool.gold_turn(dataset_id, annotator_id)
            pool.claims[annotator_id] = pool.claims.get(annotator_id, 0) + 1
            pool.lease(gold if gold is not None else item_id, annotator_id, now, lease_seconds)
            return Claim(gold if gold is not None else item_id, resumed=False)

    def claim_item(
        self,
        db: Store | Tx,
        annotator_id: int,
        item_id: int,
        dataset_id: int,
        *,
        lease_seconds: int,
        now: datetime,
    ) -> str:
        """Jump to one item: 'done' (theirs to review or correct), 'leased', 'full' or 'closed'."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            if annotator_id in pool.done.get(item_id, ()):
                return "done"
            if item_id in pool.study_pending.get(annotator_id, {}):  # their study item opens like any
                pool.lease(item_id, annotator_id, now, lease_seconds)
                return "leased"
            if item_id in pool.gold and annotator_id in pool.live_leases(item_id, now):
                return "leased"  # the gold item they hold opens like any item they hold
            if item_id not in pool.target:
                return "done" if annotator_id in _done_annotators(db, item_id) else "closed"
            if annotator_id in pool.live_leases(item_id, now):
                return "leased"
            if not pool.eligible(item_id, annotator_id, now, allow_skipped=True):
                return "full"
            pool.lease(item_id, annotator_id, now, lease_seconds)
            return "leased"

    def release(self, db: Store, annotator_id: int, item_id: int, dataset_id: int, now: datetime) -> None:
        """Skip: the item goes back to the pool for everyone else at once; the skip is remembered."""
        with self.lock:
            pool = self.pool(db, dataset_id)
            if item_id in pool.study_pending.get(annotator_id, {}):
                # a skipped study item stays theirs: it comes back after their other work
                pool.give_back(item_id, annotator_id)
                pool.study_skipped.setdefault(annotator_id, set()).add(item_id)
                return
        # shared (store/engines.py _WRITE_LOCK): one upsert of the (item, annotator) row, read by nothing first
        with db.writing(shared=True) as tx:
            tx.execute(
                "INSERT INTO assignments (item_id, annotator_id, dataset_id, status, leased_at, expires_at, updated_at) "
                "VALUES (?, ?, ?, 'skipped', ?, ?, ?) ON CONFLICT (item_id, annotator_id) DO UPDATE SET "
                "status = 'skipped', updated_at = excluded.updated_at",
                [item_id, annotator_id, dataset_id, now, now, now],
            )
        with self.lock:
            pool = self.pool(db, dataset_id)
            pool.leases.get(item_id, {}).pop(annotator_id, None)
            if pool.held.get(annotator_id) == item_id:
                del pool.held[annotator_id]
            pool.skipped.setdefault(annotator_id, {})[item_id] = now
            pool.started.setdefault(item_id, None)


def _carry_leases(old: Pool, new: Pool) -> None:
    for who, skipped in old.study_skipped.items():
        new.study_skipped[who] = {i for i in skipped if i in new.study_pending.get(who, {})}
    for item_id, leases in old.leases.items():
        for who, until in leases.items():
            if item_id in new.study_pending.get(who, {}):  # a study item in hand stays in hand
                new.leases.setdefault(item_id, {})[who] = until
                new.held[who] = item_id
        if item_id in new.target:
            for who, until in leases.items():
                if who not in new.done.get(item_id, ()):
                    new.leases.setdefault(item_id, {})[who] = until
                    new.held[who] = item_id
                    new.started.setdefault(item_id, None)


def _done_annotators(db: Store | Tx, item_id: int) -> set[int]:
    rows = db.fetchall(
        "SELECT DISTINCT annotator_id FROM annotations WHERE item_id = ?",  # every version: theirs stays theirs
        [item_id],
    )
    return {r[0] for r in rows}


def _load_pool(db: Store | Tx, dataset_id: int, pool: Pool) -> Pool:
    # flat arrays, not a dict and a list of Python ints: ~12 bytes an open item instead of ~140
    pool.target = load_open_targets(db, dataset_id)  # type: ignore[assignment]
    pool.order = pool.target.ids  # type: ignore[assignment,attr-defined]
    # Items a study drawn before migration 10 reopened go out before fresh ones, as they did then.
    for (item_id,) in db.fetchall(
        "SELECT si.item_id FROM study_items si JOIN studies st ON st.id = si.study_id "
        "JOIN item_state s ON s.item_id = si.item_id WHERE st.dataset_id = ? AND s.status = 'open' "
        "AND NOT coalesce(st.own_labels, false) ORDER BY si.study_id, si.item_id",
        [dataset_id],
    ):
        pool.started.setdefault(item_id, None)
    for item_id, annotator_id in db.fetchall(
        "SELECT DISTINCT a.item_id, a.annotator_id FROM annotations a JOIN items i ON i.id = a.item_id "
        "AND a.version_id = i.current_version_id JOIN item_state s ON s.item_id = a.item_id "
        "WHERE a.dataset_id = ? AND s.status = 'open' ORDER BY a.item_id",
        [dataset_id],
    ):
        pool.mark_done(item_id, annotator_id)
        pool.started.setdefault(item_id, None)
    for item_id, annotator_id, when in db.fetchall(
        "SELECT item_id, annotator_id, updated_at FROM assignments WHERE dataset_id = ? AND status = 'skipped'",
        [dataset_id],
    ):
        pool.skipped.setdefault(annotator_id, {})[item_id] = when
    _load_gold(db, dataset_id, pool)
    _load_studies(db, dataset_id, pool)
    return pool


def _load_studies(db: Store | Tx, dataset_id: int, pool: Pool) -> None:
    """Every study assignment of the dataset; those without the rater's label yet are pending."""
    for study_id, item_id, annotator_id, labelled in db.fetchall(
        "SELECT a.study_id, a.item_id, a.annotator_id, EXISTS (SELECT 1 FROM study_labels l "
        "WHERE l.study_id = a.study_id AND l.item_id = a.item_id AND l.annotator_id = a.annotator_id) "
        "FROM study_assignments a JOIN studies st ON st.id = a.study_id WHERE st.dataset_id = ? "
        "ORDER BY a.study_id, a.batch, a.item_id",
        [dataset_id],
    ):
        pool.study_assigned[(int(annotator_id), int(item_id))] = int(study_id)
        if not labelled:
            pool.study_pending.setdefault(int(annotator_id), {})[int(item_id)] = int(study_id)


def _load_gold(db: Store | Tx, dataset_id: int, pool: Pool) -> None:
    dataset = get_dataset(db, dataset_id)
    pool.gold_share = int(dataset.setting("gold_percent")) / 100.0 if dataset is not None else 0.0
    pool.gold = {
        int(r[0]) for r in db.fetchall("SELECT item_id FROM gold WHERE dataset_id = ?", [dataset_id])
    }
    for item_id, annotator_id in db.fetchall(
        "SELECT DISTINCT a.item_id, a.annotator_id FROM annotations a JOIN gold g ON g.item_id = a.item_id "
        "WHERE g.dataset_id = ?",
        [dataset_id],
    ):
        pool.gold_seen.setdefault(annotator_id, set()).add(item_id)
    if pool.gold_share > 0 and pool.gold:
        pool.fresh_order = seeded_order(pool.order, dataset_id)  # type: ignore[arg-type,assignment]


def _next_open(pool: Pool, annotator_id: int, now: datetime) -> int | None:
    """The item the rules give this annotator next (not leased yet)."""
    # what they have done is never eligible: passed over in C, not checked one by one
    for item_id in filterfalse(pool.done_by.get(annotator_id, set()).__contains__, pool.started):
        if pool.eligible(item_id, annotator_id, now):
            return item_id
    fresh = pool.fresh_order or pool.order
    while pool.next_fresh < len(fresh):
        item_id = fresh[pool.next_fresh]
        if item_id in pool.started or item_id not in pool.target or item_id in pool.gold:
            pool.next_fresh += 1
            continue
        if pool.eligible(item_id, annotator_id, now):
            return item_id
        # Only another replica's claims fill a fresh item (store/leases.py): it is started now.
        pool.started.setdefault(item_id, None)
        pool.next_fresh += 1
    # Nothing new: offer back what this annotator skipped, oldest skip first.
    skips = pool.skipped.get(annotator_id, {})
    for item_id in sorted(skips, key=skips.__getitem__):
        if pool.eligible(item_id, annotator_id, now, allow_skipped=True):
            return item_id
    return None


_TOTALS_TTL = 2.0  # seconds a dataset's settled/total counts may lag behind other annotators' saves


def progress(
    db: Store | Tx,
    dataset_id: int,
    annotator_id: int | None = None,
    leases: Leases | None = None,
    *,
    settled: bool = True,
) -> dict[str, int]:
    """Items in the dataset by gating state, and how many this annotator has labelled (by the leases'
    count; 0 without an annotator and leases). ``settled=False``: the dataset's size and the
    annotator's own count only (what an annotator is shown), from memory: no recount every few seconds."""
    mine = leases.labelled_by(db, dataset_id, annotator_id) if annotator_id is not None and leases else 0
    if not settled:
        key = ("items", dataset_id)  # the dataset's size: changed only by writes that drop the cache
        total = db.cache.get(key)
        if total is MISS:
            total = int(db.scalar("SELECT count(*) FROM item_state WHERE dataset_id = ?", [dataset_id]) or 0)
            db.cache.put(key, total)
        return {"total": int(total), "mine": mine}
    key = ("progress", dataset_id)
    cached = db.cache.get(key)
    if cached is MISS or time.monotonic() - cached[0] > _TOTALS_TTL:
        row = db.fetchone(
            "SELECT count(*), count(*) FILTER (WHERE status <> 'open'), "
            "count(*) FILTER (WHERE status = 'discarded') FROM item_state WHERE dataset_id = ?",
            [dataset_id],
        )
        cached = (time.monotonic(), tuple(int(v) for v in row) if row else (0, 0, 0))
        db.cache.put(key, cached)
    total, done, discarded = cached[1]
    return {"total": total, "settled": done, "discarded": discarded, "mine": mine}
