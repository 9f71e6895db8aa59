"""The durable job queue: regeneration and perturbation jobs that survive a restart.

A job is queued, claimed by one worker (attempts + 1), then done (in the same transaction that writes
its result, so a finished job is never run again) or failed: queued again after a backoff that doubles
with each attempt, until its attempt limit, where it stays failed with its errors for an admin to see
and retry. A running job's worker writes a heartbeat while it works (beat): a job whose heartbeat is
older than the stale timeout was left by a worker that stopped, and any worker queues it again
(release_abandoned). Several app replicas over PostgreSQL may each run a worker; a claim is a write
transaction (serialised across replicas), so one job never goes to two workers. One process owns a
DuckDB file, so there a job found running when a worker starts is queued again at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from store.errors import StoreNotFoundError, StoreRequestError, StoreStateError, written

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "BACKOFF_SECONDS",
    "MAX_ATTEMPTS",
    "Job",
    "JobError",
    "JobNotFailed",
    "JobNotFound",
    "beat",
    "claim",
    "enqueue",
    "fail",
    "finish",
    "generator_settings",
    "get_job",
    "holds",
    "item_jobs",
    "list_jobs",
    "loop_shares",
    "open_job",
    "reiterated",
    "release_abandoned",
    "retry",
    "set_generator_settings",
    "status_counts",
]

_COLUMNS = (
    "id, kind, item_id, version_id, status, reason, payload, result_version_id, error, attempts, "
    "max_attempts, run_after, claimed_by, claimed_at, loop, errors, created_at, updated_at, heartbeat_at"
)


BACKOFF_SECONDS = 30.0  # a failed attempt's first wait; it doubles with each attempt (fail)
MAX_ATTEMPTS = 3  # attempts of one job unless the generator setting job_max_attempts says otherwise


class JobError(StoreRequestError):
    """A job request that cannot be done: JobNotFound or JobNotFailed."""


class JobNotFound(JobError, StoreNotFoundError):
    """There is no job of that id."""


class JobNotFailed(JobError, StoreStateError):
    """Only a failed job can be retried."""


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    item_id: int
    version_id: int
    status: str  # queued | running | done | failed
    reason: str | None
    payload: dict[str, Any]
    result_version_id: int | None
    error: str | None
    attempts: int
    max_attempts: int
    run_after: datetime | None
    claimed_by: str | None
    claimed_at: datetime | None
    loop: str | None
    errors: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    heartbeat_at: datetime | None = None  # the last sign of life of the worker running it

    def waiting(self, now: datetime) -> bool:
        """Queued but held back by its backoff."""
        return self.status == "queued" and self.run_after is not None and self.run_after > now


def _job(row: tuple) -> Job:
    values = list(row)
    values[6] = json.loads(values[6] or "{}")
    values[15] = json.loads(values[15] or "[]")
    values[9] = int(values[9] or 0)
    values[10] = int(values[10] or 0)
    return Job(*values)


def get_job(db: Store | Tx, job_id: int) -> Job | None:
    row = db.fetchone(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", [job_id])
    return _job(row) if row else None


def open_job(db: Store | Tx, item_id: int, kind: str | None = None) -> Job | None:
    """The item's queued or running job (of that kind), if any."""
    kind_rule = " AND kind = ?" if kind else ""
    row = db.fetchone(
        f"SELECT {_COLUMNS} FROM jobs WHERE item_id = ? AND status IN ('queued', 'running'){kind_rule} "
        "ORDER BY id LIMIT 1",
        [item_id, kind] if kind else [item_id],
    )
    return _job(row) if row else None


def enqueue(
    tx: Tx,
    *,
    kind: str,
    item_id: int,
    version_id: int,
    reason: str,
    payload: dict[str, Any],
    now: datetime,
    max_attempts: int = MAX_ATTEMPTS,
    loop: str | None = None,
) -> Job:
    """Queue a job; an item with an open job of that kind keeps it (a second reject adds nothing)."""
    existing = open_job(tx, item_id, kind)
    if existing is not None:
        return existing
    job_id = tx.scalar("SELECT nextval('job_ids')")
    tx.execute(
        "INSERT INTO jobs (id, kind, item_id, version_id, status, reason, payload, attempts, max_attempts, "
        "loop, errors, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, 0, ?, ?, '[]', ?, ?)",
        [
            job_id,
            kind,
            item_id,
            version_id,
            reason,
            json.dumps(payload),
            max(1, max_attempts),
            loop,
            now,
            now,
        ],
    )
    return written(get_job(tx, int(job_id)), f"job {job_id}")


