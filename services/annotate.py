"""Annotating, for any task: next item, jump, previous, skip, submit. One call per panel action.

Every function takes the annotator from the session and returns only what that annotator may see.
On a blind task nothing returned depends on other annotators' labels: a submit answers "saved"
(never the item's consensus), progress counts the annotator's own work, and an item that is not
available says so in one way whether others hold it or have settled it.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from services import studies as study_service
from services.access import may_see_archived
from services.clock import now_utc
from services.dataset_settings import label_limits, settings_of
from services.decide import settle
from services.errors import AlreadyLabelled, Conflict, InvalidInput, NotAllowed, NotFound
from services.leasing import leases_of
from store import annotations as annotation_log
from store import assignments, datasets, drafts, items, state, studies, work
from store.datasets import Dataset
from store.db import Store, Tx
from store.errors import StoreExclusiveNeeded
from store.items import ItemView
from store.users import Annotator
from store.work import WorkError, WorkItem
from tasks import PayloadError, spec_for
from tasks.base import check_seconds

__all__ = [
    "Receipt",
    "WorkItem",
    "annotators_per_item",
    "dataset_for",
    "jump_to",
    "next_in_history",
    "next_item",
    "previous_item",
    "progress",
    "saved_attempt",
    "skip_item",
    "submit",
    "why_nothing_left",
]

_MAX_REQUEST_ID = 128
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Receipt:
    """What an annotator learns from a submit: it is stored (once), and nothing about the others."""

    annotation_id: int
    duplicate: bool


def dataset_for(store: Store, name: str | None, task: str | None = None) -> Dataset:
    dataset = datasets.get_dataset(store, name or "") if name else None
    if dataset is None:
        raise NotFound(f"there is no dataset named {name!r}" if name else "choose a dataset first")
    if task is not None and dataset.task != task:
        raise InvalidInput(f"dataset {dataset.name!r} is a {dataset.task} dataset, not {task}")
    return dataset


def saved_attempt(store: Store, user: Annotator, request_id: str) -> bool:
    """This user's attempt is stored already: a choice event that arrives after its save is stale."""
    if not request_id:
        return False
    return user.id in annotation_log.request_annotators(store, request_id)


def why_nothing_left(store: Store, user: Annotator, dataset: Dataset, now: datetime | None = None) -> str:
    """Why next_item found nothing, and when to look again: items held by others return when their
    leases run out (it says how many and when, never whose or with what label)."""
    now = now or now_utc()
    held, first = leases_of(store).held_by_others(store, dataset.id, user.id, now)
    if held and first is not None:
        minutes = max(1, round((first - now).total_seconds() / 60))
        items = "item is" if held == 1 else "items are"
        return (
            f"{held} {items} being labelled by others right now; if one is left unfinished it comes back "
            f"to the pool in about {minutes} minute(s) (at {first:%H:%M} UTC). Everything else here is "
            "labelled by you or has all the annotators it needs."
        )
    return "Every item here is labelled by you or has all the annotators it needs."


def annotators_per_item(dataset: Dataset) -> int | None:
    """How many annotators each item of a non-escalating task gets (None where disagreement adds more)."""
    spec = spec_for(dataset.task)
    return None if spec.escalates else spec.initial_target(settings_of(dataset))


def progress(store: Store, user: Annotator, dataset: Dataset) -> dict[str, int]:
    """Counts the user may see: an annotator's own work and the dataset size; reviewers see all."""
    counts = assignments.progress(store, dataset.id, user.id, leases_of(store), settled=user.can_see_labels)
    return _visible(user, counts)


def _visible(user: Annotator, counts: dict[str, int]) -> dict[str, int]:
    if user.can_see_labels:
        return counts
    return {"total": counts["total"], "mine": counts["mine"]}


def _seen_by(user: Annotator, found: WorkItem | None) -> WorkItem | None:
    """The item with the counts this user may see (store.work counted them for this user already)."""
    if found is None:
        return None
    return dataclasses.replace(found, progress=_visible(user, found.progress))


def _navigate(call: Any, store: Store, user: Annotator, *args: Any) -> WorkItem | None:
    if args and isinstance(args[0], Dataset) and args[0].archived and not may_see_archived(user):
        raise NotFound(f"there is no dataset named {args[0].name!r}")  # archived: as if it were not
    try:
        return _seen_by(user, call(store, leases_of(store), user, *args))
    except WorkError as exc:
        raise NotFound(str(exc)) from exc


