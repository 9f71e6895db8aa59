"""What an operator's probes read: a trivial query for the health check, counts for the metrics.

Counts only (labels per task, jobs per status): nothing names an item, a label or an annotator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.db import Store

__all__ = ["label_counts", "ping"]


def ping(store: Store) -> bool:
    """True when the database answers a trivial query (raises the store's error when it cannot)."""
    return store.scalar("SELECT 1") == 1


def label_counts(store: Store) -> dict[str, int]:
    """Labels in the append-only log, per task (the whole database: the same on every replica)."""
    return {str(t): int(n) for t, n in store.fetchall("SELECT task, count(*) FROM annotations GROUP BY task")}