def claim(
    store: Store, worker: str, now: datetime, kinds: tuple[str, ...] = (), skip: tuple[str, ...] = ()
) -> Job | None:
    """The oldest queued job whose backoff is over, now running for this worker (attempts + 1); jobs of
    the kinds in `skip` stay queued (their generator is not configured: they wait, spending nothing)."""
    kind_rule = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
    kind_rule += f" AND kind NOT IN ({', '.join('?' * len(skip))})" if skip else ""
    due = (
        f"SELECT id FROM jobs WHERE status = 'queued' AND (run_after IS NULL OR run_after <= ?){kind_rule} "
        "ORDER BY coalesce(run_after, created_at), id LIMIT 1"
    )
    if store.fetchone(due, [now, *kinds, *skip]) is None:  # an idle worker polls without the write lock
        return None
    with store.writing() as tx:
        row = tx.fetchone(due, [now, *kinds, *skip])
        if row is None:
            return None
        tx.execute(
            "UPDATE jobs SET status = 'running', claimed_by = ?, claimed_at = ?, heartbeat_at = ?, "
            "attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'queued'",
            [worker, now, now, now, row[0]],
        )
        return get_job(tx, int(row[0]))


def beat(store: Store, job_id: int, worker: str, now: datetime) -> bool:
    """The worker running the job is alive; False when the job is no longer its own."""
    with store.writing() as tx:
        if not holds(tx, job_id, worker):
            return False
        tx.execute("UPDATE jobs SET heartbeat_at = ? WHERE id = ?", [now, job_id])
        return True


def holds(tx: Tx, job_id: int, worker: str) -> bool:
    """The job is still running for this worker (not released by a restart, not retried by an admin)."""
    found = tx.fetchone("SELECT status, claimed_by FROM jobs WHERE id = ?", [job_id])
    return found is not None and found[0] == "running" and found[1] == worker


def finish(
    tx: Tx, job_id: int, now: datetime, result_version_id: int | None = None, note: str | None = None
) -> None:
    """Done, in the caller's transaction: the same one that stores the job's result."""
    tx.execute(
        "UPDATE jobs SET status = 'done', result_version_id = ?, error = ?, updated_at = ? WHERE id = ?",
        [result_version_id, note, now, job_id],
    )


def fail(
    store: Store,
    job_id: int,
    worker: str,
    error: str,
    now: datetime,
    backoff_seconds: float = BACKOFF_SECONDS,
) -> Job:
    """A failed attempt: queued again after backoff_seconds * 2^(attempts - 1), or failed for good at
    its attempt limit. The error is kept with the job's earlier ones."""
    with store.writing() as tx:
        job = get_job(tx, job_id)
        if job is None:
            raise JobNotFound(f"there is no job {job_id}")
        if job.status != "running" or job.claimed_by != worker:
            return job  # released or retried meanwhile: this worker's failure no longer applies
        errors = [*job.errors, f"attempt {job.attempts}: {error}"][-20:]
        if job.attempts >= job.max_attempts:
            status, run_after = "failed", None
        else:
            status, run_after = "queued", now + timedelta(seconds=backoff_seconds * 2 ** (job.attempts - 1))
        tx.execute(
            "UPDATE jobs SET status = ?, error = ?, errors = ?, run_after = ?, claimed_by = NULL, updated_at = ? "
            "WHERE id = ?",
            [status, error, json.dumps(errors), run_after, now, job_id],
        )
        return written(get_job(tx, job_id), f"job {job_id}")


def release_abandoned(store: Store, now: datetime, stale_seconds: float, *, at_start: bool = False) -> int:
    """Queue again the jobs whose worker stopped: no heartbeat for stale_seconds (a replica that was
    killed, on any engine). At a worker's start on a database one process owns (DuckDB), every job
    found running was left by a process that stopped. Returns how many."""
    if at_start and store.engine.exclusive:
        rule, params, why = "status = 'running'", [], "interrupted by a restart; queued again"
    else:
        rule = "status = 'running' AND coalesce(heartbeat_at, claimed_at, updated_at) < ?"
        params = [now - timedelta(seconds=stale_seconds)]
        why = f"its worker stopped (no heartbeat for {stale_seconds:g} s); queued again"
    if not store.scalar(f"SELECT count(*) FROM jobs WHERE {rule}", params):  # no write lock when none
        return 0
    with store.writing() as tx:
        count = int(tx.scalar(f"SELECT count(*) FROM jobs WHERE {rule}", params) or 0)
        if count:
            tx.execute(
                "UPDATE jobs SET status = 'queued', claimed_by = NULL, run_after = NULL, updated_at = ?, "
                f"error = ? WHERE {rule}",
                [now, why, *params],
            )
        return count


