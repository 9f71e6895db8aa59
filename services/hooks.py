"""The services' extension points: what follows a decision, and what runs a job (after datasette's hooks).

Each point is registered per task (or per job kind) where the app is composed: app.py calls
services.compose.compose, which registers the default behaviour (services/defaults.py) through these
same points. services.decide and services.jobs call them and import nothing that registers them, so
the use cases stay free of circles: a task's follow-ups import the annotate use cases, never the other
way round.

The points, in the order a submit meets them:

revise_decision(task): ``(tx, dataset, item, rows, decision) -> Decision``
    Called by services.decide.settle after the task's rule decided the item and before the decision
    is stored, in the deciding transaction. Returns the decision as it is to be stored. The quality
    gate's: an accepted edit becomes the item's new version, named in the decision.

after_decision(task): ``(tx, dataset, item, decision, labels, now) -> None``
    Called by services.decide.settle after the decision is stored, in the same transaction (the
    label, the decision and what follows are committed together or not at all). The quality gate's:
    a rejected item goes back to generation (CRYSTAL's loop 2). The perturbation check's: a failed
    variant is made again (ConfProBench D4).

run_job(kind): ``(store, job, worker, config) -> None``
    Called by services.jobs for a claimed job of that kind, outside any transaction; it stores its
    result through services.job_results.write_result. Kinds: regenerate, judge, perturb.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from services.generation import GeneratorConfig
from store.annotations import StoredAnnotation
from store.datasets import Dataset
from store.db import Store, Tx
from store.items import ItemView
from store.jobs import Job
from tasks import Decision

__all__ = ["HOOKS", "AfterDecision", "Hooks", "ReviseDecision", "RunJob"]

ReviseDecision = Callable[[Tx, Dataset, ItemView, list[StoredAnnotation], Decision], Decision]
AfterDecision = Callable[[Tx, Dataset, ItemView, Decision, list[dict[str, Any]], datetime], None]
RunJob = Callable[[Store, Job, str, GeneratorConfig], None]


class Hooks:
    """What is registered at each extension point (the module's docstring lists them)."""

    def __init__(self) -> None:
        self._revise: dict[str, list[ReviseDecision]] = {}
        self._after: dict[str, list[AfterDecision]] = {}
        self._jobs: dict[str, RunJob] = {}

    def revise_decision(self, task: str, hook: ReviseDecision) -> None:
        """Register how a decision of this task is revised before it is stored (once per hook)."""
        found = self._revise.setdefault(task, [])
        if hook not in found:
            found.append(hook)

    def after_decision(self, task: str, hook: AfterDecision) -> None:
        """Register what follows a stored decision of this task (once per hook)."""
        found = self._after.setdefault(task, [])
        if hook not in found:
            found.append(hook)

    def run_job(self, kind: str, hook: RunJob) -> None:
        """Register what runs a job of this kind (one per kind: a second registration replaces it)."""
        self._jobs[kind] = hook

    def follows(self, task: str) -> bool:
        """Something is registered to revise or follow this task's decisions (what a label's shared
        transaction cannot do beside others: services.decide.settle runs it exclusively)."""
        return bool(self._revise.get(task) or self._after.get(task))

    def revised(
        self, tx: Tx, dataset: Dataset, item: ItemView, rows: list[StoredAnnotation], decision: Decision
    ) -> Decision:
        for hook in self._revise.get(dataset.task, []):
            decision = hook(tx, dataset, item, rows, decision)
        return decision

    def followed(
        self,
        tx: Tx,
        dataset: Dataset,
        item: ItemView,
        decision: Decision,
        labels: list[dict[str, Any]],
        now: datetime,
    ) -> None:
        for hook in self._after.get(dataset.task, []):
            hook(tx, dataset, item, decision, labels, now)

    def job_runner(self, kind: str) -> RunJob | None:
        return self._jobs.get(kind)

    def job_kinds(self) -> tuple[str, ...]:
        return tuple(self._jobs)


# The app's registry: filled once where the app is composed (services.compose), read by decide and jobs.
HOOKS = Hooks()
