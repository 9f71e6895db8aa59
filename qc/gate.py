"""The gate: turns a submitted label into a stored annotation and the item's next state.

Runs inside one store transaction, so the label, the assignment and the decision are committed
together before the annotator is told "saved". The decision itself comes from pure functions
(`decide`), the writes from store functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from qc.consensus import earliest_error_consensus, majority_vote
from qc.tasks import PayloadError, validate_payload
from store import annotations, datasets, items, state
from store.datasets import Dataset
from store.db import Store
from store.items import ItemView
from store.records import EARLIEST_ERROR, NO_ERROR, STEP_REVIEW
from store.users import Annotator

__all__ = ["GateError", "SubmitResult", "decide", "now_utc", "submit"]


class GateError(ValueError):
    """A submit that cannot be accepted; nothing was stored."""


@dataclass(frozen=True)
class SubmitResult:
    annotation_id: int
    duplicate: bool
    status: str
    target: int


@dataclass(frozen=True)
class Decision:
    target: int
    status: str
    decision: dict[str, Any] | None
    settled_at: int | None


def now_utc() -> datetime:
    """Naive UTC: what the store compares lease times in."""
    return datetime.now(UTC).replace(tzinfo=None)


def decide(dataset: Dataset, item: ItemView, labels: list[dict[str, Any]], target: int) -> Decision:
    """The item's state after these labels (arrival order), by the dataset's task rule."""
    if dataset.task == EARLIEST_ERROR:
        result = earliest_error_consensus(
            [int(p["earliest_error"]) for p in labels],
            quorum=int(dataset.setting("quorum")),
            max_annotators=int(dataset.setting("max_annotators")),
        )
        status = "open" if result.status == "pending" else result.status
        decision: dict[str, Any] = {"label": result.label, "labels": len(labels)}
        # ProcessBench discards items whose final answer is wrong but whose consensus says "no error".
        if result.status == "consensus" and result.label == NO_ERROR and item.final_answer_correct is False:
            status, decision["flag"] = "discarded", "final answer wrong but consensus says all steps correct"
        settled = len(labels) if status != "open" else None
        return Decision(len(labels) + result.needed, status, decision, settled)
    if len(labels) < target:
        return Decision(target, "open", None, None)
    if dataset.task == STEP_REVIEW:
        return _step_review_decision(labels, target)
    return Decision(target, "complete", {"labels": len(labels)}, len(labels))


def _step_review_decision(labels: list[dict[str, Any]], target: int) -> Decision:
    """PRMBench-V keeps an instance whose original chain is correct and whose modification is
    reasonable; with several annotators the majority decides, and a tie goes to an adjudicator."""
    keep = majority_vote(
        p.get("original") == "correct" and p.get("modification") == "reasonable" for p in labels
    )
    difficulty = majority_vote(p.get("difficulty") for p in labels)
    decision = {"labels": len(labels), "keep": keep.label, "difficulty": difficulty.label}
    if keep.status == "tie":
        return Decision(target, "disputed", decision, len(labels))
    return Decision(target, "complete" if keep.label else "rejected", decision, len(labels))


def submit(
    store: Store,
    *,
    annotator: Annotator,
    item_id: int,
    version_id: int,
    payload: dict[str, Any],
    request_id: str,
    seconds_spent: float | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Store one label and settle the item's state; a retried request id is stored once."""
    now = now or now_utc()
    if not request_id or len(request_id) > 128:
        raise GateError("a submit needs a request id of 1-128 characters")
    try:
        return _submit(store, annotator, item_id, version_id, payload, request_id, seconds_spent, now)
    except annotations.AnnotationConflict:
        # The id is in the log already (the transaction was rolled back): a retry of a stored submit,
        # or an id reused for something else.
        previous = annotations.annotation_by_request(store, request_id)
        if previous is None or previous.annotator_id != annotator.id or previous.item_id != item_id:
            raise GateError(
                "this request id was already used for another submit; nothing was stored"
            ) from None
        current = state.get_item_state(store, item_id)
        return SubmitResult(
            previous.id, True, current.status if current else "open", current.target if current else 0
        )


def _submit(
    store: Store,
    annotator: Annotator,
    item_id: int,
    version_id: int,
    payload: dict[str, Any],
    request_id: str,
    seconds_spent: float | None,
    now: datetime,
) -> SubmitResult:
    with store.writing() as tx:
        item = items.get_item(tx, item_id)
        if item is None:
            raise GateError(f"there is no item {item_id}")
        rows = annotations.item_annotations(tx, item_id, version_id) if item.version_id == version_id else []
        for row in rows:
            if row.request_id == request_id:  # the common retry: same item, same attempt
                if row.annotator_id != annotator.id:
                    raise GateError("this request id was already used for another submit; nothing was stored")
                current = state.get_item_state(tx, item_id)
                return SubmitResult(
                    row.id, True, current.status if current else "open", current.target if current else 0
                )
        if item.version_id != version_id:
            previous = annotations.annotation_by_request(tx, request_id)
            if previous is not None and previous.annotator_id == annotator.id and previous.item_id == item_id:
                return SubmitResult(previous.id, True, "open", 0)
            raise GateError(
                f"item {item.external_id} changed (now version {item.version}) since you opened it; "
                "your label was not saved: reload the item"
            )
        dataset = datasets.get_dataset(tx, item.dataset_id)
        assert dataset is not None
        try:
            clean = validate_payload(dataset.task, payload, item)
        except PayloadError as exc:
            raise GateError(str(exc)) from exc
        if not store.scheduler.can_submit(tx, dataset.id, item_id, annotator.id, now):
            raise GateError(
                f"item {item.external_id} already has all the annotators it needs "
                "(your lease had expired); your label was not saved"
            )
        stored = annotations.insert_annotation(
            tx,
            request_id=request_id,
            annotator_id=annotator.id,
            item_id=item_id,
            version_id=version_id,
            dataset_id=dataset.id,
            task=dataset.task,
            payload=clean,
            seconds_spent=seconds_spent,
            now=now,
        )
        first_label = all(row.annotator_id != annotator.id for row in rows)
        labels = [a.payload for a in annotations.latest_per_annotator([*rows, stored])]
        target = store.scheduler.target_of(tx, dataset.id, item_id)
        if target is None:
            current = state.get_item_state(tx, item_id)
            target = current.target if current else 1
        result = decide(dataset, item, labels, target)
        state.set_item_state(
            tx,
            item_id,
            target=result.target,
            status=result.status,
            decision=result.decision,
            settled_at=result.settled_at,
            now=now,
        )
        tx.after_commit(
            partial(
                store.scheduler.record_done,
                dataset.id,
                item_id,
                annotator.id,
                target=result.target,
                open_=result.status == "open",
                first_label=first_label,
            )
        )
    return SubmitResult(stored.id, False, result.status, result.target)
