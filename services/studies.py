"""Agreement studies: an admin draws N items of a dataset, each for K blind raters of the study's own.

Drawn as the papers drew (docs/PROTOCOLS.md A5, C1a): from the items the gate kept (qc.sampling.study_pool;
``kept_only=False`` is a pilot over every item), stratified and seeded (qc.sampling), each item given
at draw time to K raters of the study's list who have not seen it (qc.sampling.fresh_raters). A
study never writes an item's gate state: its labels go to its own log (store.studies), which is all
its report and the presets read. A sequential study (issue 20) draws its items in batches: after a
batch is fully labelled, the interval is recomputed (qc.sequential) and the next batch is drawn here,
until the interval reaches the target half-width, the cap, or the items run out.
Only admins (or the database's operator, on the command line) draw; reviewers list and read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from exports import log as log_format
from qc.quality import TASK_FIELDS, long_labels, wide_by_field
from qc.sampling import fresh_raters, stratified_sample, study_pool
from qc.sequential import ADJUSTMENTS, SequentialResult, SequentialRule, sequential_agreement
from services.access import Action, Actor, require, require_admin
from services.errors import InvalidInput, NotFound
from store import studies, users
from store.datasets import get_dataset

if TYPE_CHECKING:
    from store import Store
    from store.datasets import Dataset
    from store.users import Annotator

__all__ = [
    "ADJUSTMENTS",
    "MAX_RATERS",
    "STRATIFY_FIELDS",
    "Sequential",
    "Study",
    "StudyStatus",
    "advance",
    "advance_study",
    "assignments",
    "default_field",
    "describe",
    "draw_study",
    "export_labels",
    "list_studies",
    "outcomes",
    "rater_choices",
    "reassign",
    "removed_raters",
    "status",
    "study_status",
]

MAX_RATERS = studies.MAX_RATERS
STRATIFY_FIELDS = studies.STRATIFY_FIELDS
Study = studies.Study
# The field whose agreement a study's stopping rule watches, where a paper said: PRMBench-V's raters
# judged whether each modification was reasonable. Other tasks: their first label field.
_STUDY_FIELD = {"step_review": "modification"}


@dataclass(frozen=True)
class Sequential:
    """Stop when the observed agreement's interval half-width reaches ``target`` (items drawn
    ``batch`` at a time; the study's N is the cap)."""

    target: float
    batch: int
    field: str | None = None  # default_field(task)
    confidence: float = 0.95
    adjust: str = "bonferroni"


def default_field(task: str) -> str | None:
    fields = list(TASK_FIELDS.get(task, {}))
    return _STUDY_FIELD.get(task) or (fields[0] if fields else None)


def _dataset(store: Store, name: str | None) -> Dataset:
    if not name:
        raise InvalidInput("pick a dataset at the top of the dashboard first")
    found = get_dataset(store, name)
    if found is None:
        raise NotFound(f"there is no dataset named {name!r}")
    return found


def list_studies(store: Store, user: Actor, dataset: str | None = None) -> pd.DataFrame:
    """Every study (of one dataset, if named) with its progress, batches and stopping rule."""
    require(user, Action.SEE_LABELS)
    dataset_id = _dataset(store, dataset).id if dataset is not None else None
    frame = studies.list_studies(store, dataset_id)
    per_batch = []
    for name, batches in zip(frame["study"], frame["batches"], strict=True):
        found = studies.get_study(store, name) if batches > 1 else None
        rows = studies.batch_progress(store, found) if found is not None else None
        per_batch.append(
            ", ".join(f"{d}/{n}" for _, n, d in rows.itertuples(index=False)) if rows is not None else ""
        )
    return frame.assign(per_batch=per_batch)


def rater_choices(store: Store, user: Annotator) -> list[str]:
    """Admins: who may be on a study's rater list: the annotators (reviewers read every study's labels,
    so they could not rate blind)."""
    require_admin(user)
    return [u.name for u in users.list_users(store) if u.role == "annotator"]


