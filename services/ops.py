"""What operators read: the health check for a load balancer and the counts behind the metrics.

The health check says only whether the database answers. The counts are totals (labels per task,
jobs per status): nothing names an item, a label or an annotator, and only admins (a session or an
admin's API token) read them, so the metrics tell an annotator nothing about the others' work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from services.access import require_admin
from store import health
from store import jobs as queue

if TYPE_CHECKING:
    from store import Store
    from store.users import Annotator

__all__ = ["JOB_STATUSES", "StoreCounts", "health_check", "store_counts"]

JOB_STATUSES = ("queued", "running", "done", "failed")


def health_check(store: Store) -> bool:
    """True when the store answers a trivial query now; never raises."""
    try:
        return health.ping(store)
    except Exception:  # closed, locked out, the server gone: the balancer only needs "not ok"
        return False


@dataclass(frozen=True)
class StoreCounts:
    labels_by_task: dict[str, int]
    jobs_by_status: dict[str, int]


def store_counts(store: Store, user: Annotator) -> StoreCounts:
    """Totals over the whole database, for an admin (or an admin's token)."""
    require_admin(user)
    jobs = {status: 0 for status in JOB_STATUSES} | queue.status_counts(store)
    return StoreCounts(labels_by_task=health.label_counts(store), jobs_by_status=jobs)