def retry(store: Store, now: datetime, job_id: int | None = None) -> int:
    """Queue failed jobs again with fresh attempts (one job, or every failed one); returns how many."""
    with store.writing() as tx:
        if job_id is not None:
            job = get_job(tx, job_id)
            if job is None:
                raise JobNotFound(f"there is no job {job_id}")
            if job.status != "failed":
                raise JobNotFailed(
                    f"job {job_id} is {job.status}, not failed: only a failed job can be retried"
                )
        where, params = ("id = ?", [job_id]) if job_id is not None else ("status = 'failed'", [])
        count = int(tx.scalar(f"SELECT count(*) FROM jobs WHERE {where}", params) or 0)
        tx.execute(
            f"UPDATE jobs SET status = 'queued', attempts = 0, run_after = NULL, claimed_by = NULL, "
            f"updated_at = ? WHERE {where}",
            [now, *params],
        )
        return count


def list_jobs(
    db: Store | Tx, *, status: str | None = None, dataset_id: int | None = None, limit: int = 200
) -> list[Job]:
    """Newest first; optionally one status or one dataset's items."""
    rules: list[str] = []
    params: list[Any] = []
    if status:
        rules.append("j.status = ?")
        params.append(status)
    if dataset_id is not None:
        rules.append("i.dataset_id = ?")
        params.append(dataset_id)
    where = f"WHERE {' AND '.join(rules)}" if rules else ""
    cols = ", ".join(f"j.{c.strip()}" for c in _COLUMNS.split(","))
    rows = db.fetchall(
        f"SELECT {cols} FROM jobs j JOIN items i ON i.id = j.item_id {where} ORDER BY j.id DESC LIMIT ?",
        [*params, limit],
    )
    return [_job(r) for r in rows]


def item_jobs(db: Store | Tx, item_id: int) -> list[Job]:
    """Every job of one item, oldest first (its regeneration history)."""
    return [
        _job(r) for r in db.fetchall(f"SELECT {_COLUMNS} FROM jobs WHERE item_id = ? ORDER BY id", [item_id])
    ]


def status_counts(db: Store | Tx) -> dict[str, int]:
    return {str(s): int(n) for s, n in db.fetchall("SELECT status, count(*) FROM jobs GROUP BY status")}


def reiterated(db: Store | Tx, dataset_id: int) -> dict[str, int]:
    """Per loop: how many of the dataset's items re-iterated (had at least one job of that loop)."""
    rows = db.fetchall(
        "SELECT j.loop, count(DISTINCT j.item_id) FROM jobs j JOIN items i ON i.id = j.item_id "
        "WHERE i.dataset_id = ? AND j.loop IS NOT NULL GROUP BY j.loop ORDER BY j.loop",
        [dataset_id],
    )
    return {str(loop): int(n) for loop, n in rows}


def loop_shares(db: Store | Tx, dataset_id: int) -> dict[str, dict[str, float]]:
    """Per loop: the items that re-iterated, of all the dataset's items, and their share."""
    total = int(db.scalar("SELECT count(*) FROM items WHERE dataset_id = ?", [dataset_id]) or 0)
    return {
        loop: {"items": n, "of": total, "share": (n / total) if total else 0.0}
        for loop, n in reiterated(db, dataset_id).items()
    }


def generator_settings(db: Store | Tx) -> dict[str, Any]:
    """The generator settings an admin set (JSON values by name); defaults are the caller's."""
    return {
        name: json.loads(value) for name, value in db.fetchall("SELECT name, value FROM generator_settings")
    }


def set_generator_settings(tx: Tx, changes: dict[str, Any], by: str | None, now: datetime) -> None:
    for name, value in changes.items():
        tx.execute("DELETE FROM generator_settings WHERE name = ?", [name])
        if value is not None:
            tx.execute(
                "INSERT INTO generator_settings (name, value, updated_by, updated_at) VALUES (?, ?, ?, ?)",
                [name, json.dumps(value), by, now],
            )