def _raters(store: Store, names: list[str] | None, k: int) -> dict[str, int]:
    """The study's rater list, name -> id: the given names (each an annotator of this app: reviewers
    read every study's labels), or by default every annotator."""
    if names is None:
        found = {u.name: u.id for u in users.list_users(store) if u.role == "annotator"}
    else:
        wanted = sorted({n.strip() for n in names if n and n.strip()})
        found = {}
        unknown = []
        for name in wanted:
            user = users.get_user(store, name)
            if user is None:
                unknown.append(name)
            elif user.role != "annotator":
                raise InvalidInput(
                    f"{user.name} is an {user.role}: a study's raters are annotators, who work blind "
                    "(adjudicators and admins can read every study's labels)"
                )
            else:
                found[user.name] = user.id
        if unknown:
            raise InvalidInput(f"no annotator named {', '.join(map(repr, unknown))}: check the rater list")
    if len(found) < k:
        raise InvalidInput(
            f"the study needs {k} raters per item but its rater list has {len(found)}"
            + ("" if names is not None else " (every annotator by default): add annotators or list raters")
        )
    return found


def _draw_batch(
    store: Store,
    dataset: Dataset,
    *,
    size: int,
    kept_only: bool,
    stratify_by: str | None,
    seed: int,
    raters: dict[str, int],
    k: int,
    load: dict[str, int],
    exclude: set[int],
) -> tuple[pd.DataFrame, dict[int, list[int]]]:
    """``size`` items and their K raters each (annotator ids), from the candidates that have K raters
    of the list who have not seen them; InvalidInput when there are too few, saying how many."""
    candidates = studies.study_candidates(store, dataset.id)
    if kept_only:
        candidates = study_pool(candidates)
    candidates = candidates[~candidates["item_id"].isin(exclude)]
    seen = studies.seen_by(store, [int(i) for i in candidates["item_id"]], dataset.id)
    names = set(raters)
    enough = [int(i) for i in candidates["item_id"] if len(names - seen[int(i)]) >= k]
    left_out = len(candidates) - len(enough)
    candidates = candidates[candidates["item_id"].isin(enough)].reset_index(drop=True)
    if size > len(candidates):
        kind = "kept items" if kept_only else "items a study can draw"
        extra = (
            f" ({left_out} more have fewer than {k} raters of the list who have not seen them)"
            if left_out
            else ""
        )
        raise InvalidInput(f"{dataset.name} has {len(candidates)} {kind} left to draw, not {size}{extra}")
    drawn = stratified_sample(candidates, size, stratify_by, seed)
    ids = [int(i) for i in drawn["item_id"]]
    plan = fresh_raters(ids, sorted(raters), seen, k, seed, load=load)
    return drawn, {i: [raters[n] for n in plan[i]] for i in ids}


def _batch_seed(seed: int, batch: int) -> int:
    return seed + 7919 * (batch - 1)  # each batch its own draw, the same every time


def draw_study(
    store: Store,
    user: Actor,
    *,
    dataset: str | None,
    name: str,
    n_items: int | None,
    raters: int | None,
    stratify_by: str | None = "error_type",
    seed: int = 0,
    kept_only: bool = True,
    rater_names: list[str] | None = None,
    sequential: Sequential | None = None,
    now: datetime | None = None,
) -> Study:
    """Admins only (or the command line, OPERATOR): draw the sample and assign each item K raters of
    ``rater_names`` (default: every annotator) who have not seen it; a bad request stores nothing.

    ``kept_only`` (the default) draws as the papers drew: only items the gate kept. Off, it is a pilot
    over every item the gate has not sent to regeneration; either way no item's gate state changes.
    With ``sequential``, ``n_items`` is the cap and only the first batch is drawn now.
    """
    require(user, Action.ADMINISTER)
    found = _dataset(store, dataset)
    if n_items is None or raters is None:
        raise InvalidInput("give the number of items and the raters per item")
    name = (name or "").strip()
    try:
        studies.check_study(store, name, n_items, raters, stratify_by)
        rule = _rule(found, sequential, n_items)
        team = _raters(store, rater_names, raters)
        size = min(sequential.batch, n_items) if sequential is not None else n_items
        drawn, assigned = _draw_batch(
            store,
            found,
            size=size,
            kept_only=kept_only,
            stratify_by=stratify_by,
            seed=seed,
            raters=team,
            k=raters,
            load={},
            exclude=set(),
        )
        return studies.create_study(
            store,
            name=name,
            dataset_name=found.name,
            raters=raters,
            drawn=drawn,
            assignments=assigned,
            rater_ids=list(team.values()),
            stratify_by=stratify_by,
            seed=seed,
            kept_only=kept_only,
            rule=rule,
            created_by=user.id,  # None: the command line
            now=now,
        )
    except (studies.StudyError, ValueError) as exc:
        raise InvalidInput(str(exc)) from exc


