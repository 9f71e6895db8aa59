"""Gold items and annotator calibration: admins mark items gold, reviewers watch calibration.

Marking: from an adjudicated or settled item (its ruling, else each field's majority), every
item of a finished study its raters all labelled alike, or a file of (item id, label) rows (an import column). The
scheduler then hands gold items to a share of each annotator's queue (``gold_percent``) exactly
like other items; answers on them never settle anything and stay out of agreement figures unless
``gold_in_agreement`` is 1. Annotators see their own gold accuracy only where ``gold_feedback`` is
1, and then only over whole blocks of their labels with enough gold answers in them, so that no
figure moves with one item (my_gold_accuracy). Every call names its actor (services.access: a
user, or OPERATOR at the command line), and marking records who marked (none for OPERATOR).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qc.dashboard import item_seconds
from qc.dawid_skene import dawid_skene_accuracy
from qc.gold import AlertRule, calibration_figure, calibration_series, calibration_table
from qc.quality import annotator_quality, label_fields, long_labels, wide_by_field
from services.access import Action, Actor, require
from services.decide import decide
from services.errors import InvalidInput, NotFound
from store import annotations as annotation_log
from store import gold as gold_store
from store import state, studies
from store.datasets import Dataset, get_dataset, list_datasets
from store.items import get_item

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from store import Store
    from store.db import Tx
    from store.users import Annotator

__all__ = [
    "Calibration",
    "MarkOutcome",
    "admin_alerts",
    "calibration",
    "for_agreement",
    "gold_frame",
    "import_gold",
    "mark_items",
    "mark_study",
    "my_gold_accuracy",
    "rule_of",
    "unmark_items",
]

# An annotator's own gold figure (gold_feedback = 1) moves only when a block of their labels closes, and
# says nothing until enough gold answers are in it: no change of it points at one item.
FEEDBACK_BLOCK = 20
MIN_FEEDBACK_GOLD = 5
MAX_LABEL_FIELDS = 20


@dataclass(frozen=True)
class MarkOutcome:
    marked: list[str]
    skipped: list[str]  # "id: why"

    def summary(self) -> str:
        text = f"marked {len(self.marked)} item(s) gold"
        if self.skipped:
            text += f"; skipped {len(self.skipped)}: " + "; ".join(self.skipped[:10])
            if len(self.skipped) > 10:
                text += f"; and {len(self.skipped) - 10} more"
        return text


def _dataset(store: Store, name: str | None) -> Dataset:
    found = get_dataset(store, name) if name else None
    if found is None:
        raise NotFound(f"There is no dataset named {name!r}.")
    return found


def _item_ids(store: Store, dataset: Dataset, refs: list[str]) -> dict[str, int | None]:
    known = gold_store.item_ids_by_ref(store, dataset.id)
    return {ref: known.get(ref) for ref in refs}


def _row_id(row: dict[str, Any], id_column: str, where: str) -> str:
    """The item's id from a row: one column, or several joined by ":" as the importer joined them
    (PRMBench's items are "idx:classification": ``id_column="idx:classification"``)."""
    parts = [id_column] if id_column in row else id_column.split(":")
    if not all(part in row for part in parts):
        raise InvalidInput(f"{where}: needs the column {id_column!r}; nothing was marked")
    return ":".join(str(row[part]) for part in parts)


def _check_label(label: Any, where: str) -> dict[str, Any]:
    if isinstance(label, str):
        try:
            label = json.loads(label)
        except json.JSONDecodeError:
            raise InvalidInput(
                f'{where}: the label is not JSON (write it like {{"original": "correct"}})'
            ) from None
    if not isinstance(label, dict) or not label or len(label) > MAX_LABEL_FIELDS:
        raise InvalidInput(f"{where}: a gold label is a JSON object of 1 to {MAX_LABEL_FIELDS} fields")
    if not all(isinstance(v, str | int | float | bool) or v is None for v in label.values()):
        raise InvalidInput(f"{where}: gold label fields hold plain values (text, numbers, true/false)")
    return label


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _accepted_label(tx: Tx, dataset: Dataset, item_id: int) -> tuple[dict[str, Any], str] | None:
    """The item's accepted label. A ruling decides the item (keep or reject, accept or reject), not
    the label an annotator gives: its label is each field's majority over the labels that, each on
    its own, the task's rule settles as the ruling settled the item (an answer is scored field by
    field against it, qc.gold.answer_correct)."""
    found = gold_store.accepted_label(tx, item_id)
    if found is None or found[1] != "adjudicated":
        return found
    current = state.get_item_state(tx, item_id)
    item = get_item(tx, item_id)
    if current is None or item is None:
        return None
    labels = gold_store.latest_labels(tx, item_id)
    side = [p for p in labels if decide(dataset, item, [p], 1).status == current.status]
    label = gold_store.majority_label(side)
    return (label, "adjudicated") if label else None


def mark_items(
    store: Store,
    admin: Actor,
    dataset: str,
    refs: list[str],
    label: Any = None,
    *,
    source: str | None = None,
) -> MarkOutcome:
    """Mark items (by their id in the source file) gold: with ``label`` given (manual), else with their
    accepted label (the side an adjudicator's ruling took, else the settled item's majority); ``source``
    names where the marking came from instead (a study)."""
    require(admin, Action.ADMINISTER)
    found = _dataset(store, dataset)
    manual = _check_label(label, "gold label") if label is not None else None
    ids = _item_ids(store, found, [r.strip() for r in refs if r.strip()])
    if not ids:
        raise InvalidInput("Name at least one item (its id in the source file).")
    marked, skipped = [], []
    with store.writing() as tx:
        for ref, item_id in ids.items():
            if item_id is None:
                skipped.append(f"{ref}: no such item in {found.name}")
                continue
            accepted = (manual, "manual") if manual is not None else _accepted_label(tx, found, item_id)
            if accepted is None:
                skipped.append(f"{ref}: not settled and not adjudicated, so it has no accepted label yet")
                continue
            gold_store.mark_gold(tx, item_id, accepted[0], source or accepted[1], admin.id, _now())
            marked.append(ref)
    return MarkOutcome(marked, skipped)


def mark_study(store: Store, admin: Actor, study: str) -> MarkOutcome:
    """Every item of a study its raters all labelled alike becomes gold with that label; the others are
    listed with why."""
    require(admin, Action.ADMINISTER)
    found = studies.get_study(store, study)
    if found is None:
        raise NotFound(f"There is no study named {study!r}.")
    if not found.own_labels:  # drawn before studies kept their own labels: the gate settled its items
        refs = studies.study_items(store, found.id)["external_id"].astype(str).tolist()
        outcome = mark_items(store, admin, found.dataset, refs, source="study")
        return MarkOutcome(outcome.marked, outcome.skipped)
    return _mark_from_study_labels(store, admin, found)


def _mark_from_study_labels(store: Store, admin: Actor, found: studies.Study) -> MarkOutcome:
    """A study item becomes gold when all its K raters gave the same label (each rater's latest)."""
    items = studies.study_items(store, found.id)
    frame = studies.study_annotations(store, found)
    latest = frame.sort_values("annotation_id").groupby(["item_id", "annotator_id"]).tail(1)
    marked, skipped = [], []
    with store.writing() as tx:
        for item_id, ref in zip(items["item_id"], items["external_id"].astype(str), strict=True):
            labels = [json.loads(p) for p in latest.loc[latest["item_id"] == item_id, "payload"]]
            if len(labels) < found.raters:
                skipped.append(f"{ref}: {len(labels)} of the study's {found.raters} raters have labelled it")
            elif any(label != labels[0] for label in labels[1:]):
                skipped.append(f"{ref}: the study's raters disagreed, so it has no accepted label")
            else:
                gold_store.mark_gold(tx, int(item_id), labels[0], "study", admin.id, _now())
                marked.append(ref)
    return MarkOutcome(marked, skipped)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        return list(csv.DictReader(text.splitlines()))
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(
                    f"{path.name} line {n}: not JSON ({exc.msg}); nothing was marked"
                ) from None
            if not isinstance(row, dict):
                raise InvalidInput(f"{path.name} line {n}: not a JSON object; nothing was marked")
            rows.append(row)
    return rows


def import_gold(
    store: Store,
    admin: Actor,
    dataset: str,
    path: Path,
    *,
    id_column: str = "id",
    label_column: str = "label",
    field: str | None = None,
) -> MarkOutcome:
    """Gold labels from a file's column (JSONL or CSV; the dataset's own file works too): ``id_column``
    names the item, ``label_column`` holds its label (a JSON object, or a plain value of the one
    ``field``); a row whose label cell is empty is no gold item. All or nothing."""
    require(admin, Action.ADMINISTER)
    found = _dataset(store, dataset)
    rows = _read_rows(Path(path))
    labels: dict[str, dict[str, Any]] = {}
    blank = 0
    for n, row in enumerate(rows, 1):
        where = f"{Path(path).name} row {n}"
        ref = _row_id(row, id_column, where)
        value = row.get(label_column)
        if value is None or value == "":
            blank += 1
            continue
        labels[ref] = _check_label({field: value} if field else value, where)
    if not labels:
        raise InvalidInput(f"{Path(path).name}: no row has a label in {label_column!r}; nothing was marked")
    ids = _item_ids(store, found, list(labels))
    missing = [ref for ref, item_id in ids.items() if item_id is None]
    if missing:
        raise InvalidInput(
            f"{len(missing)} id(s) are not items of {found.name} (first: {missing[0]!r}); nothing was marked"
        )
    with store.writing() as tx:
        for ref, item_id in ids.items():
            assert item_id is not None
            gold_store.mark_gold(tx, item_id, labels[ref], "import", admin.id, _now())
    return MarkOutcome(
        list(ids), [f"{blank} row(s): no label in {label_column!r}, not gold"] if blank else []
    )


def unmark_items(store: Store, admin: Actor, dataset: str, refs: list[str]) -> int:
    require(admin, Action.ADMINISTER)
    found = _dataset(store, dataset)
    ids = _item_ids(store, found, refs)
    with store.writing() as tx:
        return sum(gold_store.unmark_gold(tx, i) for i in ids.values() if i is not None)


def for_agreement(store: Store, dataset: Dataset, log: pd.DataFrame) -> pd.DataFrame:
    """The log without answers on gold items, unless the dataset's admin included them."""
    if int(dataset.setting("gold_in_agreement")) or log.empty:
        return log
    answers = gold_store.gold_answer_ids(store, dataset.id)
    return log[~log["annotation_id"].isin(answers)].reset_index(drop=True) if answers else log


def gold_frame(store: Store, user: Actor, dataset: str) -> pd.DataFrame:
    """The dataset's gold items with their labels, source, who marked them and when (reviewers only)."""
    require(user, Action.SEE_LABELS)
    found = _dataset(store, dataset)
    rows = gold_store.gold_items(store, found.id)
    return pd.DataFrame(
        [
            {
                "item": g.external_id,
                "label": json.dumps(g.label, sort_keys=True),
                "source": g.source,
                "marked_by": g.marked_by or "-",
                "marked_at": g.marked_at.strftime("%Y-%m-%d %H:%M"),
            }
            for g in rows
        ],
        columns=["item", "label", "source", "marked_by", "marked_at"],
    )


def rule_of(dataset: Dataset) -> AlertRule:
    return AlertRule(
        threshold=int(dataset.setting("gold_alert_accuracy")) / 100.0,
        min_items=int(dataset.setting("gold_alert_min_items")),
        window=int(dataset.setting("gold_alert_window")),
    )


@dataclass(frozen=True)
class Calibration:
    dataset: str
    rule: AlertRule
    table: (
        pd.DataFrame
    )  # per annotator: gold accuracy with interval, recent, flagged, consensus, Dawid-Skene, time
    series: pd.DataFrame  # rolling accuracy per annotator and answer
    gold_items: int

    def figure(self, annotator: str | None = None) -> Figure:
        return calibration_figure(self.series, self.rule, annotator)

    def alerts(self) -> list[str]:
        flagged = self.table[self.table["flagged"]] if len(self.table) else self.table
        return [
            f"{row.annotator} on {self.dataset}: {row.recent_accuracy:.0%} right over their last "
            f"{int(row.recent_answers)} gold answers (alert below {self.rule.threshold:.0%})"
            for row in flagged.itertuples()
        ]


_OTHER_COLUMNS = ["annotator", "consensus_agreement", "dawid_skene_accuracy", "items", "median_seconds_all"]


def _consensus_and_time(store: Store, dataset: Dataset) -> pd.DataFrame:
    """Each annotator's agreement with consensus and Dawid-Skene accuracy (means over fields, where
    items have two labels or more) and median seconds; answers on gold items left out."""
    log = annotation_log.annotations_frame(store, dataset.id)
    log = log[~log["annotation_id"].isin(gold_store.gold_answer_ids(store, dataset.id))]
    if log.empty:
        return pd.DataFrame(columns=_OTHER_COLUMNS)
    fields = label_fields(dataset.task, log)
    wides = wide_by_field(long_labels(log, list(fields)), list(fields))
    quality = annotator_quality(wides, item_seconds(log))
    if quality.empty:
        return pd.DataFrame(columns=_OTHER_COLUMNS)
    out = (
        quality.groupby("annotator")
        .agg(
            consensus_agreement=("agreement", "mean"),
            items=("items", "max"),
            median_seconds_all=("median_seconds", "first"),
        )
        .reset_index()
    )
    per_field = [dawid_skene_accuracy(w) for w in wides.values()]
    skill = (
        pd.concat(per_field, axis=1).mean(axis=1)
        if any(len(p) for p in per_field)
        else pd.Series(dtype=float)
    )
    out["dawid_skene_accuracy"] = out["annotator"].map(skill).astype(float)
    return out[_OTHER_COLUMNS]


def calibration(store: Store, user: Actor, dataset: str) -> Calibration:
    """Per annotator: gold accuracy (Wilson 95%), recent accuracy and the alert, agreement with
    consensus and time per item (reviewers and admins)."""
    require(user, Action.SEE_LABELS)
    found = _dataset(store, dataset)
    rule = rule_of(found)
    answers = gold_store.gold_answers(store, found.id)
    table = calibration_table(answers, rule)
    others = _consensus_and_time(store, found)
    merged = table.merge(others, on="annotator", how="outer") if len(others) else table
    if "flagged" in merged:
        merged["flagged"] = merged["flagged"].astype("boolean").fillna(False).astype(bool)
    return Calibration(
        found.name,
        rule,
        merged,
        calibration_series(answers, rule.window),
        len(gold_store.gold_ids(store, found.id)),
    )


def admin_alerts(store: Store, admin: Actor) -> list[str]:
    """Every flagged annotator on every dataset with gold items (admins); reads the gold answers only."""
    require(admin, Action.ADMINISTER)
    lines: list[str] = []
    for dataset in list_datasets(store):
        if not gold_store.gold_ids(store, dataset.id):
            continue
        rule = rule_of(dataset)
        table = calibration_table(gold_store.gold_answers(store, dataset.id), rule)
        lines += Calibration(dataset.name, rule, table, pd.DataFrame(), 0).alerts()
    return lines


def my_gold_accuracy(store: Store, user: Annotator, dataset: str) -> str | None:
    """An annotator's own gold accuracy where the dataset allows it (None otherwise): over whole blocks
    of FEEDBACK_BLOCK labels, shown from MIN_FEEDBACK_GOLD scored answers on (issue 32, hole 3).

    It changes only when a block closes, by that block's gold answers together, so it never tells
    which of the block's items were gold. A plain lag did not do that: the figure moved a fixed
    number of labels after each gold item. Each item counts with its first label (a later correction
    of a closed block's item would move the figure right after that item), and the sequence is the
    annotator's own labels on every version (no one else's label or new version moves a block).
    """
    found = _dataset(store, dataset)
    if not int(found.setting("gold_feedback")):
        return None
    labelled = annotation_log.first_labels(store, user.id, found.id)
    closed = len(labelled) - len(labelled) % FEEDBACK_BLOCK
    firsts = {annotation_id for _, annotation_id in labelled[:closed]}
    waiting = f"your last {len(labelled) - closed} labels are not counted yet"
    how = f"counted in whole blocks of {FEEDBACK_BLOCK} labels, from {MIN_FEEDBACK_GOLD} checked answers on"
    answers = gold_store.gold_answers(store, found.id)
    mine = answers[answers["annotation_id"].isin(firsts)]
    if len(mine) < MIN_FEEDBACK_GOLD:
        return f"Checked items: none scored yet ({how}; {waiting})."
    row = calibration_table(mine, rule_of(found)).iloc[0]
    return (
        f"Checked items: {int(row['correct'])} of {int(row['gold_answers'])} right ({row['accuracy']:.0%}, "
        f"95% interval {row['lower']:.0%} to {row['upper']:.0%}) in your first {closed} labels ({how}; {waiting})."
    )