def next_item(
    store: Store, user: Annotator, dataset: Dataset, now: datetime | None = None
) -> WorkItem | None:
    """The item the user holds, or the next one the dataset's rules give them; None when all is done."""
    return _navigate(work.next_item, store, user, dataset, now or now_utc())


def jump_to(
    store: Store, user: Annotator, dataset: Dataset, ref: str, now: datetime | None = None
) -> WorkItem:
    """Open an item by its id in the source file or its 1-based number in the dataset."""
    found = _navigate(work.jump_to, store, user, dataset, ref, now or now_utc())
    if found is None:  # work.jump_to raises rather than return nothing; kept for the type checker
        raise NotFound(f"no item {ref!r} in {dataset.name}")
    return found


def previous_item(
    store: Store, user: Annotator, dataset: Dataset, current_item_id: int | None
) -> WorkItem | None:
    return _navigate(work.previous_item, store, user, dataset, current_item_id)


def next_in_history(
    store: Store, user: Annotator, dataset: Dataset, current_item_id: int, now: datetime | None = None
) -> WorkItem | None:
    return _navigate(work.next_in_history, store, user, dataset, current_item_id, now or now_utc())


def skip_item(
    store: Store, user: Annotator, dataset: Dataset, item_id: int, now: datetime | None = None
) -> WorkItem | None:
    """Give back the item the user holds and move on; any other item id is refused."""
    now = now or now_utc()
    item_id = _whole(item_id, "item_id")
    if not leases_of(store).holds(store, dataset.id, item_id, user.id, now):
        raise NotAllowed(
            f"you do not hold item {item_id} in {dataset.name}: only the item you were given can be skipped"
        )
    return _navigate(work.skip_item, store, user, dataset, item_id, now)