def _rule(dataset: Dataset, sequential: Sequential | None, cap: int) -> studies.StudyRule | None:
    if sequential is None:
        return None
    field = sequential.field or default_field(dataset.task)
    if field is None or field not in TASK_FIELDS.get(dataset.task, {field: ""}):
        choices = ", ".join(TASK_FIELDS.get(dataset.task, {})) or "none"
        raise InvalidInput(f"a {dataset.task} study cannot stop on field {field!r}; fields: {choices}")
    try:
        checked = SequentialRule(
            sequential.target, sequential.batch, cap, sequential.confidence, sequential.adjust
        )
    except ValueError as exc:
        raise InvalidInput(f"cannot use this stopping rule: {exc}") from exc
    return studies.StudyRule(
        field, checked.target, checked.batch, checked.cap, checked.confidence, checked.adjust
    )


def _study(store: Store, name: str) -> Study:
    found = studies.get_study(store, name)
    if found is None:
        raise NotFound(f"There is no study named {name!r}.")
    return found


def outcomes(store: Store, study: Study, field: str, log: pd.DataFrame | None = None) -> list[bool]:
    """In draw order (batch, then item), for each item with all K raters' labels on ``field``:
    True where they agree. What a stopping rule looks at (``log``: the study's labels, if read)."""
    log = studies.study_annotations(store, study) if log is None else log
    if log.empty:
        return []
    wide = wide_by_field(long_labels(log, [field]), [field]).get(field)
    if wide is None:
        return []
    agreed: list[bool] = []
    for item_id in studies.study_items(store, study.id)["item_id"]:
        if int(item_id) not in wide.index:
            continue
        row = wide.loc[int(item_id)].tolist()
        values = [v for v in row if v is not None and not (isinstance(v, float) and np.isnan(v))]
        if len(values) >= study.raters:
            agreed.append(len(set(map(str, values))) == 1)
    return agreed


def _sequential_rule(rule: studies.StudyRule) -> SequentialRule:
    return SequentialRule(rule.target, rule.batch, rule.cap, rule.confidence, rule.adjust)


@dataclass(frozen=True)
class StudyStatus:
    study: Study
    batches: pd.DataFrame  # batch, n_items, items_done
    result: SequentialResult | None  # the stopping rule applied to the labels so far (sequential only)
    note: str  # what the study's figures are: complete, in progress, stopped by which rule


