"""Step review: PRMBench-V's process reward annotation tool (its Figure 13).

An annotator marks the original chain Correct/Incorrect, the modification Reasonable/Unreasonable
and the difficulty Easy/Medium/Hard. PRMBench-V keeps an instance whose original chain is correct
and whose modification is reasonable; with several annotators the majority decides and a tie goes
to an adjudicator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import Choice, Decision, Item, TaskSpec, choose, majority_vote

__all__ = ["CHOICES", "RULING", "RULINGS", "SPEC"]

CHOICES = {
    "original": Choice("Original", ("correct", "incorrect")),
    "modification": Choice("Modification", ("reasonable", "unreasonable")),
    "difficulty": Choice("Difficulty", ("easy", "medium", "hard")),
}


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    return dict(choose(payload, CHOICES))


RULING = "adjudication"  # the payload key of an adjudicator's ruling on a disputed item
RULINGS = ("keep", "reject")


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, int], item: Item) -> Decision:
    rulings = [p for p in labels if RULING in p]
    labels = [p for p in labels if RULING not in p]
    if len(labels) < target:
        return Decision(target, "open", None, None)
    keep = majority_vote(
        p.get("original") == "correct" and p.get("modification") == "reasonable" for p in labels
    )
    difficulty = majority_vote(p.get("difficulty") for p in labels)
    decision: dict[str, Any] = {"labels": len(labels), "keep": keep.label, "difficulty": difficulty.label}
    if rulings:  # a tie went to an adjudicator: the latest ruling decides
        ruled = rulings[-1][RULING] == "keep"
        decision.update(keep=ruled, adjudicated=True)
        return Decision(target, "complete" if ruled else "rejected", decision, len(labels))
    if keep.status == "tie":
        return Decision(target, "disputed", decision, len(labels))
    return Decision(target, "complete" if keep.label else "rejected", decision, len(labels))


SPEC = TaskSpec(
    name="step_review",
    title="Step review",
    choices=CHOICES,
    defaults={"annotators_per_item": 1, "quorum": 3, "max_annotators": 5},
    export_formats=("prmbench",),
    validate_label=_validate,
    decide_item=_decide,
)
