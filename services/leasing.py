"""The leases the services hand items out with: one Leases (store/assignments.py) per store.

Chosen when the app is composed (services.compose.compose(store), called by app.py): a database one
process holds (DuckDB) keeps its leases in memory (Scheduler); a database replicas share
(PostgreSQL) keeps them in lease rows (store/leases.py's SharedScheduler). The leases listen to the
store's commits (Store.listen), so a change of a dataset's items, settings, gold or studies reloads
its pool; the store itself knows nothing of them. A store no composition named (a script, a test)
gets its engine's choice on first use.
"""

from __future__ import annotations

import threading
import weakref

from store.assignments import Leases, Scheduler
from store.db import Store, Tx
from store.leases import SharedScheduler

__all__ = ["compose_leases", "leases_of"]

_CHOSEN: weakref.WeakKeyDictionary[Store, Leases] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _choose(store: Store) -> Leases:
    """In memory where one process holds the whole database; in the database where replicas share it."""
    return Scheduler() if store.engine.exclusive else SharedScheduler(store)


def compose_leases(store: Store) -> Leases:
    """The leases of this store, chosen once by its engine; they hear of its changes."""
    with _LOCK:
        found = _CHOSEN.get(store)
        if found is None:
            found = _CHOSEN[store] = _choose(store)
            store.listen(found.invalidate)
        return found


def leases_of(db: Store | Tx) -> Leases:
    """The leases composed with this store (or the transaction's store)."""
    store = db.store
    found = _CHOSEN.get(store)
    return found if found is not None else compose_leases(store)
