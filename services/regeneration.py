"""What follows a rejection: CRYSTAL's two loops (docs/PROTOCOLS.md E1) and ConfProBench's re-apply (D4).

Loop 2: a human reject in the quality gate queues a regeneration with no cap by default; the new steps
come back as a new version of the item (reason "regenerated", its parent the rejected version) in the
same gate. Loop 1: where a judge is configured, a regenerated version is judged on C1-C4 before
people see it; a failing one is regenerated again, up to loop1_max_attempts, after which it reaches the
gate flagged. A rejected item is always regenerating, waiting (backoff) or failed with its reason:
jobs_for_admins lists each one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from qc.generators import judge_verdict, steps_from_answer
from services.access import Action, Actor, require
from services.clock import now_utc
from services.generation import GenerationError, GeneratorConfig, Request, backend_for
from services.generator_settings import generator_config, loop_settings
from services.job_results import copy_record, write_result
from store import annotations as annotation_log
from store import datasets, items, state
from store import jobs as queue
from store.datasets import Dataset
from store.db import Store, Tx
from store.items import ItemView
from store.jobs import Job
from tasks import QUALITY_GATE, Decision
from tasks.quality_gate import CRITERIA

__all__ = ["judge_pending", "on_reject", "run_judge", "run_regenerate", "shares"]


def on_reject(
    tx: Tx, dataset: Dataset, item: ItemView, result: Decision, labels: list[dict[str, Any]], now: datetime
) -> None:
    """The quality gate's after_decision hook (services/hooks.py): a rejected item goes back to
    generation in the deciding transaction (atomically with the decision), or past loop 2's cap fails."""
    if result.status != "rejected":
        return
    failed = sorted(
        {str(k) for p in labels for k, ok in (p.get("criteria") or {}).items() if ok is False}
        | set((result.decision or {}).get("failed") or [])
    )
    reasons = [str(p.get("reason") or p.get("note") or "") for p in labels]
    restarts = sum(1 for j in queue.item_jobs(tx, item.item_id) if j.loop == "loop2")
    limits = loop_settings(tx)
    if limits["loop2_max_restarts"] and restarts >= limits["loop2_max_restarts"]:
        state.set_item_state(
            tx,
            item.item_id,
            target=result.target,
            status="failed",
            decision={
                **(result.decision or {}),
                "reason": f"rejected {restarts + 1} times; loop 2 stops at {limits['loop2_max_restarts']} restarts",
                "failed": failed,
            },
            settled_at=result.settled_at,
            now=now,
        )
        return
    queue.enqueue(
        tx,
        kind="regenerate",
        item_id=item.item_id,
        version_id=item.version_id,
        reason="rejected in the quality gate",
        payload={"failed": failed, "reason": "; ".join(r for r in reasons if r), "restart": restarts + 1},
        now=now,
        max_attempts=limits["job_max_attempts"],
        loop="loop2",
    )


def _fields(item: ItemView, **more: Any) -> dict[str, Any]:
    return {
        "question": item.question,
        "options": ", ".join(item.options) or "(none)",
        "answer": item.reference_answer or "",
        "steps": item.steps.get("candidate") or next(iter(item.steps.values()), []),
        **more,
    }


def _seed(job: Job) -> int:
    return job.item_id * 1009 + job.id  # fresh per job (CRYSTAL re-enters with fresh seeds, 004 l.84)


def run_regenerate(store: Store, job: Job, worker: str, config: GeneratorConfig) -> None:
    """Loop 1 or 2: new candidate steps for the item from the text backend, stored as a new version."""
    item = items.get_item(store, job.item_id, job.version_id)
    if item is None:
        raise GenerationError(f"item {job.item_id} version {job.version_id} no longer exists")
    failed = job.payload.get("failed") or []
    fields = _fields(
        item, failed=", ".join(failed) or "(none named)", reason=job.payload.get("reason") or "(none)"
    )
    seed = _seed(job)
    backend = backend_for("regenerate_steps", config)
    steps = steps_from_answer(
        backend.generate(Request("regenerate_steps", fields, seed, tuple(item.image_paths)))
    )
    meta = {
        **item.meta,
        "regeneration": {
            "loop": job.loop,
            "job": job.id,
            "backend": backend.name,
            "seed": seed,
            "parent_version_id": item.version_id,
            "failed": failed,
        },
    }
    record = copy_record(item, steps={**item.steps, "candidate": steps}, meta=meta)
    write_result(store, job, worker, record, "regenerated", then=_judge_first(config, job.item_id))


def _judge_first(config: GeneratorConfig, item_id: int) -> Callable[[Tx, int], None] | None:
    """With a judge configured, a regenerated version waits for it before it reaches people (loop 1)."""
    if config.judge_backend == "none":
        return None

    def hold(tx: Tx, version_id: int) -> None:
        _send_to_judge(tx, item_id, version_id, now_utc())

    return hold


