"""Earliest error: ProcessBench's expert annotation (Zheng et al. 2024, sec. 3.2).

An annotator picks the earliest wrong step of a solution, or "all steps are correct" (-1). Three
annotators see each item blind; while no three agree a 4th and then a 5th are added; with no
three-way agreement within five the item is discarded, and so is an item whose final answer is
wrong while the consensus says every step is correct.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tasks.base import NO_ERROR, Decision, Item, PayloadError, TaskSpec, solution_length

__all__ = ["SPEC", "Consensus", "earliest_error_consensus"]


@dataclass(frozen=True)
class Consensus:
    """Where an item stands under the escalation rule after the labels received so far."""

    status: Literal["pending", "consensus", "discarded"]
    label: Any  # the agreed label, None unless status == "consensus"
    needed: int  # annotators to assign now
    settled_at: int | None  # number of labels when the item settled (3 -> "3/3", 4 -> "3/4", ...)
    n_labels: int  # labels received


def earliest_error_consensus(labels: Sequence[Any], quorum: int = 3, max_annotators: int = 5) -> Consensus:
    """ProcessBench's rule: ``quorum`` agreeing labels within ``max_annotators``.

    Labels are read in arrival order; the item settles on the first prefix that decides it, and
    labels after that do not change the decision. It is discarded as soon as no label can still
    reach the quorum with the annotators left, e.g. four different labels out of five.
    """
    if not 1 <= quorum <= max_annotators:
        raise ValueError(f"need 1 <= quorum <= max_annotators, got quorum={quorum}, max={max_annotators}")
    counts: Counter[Any] = Counter()
    for n, label in enumerate(labels, start=1):
        counts[label] += 1
        if counts[label] >= quorum:
            return Consensus("consensus", label, 0, n, len(labels))
        if counts.most_common(1)[0][1] + (max_annotators - n) < quorum:
            return Consensus("discarded", None, 0, n, len(labels))
    n = len(labels)
    needed = quorum - n if n < quorum else 1
    return Consensus("pending", None, needed, None, n)


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    value = payload.get("earliest_error")
    if value is None or value == "":
        raise PayloadError("please click the earliest wrong step, or choose 'all steps are correct'")
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise PayloadError(f"earliest error: {value!r} is not a step number")
    try:
        label = int(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PayloadError(f"earliest error: {value!r} is not a step number") from exc
    n = solution_length(item)
    if not NO_ERROR <= label < n:
        raise PayloadError(f"earliest error: step {label + 1} does not exist (this solution has {n} steps)")
    return {"earliest_error": label}


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item) -> Decision:
    result = earliest_error_consensus(
        [int(p["earliest_error"]) for p in labels],
        quorum=int(settings.get("quorum", 3)),
        max_annotators=int(settings.get("max_annotators", 5)),
    )
    status = "open" if result.status == "pending" else result.status
    decision: dict[str, Any] = {"label": result.label, "labels": len(labels)}
    if result.status == "consensus" and result.label == NO_ERROR and item.final_answer_correct is False:
        status, decision["flag"] = "discarded", "final answer wrong but consensus says all steps correct"
    settled = len(labels) if status != "open" else None
    return Decision(len(labels) + result.needed, status, decision, settled)


SPEC = TaskSpec(
    name="earliest_error",
    title="Earliest error",
    choices={},
    defaults={"annotators_per_item": 1, "quorum": 3, "max_annotators": 5},
    export_formats=("processbench", "processbench-all"),
    validate_label=_validate,
    decide_item=_decide,
    escalates=True,
)
