"""Step match: CRYSTAL's metric validation (supplementary S5): does a predicted step match a reference step?

Annotators label sampled pairs match / no-match, blind to the encoder's similarity and decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import Choice, Decision, Item, TaskSpec, choose

__all__ = ["CHOICES", "SPEC"]

CHOICES = {"match": Choice("Match", ("match", "no_match"))}


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    return dict(choose(payload, CHOICES))


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, int], item: Item) -> Decision:
    if len(labels) < target:
        return Decision(target, "open", None, None)
    return Decision(target, "complete", {"labels": len(labels)}, len(labels))


SPEC = TaskSpec(
    name="step_match",
    title="Step-match study",
    choices=CHOICES,
    defaults={"annotators_per_item": 1, "quorum": 3, "max_annotators": 5},
    export_formats=(),
    validate_label=_validate,
    decide_item=_decide,
)
