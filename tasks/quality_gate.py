"""Quality gate: CRYSTAL's phase-4 human gate (its Figure S3) over multimodal items.

An annotator judges each candidate step and the item on CRYSTAL's four criteria, then accepts or
rejects it. The panel is still to come; until then a label is checked for its verdict only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import Choice, Decision, Item, PayloadError, TaskSpec

__all__ = ["CRITERIA", "SPEC"]

CRITERIA = {
    "c1": "perceptual claims are visible in the image",
    "c2": "transitions are logically sound",
    "c3": "steps are coherent, with no jumps",
    "c4": "executing the steps yields the answer",
}
VERDICT = Choice("Verdict", ("accept", "reject"))


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    verdict = payload.get("verdict")
    if verdict not in VERDICT.values:
        raise PayloadError(f"Verdict: choose one of {', '.join(VERDICT.values)}")
    criteria = payload.get("criteria", {})
    if not isinstance(criteria, dict) or any(
        k not in CRITERIA or not isinstance(v, bool) for k, v in criteria.items()
    ):
        raise PayloadError(f"criteria: an object of {', '.join(CRITERIA)} to true or false")
    if verdict == "accept" and not all(criteria.get(k) for k in CRITERIA):
        raise PayloadError("Accept needs all four criteria to hold; otherwise reject with the failed ones")
    steps = payload.get("steps", {})
    if not isinstance(steps, dict) or any(v not in ("correct", "incorrect") for v in steps.values()):
        raise PayloadError("steps: an object of step number to 'correct' or 'incorrect'")
    return {"verdict": verdict, "criteria": dict(criteria), "steps": {str(k): v for k, v in steps.items()}}


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item) -> Decision:
    if len(labels) < target:
        return Decision(target, "open", None, None)
    verdicts = {p.get("verdict") for p in labels}
    if len(verdicts) > 1:
        return Decision(target, "disputed", {"labels": len(labels)}, len(labels))
    status = "accepted" if verdicts == {"accept"} else "rejected"
    return Decision(target, status, {"labels": len(labels)}, len(labels))


SPEC = TaskSpec(
    name="quality_gate",
    title="Quality gate",
    choices={"verdict": VERDICT},
    defaults={"annotators_per_item": 1, "quorum": 3, "max_annotators": 5},
    export_formats=("crystal",),
    validate_label=_validate,
    decide_item=_decide,
    regenerate_on_reject=True,
)