def _note(study: Study, batches: pd.DataFrame, result: SequentialResult | None) -> str:
    done, total = int(batches["items_done"].sum()), int(batches["n_items"].sum())
    rule = study.rule
    if rule is None or result is None:
        state = (
            "complete"
            if done == total
            else f"in progress: figures are provisional until all {total} items have {study.raters} labels"
        )
        return f"{done} of {total} items have {study.raters} labels, {state}."
    per_batch = ", ".join(f"batch {b}: {d}/{n}" for b, n, d in batches.itertuples(index=False))
    head = f"Sequential study on {rule.field} ({per_batch})"
    so_far = (
        f"observed agreement {result.estimate:.3f}, interval {result.lower:.3f} to {result.upper:.3f} "
        f"(half-width {result.half_width:.3f}; {_validity(result)})"
    )
    if rule.stopped_by == "pool":
        return (
            f"{head}: stopped: no more items to draw after {total} (before the target half-width {rule.target:g} "
            f"and the cap of {rule.cap}); over those items {so_far}."
        )
    if result.stopped_by == "running":
        last = batches.iloc[-1]
        return (
            f"{head}: running; batch {int(last['batch'])} waits for {int(last['n_items']) - int(last['items_done'])} "
            f"item(s) to have all {study.raters} labels, then the rule decides (stop at half-width {rule.target:g} "
            f"or {rule.cap} items); "
            + (
                f"over the {result.n_items} items of the finished batches {so_far}."
                if result.n_items
                else "no batch is fully labelled yet."
            )
        )
    return f"{head}. {result.note()}"


def _validity(result: SequentialResult) -> str:
    rule = result.rule
    if rule.adjust == "bonferroni":
        return (
            f"{rule.confidence:.0%} interval valid under this stopping rule: Wilson at {rule.look_confidence:.4f} "
            f"at each of up to {rule.looks} looks, Bonferroni"
        )
    return f"{rule.confidence:.0%} Wilson interval NOT adjusted for stopping"


def status(store: Store, study: Study) -> StudyStatus:
    """Progress per batch and, for a sequential study, its stopping rule over the labels so far."""
    batches = studies.batch_progress(store, study)
    result = None
    if study.rule is not None:
        result = sequential_agreement(outcomes(store, study, study.rule.field), _sequential_rule(study.rule))
    return StudyStatus(study, batches, result, _note(study, batches, result))


def study_status(store: Store, user: Actor, name: str) -> StudyStatus:
    """Reviewers (or the command line, OPERATOR): a study's progress per batch and stop reason."""
    require(user, Action.SEE_LABELS)
    return status(store, _study(store, name))


def advance(store: Store, study_id: int, now: datetime | None = None) -> str | None:
    """After a study label: when a sequential study's last batch is fully labelled, apply its rule and
    either record why it stopped or draw the next batch. Returns what happened (None: nothing due).
    Safe to call at any time and from several threads: a batch is drawn once (store.studies.add_batch)."""
    study = studies.get_study_by_id(store, study_id)
    if study is None or study.rule is None or study.rule.stopped_by:
        return None
    batches = studies.batch_progress(store, study)
    if (batches["items_done"] < batches["n_items"]).any():
        return None
    result = sequential_agreement(outcomes(store, study, study.rule.field), _sequential_rule(study.rule))
    if result.stopped_by in ("target", "cap"):
        studies.set_stopped(store, study.id, result.stopped_by, now)
        return result.stopped_by
    dataset = get_dataset(store, study.dataset_id)
    if dataset is None:
        return None
    size = min(study.rule.batch, study.rule.cap - study.n_items)
    team = {n: u.id for n in studies.study_rater_names(store, study.id) if (u := users.get_user(store, n))}
    batch = study.batches + 1
    try:
        drawn, assigned = _draw_batch(
            store,
            dataset,
            size=size,
            kept_only=study.kept_only,
            stratify_by=study.stratify_by,
            seed=_batch_seed(study.seed, batch),
            raters=team,
            k=study.raters,
            load=studies.rater_load(store, study.id),
            exclude=set(studies.study_items(store, study.id)["item_id"].astype(int)),
        )
    except (InvalidInput, ValueError):
        studies.set_stopped(store, study.id, "pool", now)  # nothing left to draw: the report says so
        return "pool"
    try:
        added = studies.add_batch(store, study.id, batch, drawn, assigned, now)
    except studies.StudyError:
        return None  # the items changed meanwhile: the next label tries again
    return f"batch {batch}" if added else None


def advance_study(store: Store, user: Actor, name: str) -> str | None:
    """Admins (or the command line, OPERATOR): check a sequential study now, as a label would (after
    a restart between a batch's last label and the next draw, say)."""
    require(user, Action.ADMINISTER)
    return advance(store, _study(store, name).id)