def _send_to_judge(tx: Tx, item_id: int, version_id: int, now: datetime) -> None:
    """Hold the version back from people and queue the judge on it (loop 1)."""
    st = state.get_item_state(tx, item_id)
    target = st.target if st else 1
    state.set_item_state(
        tx, item_id, target=target, status="judging", decision=None, settled_at=None, now=now
    )
    queue.enqueue(
        tx,
        kind="judge",
        item_id=item_id,
        version_id=version_id,
        reason="loop 1: judged on C1-C4 before people",
        payload={},
        now=now,
        max_attempts=loop_settings(tx)["job_max_attempts"],
        loop="loop1",
    )


def run_judge(store: Store, job: Job, worker: str, config: GeneratorConfig) -> None:
    """Loop 1: the judge passes the version (to people) or fails it (regenerated again, up to the limit;
    past it the item reaches people flagged)."""
    item = items.get_item(store, job.item_id, job.version_id)
    if item is None:
        raise GenerationError(f"item {job.item_id} version {job.version_id} no longer exists")
    fields = _fields(item, criteria="; ".join(f"{k}: {_criterion(v)}" for k, v in CRITERIA.items()))
    answer = backend_for("judge", config).generate(
        Request("judge", fields, _seed(job), tuple(item.image_paths))
    )
    verdict = judge_verdict(answer, list(CRITERIA))
    now = now_utc()
    with store.writing() as tx:
        if not queue.holds(tx, job.id, worker):
            return
        if items.current_version_id(tx, job.item_id) != job.version_id:
            queue.finish(tx, job.id, now, None, "the item changed meanwhile; not judged")
            return
        dataset = datasets.get_dataset(tx, item.dataset_id)
        target = datasets.initial_target(dataset) if dataset else 1
        history = queue.item_jobs(tx, item.item_id)
        since = max((j.id for j in history if j.loop == "loop2"), default=0)  # this round's loop 1 only
        loop1 = sum(1 for j in history if j.loop == "loop1" and j.kind == "regenerate" and j.id > since)
        limit = loop_settings(tx)["loop1_max_attempts"]
        if verdict["passed"]:
            _open(tx, item.item_id, target, None, now)
        elif limit and loop1 >= limit:
            flag = {
                "flag": "validator_exhausted",
                "failed": verdict["failed"],
                "judge": verdict["justifications"],
            }
            _open(tx, item.item_id, target, flag, now)
        else:
            queue.enqueue(
                tx,
                kind="regenerate",
                item_id=item.item_id,
                version_id=item.version_id,
                reason="loop 1: the judge failed " + ", ".join(verdict["failed"]),
                payload={"failed": verdict["failed"], "reason": "; ".join(verdict["justifications"])},
                now=now,
                max_attempts=loop_settings(tx)["job_max_attempts"],
                loop="loop1",
            )
        queue.finish(tx, job.id, now, None, json.dumps(verdict))


def _criterion(value: Any) -> str:
    """A criterion as the judge reads it: its name and what it asks (or its text)."""
    name, asks = getattr(value, "name", None), getattr(value, "asks", None)
    return f"{name} ({asks})" if name and asks else str(value)


def _open(tx: Tx, item_id: int, target: int, flag: dict[str, Any] | None, now: datetime) -> None:
    state.set_item_state(tx, item_id, target=target, status="open", decision=flag, settled_at=None, now=now)
    st = state.get_item_state(tx, item_id)
    tx.changed(st.dataset_id if st else 0)  # the item is back in its dataset's pool


def judge_pending(store: Store, dataset: Dataset, user: Actor) -> int:
    """Queue loop-1 judging of the gate dataset's open, unlabelled items (a judge must be configured)."""
    require(user, Action.ADMINISTER)
    if dataset.task != QUALITY_GATE:
        raise GenerationError(f"{dataset.name} is not a quality-gate dataset")
    if generator_config(store).judge_backend == "none":
        raise GenerationError(
            "no judge is configured: set judge_backend first (jobs config judge_backend=http)"
        )
    count = 0
    now = now_utc()
    with store.writing() as tx:
        for item_id in state.items_in_state(tx, dataset.id, "open", limit=100_000):
            item = items.get_item(tx, item_id)
            if item is None or annotation_log.item_annotations(tx, item_id, item.version_id):
                continue  # people have started on it: the judge comes before people, not after
            _send_to_judge(tx, item_id, item.version_id, now)
            count += 1
        tx.changed(dataset.id)
    return count


def shares(store: Store, dataset: Dataset) -> Mapping[str, Mapping[str, float]]:
    """The share of the dataset's items that re-iterated, per loop (CRYSTAL reports < 5 % for both)."""
    return queue.loop_shares(store, dataset.id)