def _whole(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidInput(f"{field}: {value!r} is not a whole number")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{field}: {value!r} is not a whole number") from None
    if (isinstance(value, float) and not value.is_integer()) or not 0 < number < 2**62:
        raise InvalidInput(f"{field}: {value!r} is not a valid id")
    return number


def submit(
    store: Store,
    *,
    annotator: Annotator,
    item_id: Any,
    version_id: Any,
    payload: Any,
    request_id: Any,
    seconds_spent: Any = None,
    now: datetime | None = None,
    first_label: bool = False,
    draft: tuple[str, str] | None = None,
) -> Receipt:
    """Store one label and settle the item's state; a retried request id is stored once.

    Accepted only on an item leased to the annotator, or as a correction of their own earlier
    label while the dataset allows corrections. ``first_label``: the page showed the item as not yet
    labelled; if a label of this annotator is there already (saved from another tab), nothing is
    stored and they are told, rather than the save silently becoming a correction. ``draft``: the
    (panel, key) of the unsaved choices this label replaces, deleted in the label's own transaction (one
    commit a save, and never a label without its draft gone, nor the reverse).
    Nothing is stored, and no draft deleted, when an error is raised.
    """
    now = now or now_utc()
    item_id, version_id = _whole(item_id, "item_id"), _whole(version_id, "version_id")
    if not isinstance(request_id, str) or not 1 <= len(request_id) <= _MAX_REQUEST_ID:
        raise InvalidInput(f"a submit needs a request id of 1-{_MAX_REQUEST_ID} characters")
    attempt = _Attempt(annotator, item_id, version_id, payload, request_id, seconds_spent, now, first_label)
    try:
        try:
            receipt, study_id = _submit(store, attempt, shared=True, draft=draft)
        except StoreExclusiveNeeded:  # rolled back: what it met must not run beside other labels
            receipt, study_id = _submit(store, attempt, shared=False, draft=draft)
    except annotation_log.AnnotationConflict:
        # The id is in the log already (the transaction was rolled back): a retry of a stored submit,
        # or an id reused for something else.
        previous = annotation_log.annotation_by_request(store, request_id) or studies.label_by_request(
            store, request_id
        )
        if previous is None or previous.annotator_id != annotator.id or previous.item_id != item_id:
            raise Conflict(
                "this request id was already used for another submit; nothing was stored"
            ) from None
        if draft is not None:
            drafts.delete_draft(store, annotator.id, *draft)
        return Receipt(previous.id, True)
    if study_id is not None and not receipt.duplicate:
        _advance(store, study_id, now)
    return receipt


def _advance(store: Store, study_id: int, now: datetime) -> None:
    """A sequential study draws its next batch when due. The label is committed already: a failure
    here must not answer the rater with an error (the next label, or `studies advance`, tries again)."""
    try:
        study_service.advance(store, study_id, now)
    except Exception:
        _log.exception("study %s: the next batch could not be drawn after a label", study_id)


def _retry_of(
    rows: list[annotation_log.StoredAnnotation], annotator: Annotator, request_id: str
) -> Receipt | None:
    for row in rows:
        if row.request_id == request_id:  # the common retry: same item, same attempt
            if row.annotator_id != annotator.id:
                raise Conflict("this request id was already used for another submit; nothing was stored")
            return Receipt(row.id, True)
    return None


class _Attempt(NamedTuple):
    """One submit as the caller sent it, checked for shape."""

    annotator: Annotator
    item_id: int
    version_id: int
    payload: Any
    request_id: str
    seconds_spent: Any
    now: datetime
    first_label: bool


def _submit(
    store: Store, attempt: _Attempt, *, shared: bool, draft: tuple[str, str] | None = None
) -> tuple[Receipt, int | None]:
    """The receipt, and the study the label went to (None: a label of the gate).

    `shared`: beside other labels over PostgreSQL, under the item's own lock (store/engines.py
    `_WRITE_LOCK` says which rule is held where); StoreExclusiveNeeded when what the label settles must
    run alone, and then the caller runs it again exclusively."""
    with store.writing(shared=shared, item=attempt.item_id) as tx:
        settled = _label_in(tx, attempt)
        if draft is not None:
            drafts.delete_draft(tx, attempt.annotator.id, *draft)
        return settled


def _label_in(tx: Tx, attempt: _Attempt) -> tuple[Receipt, int | None]:
    """The label checked, stored and settled in `tx`: the receipt and its study, as `_submit` says."""
    annotator, item_id, version_id, payload, request_id, seconds_spent, now, first_label = attempt
    locked = state.locked_state(tx, item_id)
    item = items.get_item(tx, item_id, locked.version_id if locked else None)
    if item is None:
        raise NotFound(f"there is no item {item_id}")
    study_id = leases_of(tx).study_of(tx, item.dataset_id, item_id, annotator.id)
    if study_id is not None:
        receipt = _submit_study(
            tx,
            study_id,
            item,
            annotator,
            version_id,
            payload,
            request_id,
            seconds_spent,
            now,
            first_label,
        )
        return receipt, study_id
    rows = annotation_log.item_annotations(tx, item_id, version_id) if item.version_id == version_id else []
    retried = _retry_of(rows, annotator, request_id)
    if retried is not None:
        return retried, None
    if item.version_id != version_id:
        previous = annotation_log.annotation_by_request(tx, request_id)
        if previous is not None and previous.annotator_id == annotator.id and previous.item_id == item_id:
            return Receipt(previous.id, True), None
        raise _changed_since_opened(item)
    if first_label and any(r.annotator_id == annotator.id and r.task != annotation_log.RULING for r in rows):
        raise AlreadyLabelled(
            f"you already saved a label on item {item.external_id} (in another tab or window); this "
            "one was not saved. Open the item again (p: previous) to see your label and correct it."
        )
    dataset = datasets.get_dataset(tx, item.dataset_id)
    if dataset is None:
        raise NotFound(f"item {item_id} belongs to no dataset")
    clean, seconds = _checked_label(dataset, item, payload, seconds_spent)
    _check_may_label(tx, dataset, item, annotator, rows, now)
    stored = annotation_log.insert_annotation(
        tx,
        request_id=request_id,
        annotator_id=annotator.id,
        item_id=item_id,
        version_id=version_id,
        dataset_id=dataset.id,
        task=dataset.task,
        payload=clean,
        seconds_spent=seconds,
        now=now,
    )
    _settle(
        tx,
        dataset,
        item,
        annotator,
        [*rows, stored],
        first_label=_first_on_item(tx, item, annotator.id, rows),
        now=now,
        locked=locked,
    )
    return Receipt(stored.id, False), None


def _first_on_item(
    tx: Tx, item: ItemView, annotator_id: int, rows: list[annotation_log.StoredAnnotation]
) -> bool:
    """The annotator's first label on the item at any version (rows: this version's): what their progress
    counts, once an item (Scheduler.labelled_by); another version's labels are looked for only where the
    item has had one. A new version made after their label (a failed check's variant, a regeneration)
    is not a new item of theirs, and a recount from the log says the same."""
    if any(r.annotator_id == annotator_id and r.task != annotation_log.RULING for r in rows):
        return False
    return item.version == 1 or not annotation_log.labelled_another_version(
        tx, item.item_id, annotator_id, item.version_id
    )


def _changed_since_opened(item: ItemView) -> Conflict:
    """A label on a version that is no longer the item's current one (gate and study submits alike)."""
    return Conflict(
        f"item {item.external_id} changed (now version {item.version}) since you opened it; "
        "your label was not saved: reload the item"
    )


def _submit_study(
    tx: Tx,
    study_id: int,
    item: ItemView,
    annotator: Annotator,
    version_id: int,
    payload: Any,
    request_id: str,
    seconds_spent: Any,
    now: datetime,
    first_label: bool,
) -> Receipt:
    """A study rater's label on their study item: validated like any, stored in the study's own log
    (store.studies), never a vote on the item's gate state; the reply is the same "saved"."""
    previous = studies.label_by_request(tx, request_id)
    if previous is not None:
        if previous.annotator_id != annotator.id or previous.item_id != item.item_id:
            raise Conflict("this request id was already used for another submit; nothing was stored")
        return Receipt(previous.id, True)
    if item.version_id != version_id:
        raise _changed_since_opened(item)
    dataset = datasets.get_dataset(tx, item.dataset_id)
    if dataset is None:
        raise NotFound(f"item {item.item_id} belongs to no dataset")
    mine = studies.my_study_label(tx, study_id, item.item_id, annotator.id)
    if mine is not None and first_label:
        raise AlreadyLabelled(
            f"you already saved a label on item {item.external_id} (in another tab or window); this "
            "one was not saved."
        )
    if mine is not None and not int(dataset.setting("allow_corrections")):
        raise NotAllowed(
            f"item {item.external_id}: your label is saved and {dataset.name} does not allow corrections"
        )
    clean, seconds = _checked_label(dataset, item, payload, seconds_spent)
    stored = studies.insert_study_label(
        tx,
        study_id=study_id,
        request_id=request_id,
        annotator_id=annotator.id,
        item_id=item.item_id,
        version_id=version_id,
        task=dataset.task,
        payload=clean,
        seconds_spent=seconds,
        now=now,
    )
    tx.after_commit(
        partial(leases_of(tx).record_study, dataset.id, item.item_id, annotator.id, first_label=mine is None)
    )
    return Receipt(stored.id, False)


def _checked_label(
    dataset: Dataset, item: ItemView, payload: Any, seconds_spent: Any
) -> tuple[dict[str, Any], float | None]:
    limits = label_limits(dataset)
    try:
        clean = spec_for(dataset.task).validate(payload, item, limits, settings_of(dataset))
        return clean, check_seconds(seconds_spent, limits)
    except PayloadError as exc:
        raise InvalidInput(str(exc)) from exc


def _check_may_label(
    tx: Tx, dataset: Dataset, item: ItemView, annotator: Annotator, rows: list[Any], now: datetime
) -> None:
    """A lease of this annotator's, or their own earlier label while corrections are allowed."""
    if any(r.annotator_id == annotator.id and r.task != annotation_log.RULING for r in rows):
        if not int(dataset.setting("allow_corrections")):
            raise NotAllowed(
                f"item {item.external_id}: your label is saved and {dataset.name} does not allow corrections"
            )
        return
    verdict = leases_of(tx).may_label(tx, dataset.id, item.item_id, annotator.id, now)
    if verdict == "leased":
        return
    if verdict == "lapsed":
        raise Conflict(
            f"your lease on item {item.external_id} expired and it went to others; your label was not saved"
        )
    raise NotAllowed(f"item {item.external_id} was not given to you; your label was not saved")


def _settle(
    tx: Tx,
    dataset: Dataset,
    item: ItemView,
    annotator: Annotator,
    rows: list[Any],
    *,
    first_label: bool,
    now: datetime,
    locked: state.LockedItem | None = None,
) -> None:
    scheduler = leases_of(tx)
    if scheduler.is_gold(tx, dataset.id, item.item_id):
        # An answer on a gold item is scored against its gold label, never a vote on its state.
        tx.after_commit(
            partial(scheduler.record_gold, dataset.id, item.item_id, annotator.id, first_label=first_label)
        )
        return
    # the target as read under the item's lock (over PostgreSQL what target_of reads, without asking again)
    target = locked.target if locked is not None else scheduler.target_of(tx, dataset.id, item.item_id)
    if target is None:
        current = state.get_item_state(tx, item.item_id)
        target = current.target if current else 1
    result = settle(tx, dataset, item, item.item_id, rows, target, now)
    tx.after_commit(
        partial(
            scheduler.record_done,
            dataset.id,
            item.item_id,
            annotator.id,
            target=result.target,
            open_=result.status == "open",
            first_label=first_label,
        )
    )