def assignments(store: Store, user: Actor, name: str) -> dict[int, list[str]]:
    """Admins (or the command line, OPERATOR): each study item's raters, as drawn."""
    require(user, Action.ADMINISTER)
    return studies.assigned_raters(store, _study(store, name).id)


LABEL_FORMATS = {
    "csv": log_format.write_csv,
    "jsonl": log_format.write_jsonl,
    "parquet": log_format.write_parquet,
}


def export_labels(store: Store, user: Actor, name: str, out: Path, fmt: str | None = None) -> int:
    """Reviewers (or the command line, OPERATOR): the study's own labels, every stored row
    (corrections too), written as the raw annotation log is (exports.log); the rows written."""
    require(user, Action.SEE_LABELS)
    found = _study(store, name)
    fmt = fmt or out.suffix.lstrip(".").lower()
    if fmt not in LABEL_FORMATS:
        raise InvalidInput(
            f"write the study's labels as {', '.join(LABEL_FORMATS)}, not {fmt or 'no format'!r}"
        )
    try:
        return LABEL_FORMATS[fmt](studies.study_annotations(store, found), out)
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror or exc}") from exc


def describe(study: Study) -> str:
    """A drawn study in words: what was drawn and, for a sequential one, its rule."""
    kind = "kept items" if study.kept_only else "items (pilot: not only kept ones)"
    text = f"{study.n_items} {kind} of {study.dataset}, {study.raters} raters each"
    if study.rule is not None:
        text += (
            f"; sequential on {study.rule.field}: batches of {study.rule.batch} until the interval "
            f"half-width is {study.rule.target:g} or {study.rule.cap} items"
        )
    return text


@dataclass(frozen=True)
class Reassigned:
    """What a reassignment did: items given to the new rater, and those left (they had seen them)."""

    study: str
    from_rater: str
    to_rater: str
    moved: list[str]
    kept: list[str]

    def summary(self) -> str:
        text = f"{self.study}: gave {len(self.moved)} pending item(s) of {self.from_rater} to {self.to_rater}"
        if self.moved:
            text += f" ({', '.join(self.moved)})"
        if self.kept:
            text += (
                f"; {len(self.kept)} left with {self.from_rater}: {self.to_rater} has seen them "
                f"({', '.join(self.kept)}), reassign them to someone else"
            )
        return text


def removed_raters(store: Store, user: Annotator, name: str) -> list[str]:
    """Admins: the study's removed raters with pending items, for the reassignment form."""
    require_admin(user)
    return studies.removed_raters_pending(store, _study(store, name).id)


def reassign(
    store: Store,
    user: Actor,
    name: str,
    from_rater: str,
    to_rater: str,
    now: datetime | None = None,
) -> Reassigned:
    """Admins (or the command line, OPERATOR): a removed rater's pending study items (assigned, not
    labelled by them) go to another annotator, each one they have not seen (labelled, or rate in a
    study), so the study can finish blind. Items the new rater has seen stay with the removed one."""
    require(user, Action.ADMINISTER)
    study = _study(store, name)
    if users.get_user(store, from_rater) is not None:
        raise InvalidInput(
            f"{from_rater} is still an active annotator: only a removed rater's pending items are reassigned "
            f"(remove them first: python app.py users remove {from_rater})"
        )
    from_id = studies.removed_annotator_id(store, from_rater)
    if from_id is None:
        raise NotFound(f"there is no removed annotator named {from_rater!r}")
    target = users.get_user(store, to_rater)
    if target is None:
        raise NotFound(f"there is no active annotator named {to_rater!r} to give the items to")
    if target.role != "annotator":
        raise InvalidInput(
            f"{target.name} is an {target.role}: a study's raters are annotators, who work blind "
            "(adjudicators and admins can read every study's labels)"
        )
    moved, kept = studies.reassign_pending(store, study.id, from_id, target.id, target.name, now)
    return Reassigned(study.name, from_rater, target.name, moved, kept)
