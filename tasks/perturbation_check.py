"""Perturbation check: ConfProBench's quality control of perturbed steps and images.

A checker compares an original with its perturbed version against the type's checklist and
passes or fails the variant. The panel is still to come; until then a label is its verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import Choice, Decision, Item, TaskSpec, choose

__all__ = ["CHOICES", "SPEC"]

CHOICES = {"verdict": Choice("Verdict", ("pass", "fail"))}


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    return dict(choose(payload, CHOICES))


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, int], item: Item) -> Decision:
    if len(labels) < target:
        return Decision(target, "open", None, None)
    return Decision(target, "complete", {"labels": len(labels)}, len(labels))


SPEC = TaskSpec(
    name="perturbation_check",
    title="Perturbation check",
    choices=CHOICES,
    defaults={"annotators_per_item": 1, "quorum": 3, "max_annotators": 5},
    export_formats=(),
    validate_label=_validate,
    decide_item=_decide,
)
