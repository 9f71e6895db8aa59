"""Counts of what the gate sent back: rejected items, regeneration jobs, new item versions.

Read-only; zeros when nothing was rejected yet (the dashboard shows zeros, not errors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.jobs import reiterated

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["JOB_STATUSES", "gating_counts"]

JOB_STATUSES = ("queued", "running", "done", "failed")


def gating_counts(db: Store | Tx, dataset_id: int) -> dict[str, int]:
    """Rejected items, regeneration jobs by status, and items' later versions by reason, for one dataset."""
    counts = {
        "rejected items": int(
            db.scalar(
                "SELECT count(*) FROM item_state WHERE dataset_id = ? AND status = 'rejected'", [dataset_id]
            )
        ),
    }
    by_status = dict(
        db.fetchall(
            "SELECT j.status, count(*) FROM jobs j JOIN items i ON i.id = j.item_id WHERE i.dataset_id = ? "
            "GROUP BY j.status ORDER BY j.status",
            [dataset_id],
        )
    )
    counts["regeneration jobs"] = int(sum(by_status.values()))
    for status in (*JOB_STATUSES, *sorted(set(by_status) - set(JOB_STATUSES))):
        counts[f"jobs {status}"] = int(by_status.get(status, 0))
    versions = db.fetchall(
        "SELECT v.reason, count(*) FROM item_versions v JOIN items i ON i.id = v.item_id "
        "WHERE i.dataset_id = ? AND v.version > 1 GROUP BY v.reason ORDER BY v.reason",
        [dataset_id],
    )
    # The items that re-iterated, per loop (CRYSTAL's loops 1 and 2, ConfProBench's re-apply).
    for loop, n in reiterated(db, dataset_id).items():
        counts[f"items re-iterated ({loop})"] = n
    counts["new item versions"] = int(sum(n for _, n in versions))
    for reason, n in versions:
        counts[f"new item versions ({reason})"] = int(n)
    return counts
