"""Running the job queue: a worker thread inside the app, `python app.py jobs run` beside it, and what
admins do with jobs (see them, retry the failed ones). What runs a job of each kind is registered at
services.hooks (run_job); the generator settings are services/generator_settings.py.

A job's handler generates outside any transaction (a model may take a minute), then stores its
result and marks the job done in one transaction, and only while the job is still this worker's: a
restart in the middle loses the attempt, never a result, and never stores one twice.

Several app replicas over one PostgreSQL database may each run a worker. Each worker is named by its
host and process id, writes a heartbeat every HEARTBEAT_SECONDS while a job runs, and now and then
queues again the jobs whose worker has given no sign of life for STALE_SECONDS (a replica killed
mid-job): never a job another live replica is running.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from qc.generators import AnswerError
from services import logs, perturbation
from services.access import Action, Actor, require
from services.clock import now_utc
from services.errors import InvalidInput, ServiceError, from_store
from services.generation import GenerationError, GeneratorConfig
from services.generator_settings import generator_config
from services.hooks import HOOKS
from store import datasets, items, state
from store import jobs as queue
from store.db import Store
from store.errors import StoreRequestError
from store.jobs import BACKOFF_SECONDS, Job
from tasks import PERTURBATION_CHECK, spec_for

__all__ = [
    "WAITING_FOR_GENERATOR",
    "Job",
    "RunSummary",
    "Worker",
    "job_rows",
    "list_jobs",
    "loop_table",
    "perturbation_warnings",
    "retry",
    "run_one",
    "run_pending",
    "standing",
    "waiting_kinds",
]

HEARTBEAT_SECONDS = 15.0  # a running job's worker says it is alive this often
STALE_SECONDS = 60.0  # a running job without a heartbeat this long was left by a worker that stopped


# A job whose generator is not configured waits in this state, spending no attempt, until an admin
# configures one (then the worker runs it within seconds).
WAITING_FOR_GENERATOR = "waiting for a generator: set one in Jobs"


def waiting_kinds(config: GeneratorConfig) -> tuple[str, ...]:
    """The job kinds that wait for a generator: regenerations and text perturbations without a text
    backend, the judge without its own (perturbations of images need none)."""
    text = ("regenerate", perturbation.TEXT_JOB) if config.backend == "none" else ()
    return text + ("judge",) * (config.judge_backend == "none")


def worker_name(role: str = "app") -> str:
    """Unique per process, across replicas: the role, the host and the process id."""
    return f"{role}@{socket.gethostname()}:{os.getpid()}"


@contextmanager
def _heartbeat(store: Store, job: Job, worker: str, every: float) -> Iterator[None]:
    """While the job runs, a thread writes its heartbeat every `every` seconds."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            try:
                if not queue.beat(store, job.id, worker, now_utc()):
                    return  # queued again or retried meanwhile: no longer this worker's
            except Exception:  # a failed write (the server is restarting): the next beat tries again
                continue

    thread = threading.Thread(target=beat, name=f"stepgate-heartbeat-{job.id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 5)


def run_one(
    store: Store,
    worker: str,
    backoff_seconds: float = BACKOFF_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
) -> Job | None:
    """Claim the next due job and run it; returns it as it ended (None when nothing is due)."""
    config = generator_config(store)
    job = queue.claim(store, worker, now_utc(), skip=waiting_kinds(config))
    if job is None:
        return None
    handler = HOOKS.job_runner(job.kind)
    started, error = time.perf_counter(), None
    try:
        if handler is None:
            raise GenerationError(f"no handler for jobs of kind {job.kind!r}")
        with _heartbeat(store, job, worker, heartbeat_seconds):
            handler(store, job, worker, config)
    except (GenerationError, AnswerError, ServiceError, StoreRequestError, OSError, ValueError) as exc:
        error = type(exc).__name__
        queue.fail(store, job.id, worker, str(exc), now_utc(), backoff_seconds)
    except Exception as exc:  # a bug in a handler must not stop the worker; the admin sees it
        error = type(exc).__name__
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        queue.fail(store, job.id, worker, f"unexpected error: {detail}", now_utc(), backoff_seconds)
    ended = queue.get_job(store, job.id)
    # The error's class only: a generator's message may quote the item's text.
    logs.emit(
        "job",
        job_id=job.id,
        job_kind=job.kind,
        worker=worker,
        outcome=ended.status if ended is not None else "gone",
        error=error,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return ended


@dataclass
class RunSummary:
    done: int = 0
    retrying: int = 0
    failed: int = 0
    waiting: int = 0  # queued for a generator that is not configured

    def line(self) -> str:
        waiting = f", {self.waiting} {WAITING_FOR_GENERATOR}" if self.waiting else ""
        return f"{self.done} done, {self.retrying} to retry after a backoff, {self.failed} failed{waiting}"


_RUNNING: dict[int, Worker] = {}  # the app's worker per store, so that `jobs run` in the app shares it


def run_pending(
    store: Store,
    worker: str = "command",
    progress: Callable[[Job], None] | None = None,
    backoff_seconds: float = BACKOFF_SECONDS,
    limit: int | None = None,
) -> RunSummary:
    """Work through the jobs that are due now. A job left running by a stopped process is queued
    again first, unless this process's app worker is the one running it. `worker` names the role
    (command, jobs-tab): the claim's worker is that role with this host and process id."""
    worker = worker_name(worker)
    if id(store) not in _RUNNING:
        queue.release_abandoned(store, now_utc(), STALE_SECONDS, at_start=True)
    summary = RunSummary()
    while limit is None or summary.done + summary.failed + summary.retrying < limit:
        job = run_one(store, worker, backoff_seconds)
        if job is None:
            break
        if job.status == "done":
            summary.done += 1
        elif job.status == "failed":
            summary.failed += 1
        else:
            summary.retrying += 1
        if progress is not None:
            progress(job)
    skipped = waiting_kinds(generator_config(store))
    summary.waiting = sum(
        1 for j in queue.list_jobs(store, status="queued", limit=100_000) if j.kind in skipped
    )
    return summary


class Worker:
    """The app's worker thread: runs due jobs, then waits poll_seconds (or until woken); now and then
    queues again the jobs of workers that stopped (no heartbeat for stale_seconds)."""

    def __init__(
        self,
        store: Store,
        name: str | None = None,
        poll_seconds: float = 2.0,
        stale_seconds: float = STALE_SECONDS,
    ) -> None:
        self.store, self.name, self.poll_seconds = store, name or worker_name(), poll_seconds
        self.stale_seconds = stale_seconds
        self.heartbeat_seconds = stale_seconds / 4
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._swept = 0.0

    def start(self) -> Worker:
        queue.release_abandoned(self.store, now_utc(), self.stale_seconds, at_start=True)
        self._swept = time.monotonic()
        _RUNNING[id(self.store)] = self
        self._thread = threading.Thread(target=self._loop, name=f"stepgate-jobs-{self.name}", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        _RUNNING.pop(id(self.store), None)

    def _sweep(self) -> None:
        """Queue again the jobs of stopped workers, at most every half stale timeout."""
        if time.monotonic() - self._swept >= self.stale_seconds / 2:
            self._swept = time.monotonic()
            queue.release_abandoned(self.store, now_utc(), self.stale_seconds)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._sweep()
                job = run_one(self.store, self.name, heartbeat_seconds=self.heartbeat_seconds)
            except ServiceError:
                job = None
            except Exception:  # the store closed under us, a full disk: wait and look again
                job = None
                if self._stop.wait(self.poll_seconds):
                    return
            if job is None:
                self._wake.wait(self.poll_seconds)
                self._wake.clear()


def list_jobs(store: Store, user: Actor, status: str | None = None) -> list[Job]:
    """Every job, newest first (admins; the command line acts as the database's owner)."""
    require(user, Action.ADMINISTER)
    if status is not None and status not in ("queued", "running", "done", "failed"):
        raise InvalidInput(f"status {status!r}: choose queued, running, done or failed")
    return queue.list_jobs(store, status=status, limit=1000)


def retry(store: Store, user: Actor, job_id: int | None = None) -> int:
    """Queue one failed job (or all failed jobs) again with fresh attempts; returns how many."""
    require(user, Action.ADMINISTER)
    try:
        return queue.retry(store, now_utc(), job_id)
    except queue.JobError as exc:
        raise from_store(exc) from exc


def _item_names(store: Store, item_ids: set[int]) -> dict[int, tuple[str, str]]:
    """(dataset, external id) per item, for admins' tables."""
    names = {}
    for item_id in item_ids:
        item = items.get_item(store, item_id)
        if item is not None:
            dataset = datasets.get_dataset(store, item.dataset_id)
            names[item_id] = (dataset.name if dataset else "?", item.external_id)
    return names


def job_rows(store: Store, user: Actor, status: str | None = None) -> list[dict[str, Any]]:
    """The jobs as admins read them: what, for which item, where it stands, its last error."""
    found = list_jobs(store, user, status)[:300]
    names = _item_names(store, {j.item_id for j in found})
    now, waiting = now_utc(), waiting_kinds(generator_config(store))
    return [
        {
            "job": j.id,
            "kind": j.kind,
            "loop": j.loop or "",
            "dataset": names.get(j.item_id, ("?", "?"))[0],
            "item": names.get(j.item_id, ("?", str(j.item_id)))[1],
            "status": _where(j, now, waiting),
            "attempts": f"{j.attempts}/{j.max_attempts}",
            "why": j.reason or "",
            "last error": j.error or "",
            "updated": f"{j.updated_at:%Y-%m-%d %H:%M:%S}" if j.updated_at else "",
        }
        for j in found
    ]


def _where(job: Job, now: datetime, waiting: tuple[str, ...]) -> str:
    """Where a job stands: its status, or what it waits for."""
    if job.status == "queued" and job.kind in waiting:
        return WAITING_FOR_GENERATOR
    return "waiting (backoff)" if job.waiting(now) else job.status


def standing(store: Store, user: Actor) -> list[dict[str, Any]]:
    """Every item sent back (rejected, failed, waiting for a variant, with the judge) and where it
    stands: regenerating, waiting, or failed with the reason; nothing sent back goes unlisted."""
    require(user, Action.ADMINISTER)
    rows = []
    now = now_utc()
    waiting = waiting_kinds(generator_config(store))
    for dataset in datasets.list_datasets(store):
        if not spec_for(dataset.task).regenerate_on_reject:
            continue
        for status in ("rejected", "failed", "waiting", "judging"):
            for item_id in state.items_in_state(store, dataset.id, status, limit=1000):
                item = items.get_item(store, item_id)
                history = queue.item_jobs(store, item_id)
                job = history[-1] if history else None
                st = state.get_item_state(store, item_id)
                decided = str((st.decision or {}).get("reason", "")) if st else ""
                if job is None:
                    where, why = "no job", decided or "no regeneration was queued"
                elif job.status in ("queued", "running", "failed"):
                    where = {"running": "regenerating", "failed": "job failed"}.get(
                        job.status, _where(job, now, waiting)
                    )
                    # The annotator's reason (a reject's note), else why the job was queued.
                    why = str(job.payload.get("reason") or "") or job.reason or ""
                else:
                    where, why = status, decided
                rows.append(
                    {
                        "dataset": dataset.name,
                        "item": item.external_id if item else str(item_id),
                        "version": item.version if item else 0,
                        "state": status,
                        "standing": where,
                        "reason": why,
                        "last error": (job.error or "") if job is not None and job.status != "done" else "",
                        "jobs": len(history),
                    }
                )
    return rows


def loop_table(store: Store, user: Actor) -> list[dict[str, Any]]:
    """Per dataset and loop, the share of items that re-iterated (CRYSTAL: < 5 % for both loops)."""
    require(user, Action.ADMINISTER)
    rows = []
    for dataset in datasets.list_datasets(store):
        for loop, share in queue.loop_shares(store, dataset.id).items():
            rows.append(
                {
                    "dataset": dataset.name,
                    "loop": loop,
                    "items re-iterated": int(share["items"]),
                    "of": int(share["of"]),
                    "share": f"{share['share']:.1%}",
                }
            )
    return rows


def perturbation_warnings(store: Store, user: Actor) -> list[str]:
    """Every perturbation check's warnings (units past warn_after_attempts variants, units failed)."""
    require(user, Action.ADMINISTER)
    return [
        f"{dataset.name}: {line}"
        for dataset in datasets.list_datasets(store, task=PERTURBATION_CHECK)
        for line in perturbation.warnings(store, user, dataset.name)
    ]
