"""Task specs: one module per task, the one home of its labels, rule, blindness and defaults.

Adding a task is one spec here plus one panel in ui/panels. This package imports nothing else of
stepgate's, so every layer may read it.
"""

from __future__ import annotations

from tasks import earliest_error, perturbation_check, quality_gate, step_match, step_review
from tasks.base import NO_ERROR, Decision, LabelLimits, PayloadError, TaskSpec

__all__ = [
    "EARLIEST_ERROR",
    "NO_ERROR",
    "PERTURBATION_CHECK",
    "QUALITY_GATE",
    "SPECS",
    "STEP_MATCH",
    "STEP_REVIEW",
    "TASKS",
    "Decision",
    "LabelLimits",
    "PayloadError",
    "TaskSpec",
    "spec_for",
    "task_of_format",
]

SPECS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        step_review.SPEC,
        earliest_error.SPEC,
        quality_gate.SPEC,
        perturbation_check.SPEC,
        step_match.SPEC,
    )
}
TASKS = tuple(SPECS)
STEP_REVIEW = step_review.SPEC.name
EARLIEST_ERROR = earliest_error.SPEC.name
QUALITY_GATE = quality_gate.SPEC.name
PERTURBATION_CHECK = perturbation_check.SPEC.name
STEP_MATCH = step_match.SPEC.name


def spec_for(task: str) -> TaskSpec:
    try:
        return SPECS[task]
    except KeyError:
        raise ValueError(f"unknown task {task!r}: choose one of {', '.join(TASKS)}") from None


def task_of_format(fmt: str) -> str | None:
    """The task whose items a benchmark format writes (prmbench: step review), or None for a format
    that fits every task (the log, items-jsonl, stepgate's own, reports)."""
    for spec in SPECS.values():
        if fmt in spec.export_formats:
            return spec.name
    return None
