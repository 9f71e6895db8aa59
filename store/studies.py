"""Agreement studies: a drawn sample of a dataset's items, each labelled by K blind raters of its own.

PRMBench-V had two researchers judge 100 sampled instances of its verified data; MPBench three
annotators 300 of its released items. A study never touches the gate: it writes no item's state,
target, decision or consensus. Its raters are chosen per item when it is drawn (raters who have not
seen the item; study_assignments), the scheduler hands each rater their study items (store.assignments,
the study turn), and what they answer is stored in study_labels, a log of the study's own that no
gate figure reads. Sequential studies draw their items in batches under a stopping rule
(study_rules). Studies drawn before migration 10 (``own_labels`` false) reopened items in the gate;
they keep reading the annotation log so that nothing they collected is lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from store.annotations import RULING, AnnotationConflict, StoredAnnotation, annotations_frame
from store.datasets import get_dataset
from store.errors import StoreConflictError, StoreRequestError, written
from store.state import states_frame

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "MAX_RATERS",
    "STRATIFY_FIELDS",
    "Study",
    "StudyError",
    "StudyRule",
    "add_batch",
    "assigned_raters",
    "batch_progress",
    "check_study",
    "create_study",
    "get_study",
    "get_study_by_id",
    "insert_study_label",
    "label_by_request",
    "list_studies",
    "my_label_on",
    "my_study_history",
    "my_study_label",
    "rater_load",
    "reassign_pending",
    "removed_annotator_id",
    "removed_raters_pending",
    "seen_by",
    "set_stopped",
    "study_annotations",
    "study_candidates",
    "study_items",
    "study_rater_names",
    "study_states",
]

STRATIFY_FIELDS = ("error_type", "source", "final_answer_correct")
MAX_RATERS = 10


class StudyError(StoreRequestError):
    """A study that cannot be drawn, said so the admin can fix the request; nothing was stored."""


@dataclass(frozen=True)
class StudyRule:
    """A sequential study's stopping rule (qc.sequential.SequentialRule's fields) and its outcome."""

    field: str
    target: float
    batch: int
    cap: int
    confidence: float
    adjust: str
    stopped_by: str | None = None  # None while running; "target" | "cap" | "pool"
    stopped_at: datetime | None = None


@dataclass(frozen=True)
class Study:
    id: int
    name: str
    dataset_id: int
    dataset: str
    task: str
    raters: int
    stratify_by: str | None
    seed: int
    n_items: int
    created_by: str | None
    created_at: datetime
    kept_only: bool = False
    own_labels: bool = False  # False: drawn before study labels existed (reads the annotation log)
    batches: int = 1
    rule: StudyRule | None = None


_STUDY_SQL = (
    "SELECT st.id, st.name, st.dataset_id, d.name, d.task, st.raters, st.stratify_by, st.seed, "
    "(SELECT count(*) FROM study_items si WHERE si.study_id = st.id), u.name, st.created_at, "
    "coalesce(st.kept_only, false), coalesce(st.own_labels, false), "
    "(SELECT coalesce(max(si.batch), 1) FROM study_items si WHERE si.study_id = st.id) "
    "FROM studies st JOIN datasets d ON d.id = st.dataset_id LEFT JOIN annotators u ON u.id = st.created_by"
)
_RULE_SQL = "SELECT field, target, batch, cap, confidence, adjust, stopped_by, stopped_at FROM study_rules"


def _study(db: Store | Tx, row: tuple | None) -> Study | None:
    if row is None:
        return None
    rule = db.fetchone(_RULE_SQL + " WHERE study_id = ?", [row[0]])
    return Study(
        id=int(row[0]),
        name=row[1],
        dataset_id=int(row[2]),
        dataset=row[3],
        task=row[4],
        raters=int(row[5]),
        stratify_by=row[6],
        seed=int(row[7]),
        n_items=int(row[8]),
        created_by=row[9],
        created_at=row[10],
        kept_only=bool(row[11]),
        own_labels=bool(row[12]),
        batches=int(row[13]),
        rule=StudyRule(*rule) if rule else None,
    )


def get_study(db: Store | Tx, name: str) -> Study | None:
    return _study(db, db.fetchone(_STUDY_SQL + " WHERE st.name = ?", [name]))


def get_study_by_id(db: Store | Tx, study_id: int) -> Study | None:
    return _study(db, db.fetchone(_STUDY_SQL + " WHERE st.id = ?", [study_id]))


def study_candidates(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """The items a study may draw: every item of the dataset except those rejected and awaiting
    regeneration, with its gate status (qc.sampling.study_pool keeps the kept ones)."""
    return db.df(
        "SELECT s.item_id, i.external_id, v.error_type, v.source, v.final_answer_correct, s.status "
        "FROM item_state s JOIN items i ON i.id = s.item_id JOIN item_versions v ON v.id = i.current_version_id "
        "WHERE s.dataset_id = ? AND s.item_id NOT IN (SELECT item_id FROM jobs WHERE status IN ('queued', 'running')) "
        "ORDER BY s.item_id",
        [dataset_id],
    )


def check_study(db: Store | Tx, name: str, n_items: int, raters: int, stratify_by: str | None) -> None:
    """Raise StudyError when the request cannot be a study (before anything is drawn)."""
    if not name or len(name) > 100:
        raise StudyError("give the study a name of 1-100 characters")
    if db.scalar("SELECT count(*) FROM studies WHERE name = ?", [name]):
        raise StudyError(f"a study named {name!r} already exists: pick another name")
    if not 2 <= raters <= MAX_RATERS:
        raise StudyError(f"raters per item must be between 2 and {MAX_RATERS}, not {raters}")
    if n_items < 1:
        raise StudyError(f"the study needs at least 1 item, not {n_items}")
    if stratify_by is not None and stratify_by not in STRATIFY_FIELDS:
        raise StudyError(f"cannot stratify by {stratify_by!r}: choose one of {', '.join(STRATIFY_FIELDS)}")


def _check_drawn(tx: Tx, study_id: int | None, dataset_id: int, dataset: str, drawn: pd.DataFrame) -> None:
    if len(set(drawn["item_id"])) != len(drawn):
        raise StudyError("the sample names an item twice: each item can be in a study once")
    candidates = set(study_candidates(tx, dataset_id)["item_id"])
    gone = [int(i) for i in drawn["item_id"] if i not in candidates]
    if gone:
        raise StudyError(
            f"{len(gone)} drawn item(s) of {dataset} changed while the sample was drawn: draw again"
        )
    if study_id is not None and tx.scalar(
        f"SELECT count(*) FROM study_items WHERE study_id = ? AND item_id IN ({', '.join('?' * len(drawn))})",
        [study_id, *(int(i) for i in drawn["item_id"])],
    ):
        raise StudyError("an item of the new batch is in the study already: draw again")


def _write_batch(
    tx: Tx,
    study_id: int,
    batch: int,
    drawn: pd.DataFrame,
    assignments: dict[int, list[int]],
    k: int,
    now: datetime | None,
) -> None:
    missing = [int(i) for i in drawn["item_id"] if len(set(assignments.get(int(i), ()))) != k]
    if missing:
        raise StudyError(f"item {missing[0]} has no {k} distinct raters assigned")
    tx.executemany(
        "INSERT INTO study_items (study_id, item_id, stratum, batch) VALUES (?, ?, ?, ?)",
        [(study_id, int(i), s, batch) for i, s in zip(drawn["item_id"], drawn["stratum"], strict=True)],
    )
    tx.executemany(
        "INSERT INTO study_assignments (study_id, item_id, annotator_id, batch, assigned_at) "
        "VALUES (?, ?, ?, ?, coalesce(?, current_timestamp))",
        [(study_id, int(i), int(a), batch, now) for i in drawn["item_id"] for a in assignments[int(i)]],
    )


def create_study(
    store: Store,
    *,
    name: str,
    dataset_name: str,
    raters: int,
    drawn: pd.DataFrame,
    assignments: dict[int, list[int]],
    rater_ids: list[int],
    stratify_by: str | None = "error_type",
    seed: int = 0,
    kept_only: bool = True,
    rule: StudyRule | None = None,
    created_by: int | None = None,
    now: datetime | None = None,
) -> Study:
    """Record the ``drawn`` items (``item_id, stratum``; the first batch of a sequential study) and
    each item's K raters (``assignments``: item -> annotator ids). No item's state, target or
    decision changes. A drawn item that can no longer be drawn refuses the whole study."""
    name = (name or "").strip()
    with store.writing() as tx:
        check_study(tx, name, len(drawn), raters, stratify_by)
        dataset = get_dataset(tx, dataset_name)
        if dataset is None:
            raise StudyError(f"there is no dataset named {dataset_name!r}")
        _check_drawn(tx, None, dataset.id, dataset.name, drawn)
        tx.execute(
            "INSERT INTO studies (dataset_id, name, raters, stratify_by, seed, created_by, created_at, "
            "kept_only, own_labels) VALUES (?, ?, ?, ?, ?, ?, coalesce(?, current_timestamp), ?, true)",
            [dataset.id, name, raters, stratify_by, seed, created_by, now, kept_only],
        )
        study_id = int(tx.scalar("SELECT id FROM studies WHERE name = ?", [name]))
        tx.executemany(
            "INSERT INTO study_raters (study_id, annotator_id) VALUES (?, ?)",
            [(study_id, int(a)) for a in sorted(set(rater_ids))],
        )
        _write_batch(tx, study_id, 1, drawn, assignments, raters, now)
        if rule is not None:
            tx.execute(
                "INSERT INTO study_rules (study_id, field, target, batch, cap, confidence, adjust) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [study_id, rule.field, rule.target, rule.batch, rule.cap, rule.confidence, rule.adjust],
            )
        tx.changed(dataset.id)
        return written(get_study(tx, name), f"study {name!r}")


def add_batch(
    store: Store,
    study_id: int,
    batch: int,
    drawn: pd.DataFrame,
    assignments: dict[int, list[int]],
    now: datetime | None = None,
) -> bool:
    """Record batch number ``batch`` of a sequential study; False (nothing stored) when that batch
    exists already (another label drew it first) or the study has stopped."""
    with store.writing() as tx:
        study = get_study_by_id(tx, study_id)
        if study is None or study.rule is None or study.rule.stopped_by or study.batches != batch - 1:
            return False
        _check_drawn(tx, study.id, study.dataset_id, study.dataset, drawn)
        _write_batch(tx, study.id, batch, drawn, assignments, study.raters, now)
        dataset_id = study.dataset_id
        tx.changed(dataset_id)
        return True


def set_stopped(store: Store, study_id: int, stopped_by: str, now: datetime | None = None) -> bool:
    """Record why a sequential study stopped (once: the first reason stands)."""
    with store.writing() as tx:
        if tx.scalar(
            "SELECT count(*) FROM study_rules WHERE study_id = ? AND stopped_by IS NULL", [study_id]
        ):
            tx.execute(
                "UPDATE study_rules SET stopped_by = ?, stopped_at = coalesce(?, current_timestamp) "
                "WHERE study_id = ?",
                [stopped_by, now, study_id],
            )
            return True
        return False


# ----- the study's own labels


def _label_row(r: tuple, task: str, duplicate: bool = False) -> StoredAnnotation:
    return StoredAnnotation(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], duplicate, task)


_LABEL_COLUMNS = "id, annotator_id, item_id, version_id, payload, created_at, seconds_spent, request_id"


def label_by_request(db: Store | Tx, request_id: str) -> StoredAnnotation | None:
    """A stored study label by the request id of its submit (a retried submit finds it)."""
    row = db.fetchone(f"SELECT {_LABEL_COLUMNS} FROM study_labels WHERE request_id = ?", [request_id])
    return None if row is None else _label_row(row, "", duplicate=True)


def my_study_label(db: Store | Tx, study_id: int, item_id: int, annotator_id: int) -> dict[str, Any] | None:
    """This rater's latest label on a study item (their own only)."""
    row = db.fetchone(
        "SELECT payload FROM study_labels WHERE study_id = ? AND item_id = ? AND annotator_id = ? "
        "ORDER BY id DESC LIMIT 1",
        [study_id, item_id, annotator_id],
    )
    return None if row is None else dict(json.loads(row[0]))


def my_label_on(db: Store | Tx, annotator_id: int, item_id: int, version_id: int) -> dict[str, Any] | None:
    """This rater's latest study label on one item version, whichever study it is in (their own only)."""
    row = db.fetchone(
        "SELECT payload FROM study_labels WHERE annotator_id = ? AND item_id = ? AND version_id = ? "
        "ORDER BY id DESC LIMIT 1",
        [annotator_id, item_id, version_id],
    )
    return None if row is None else dict(json.loads(row[0]))


def my_study_history(db: Store | Tx, annotator_id: int, dataset_id: int) -> list[tuple[int, datetime]]:
    """The items this rater labelled for studies of a dataset (current versions), with when first."""
    rows = db.fetchall(
        "SELECT l.item_id, min(l.created_at) FROM study_labels l JOIN items i ON i.id = l.item_id "
        "AND l.version_id = i.current_version_id WHERE l.annotator_id = ? AND i.dataset_id = ? "
        "GROUP BY l.item_id",
        [annotator_id, dataset_id],
    )
    return [(int(r[0]), r[1]) for r in rows]


def insert_study_label(
    tx: Tx,
    *,
    study_id: int,
    request_id: str,
    annotator_id: int,
    item_id: int,
    version_id: int,
    task: str,
    payload: dict[str, Any],
    seconds_spent: float | None,
    now: datetime,
) -> StoredAnnotation:
    """Append one study label (a correction is a new row). A request id already used, here or in the
    annotation log, raises AnnotationConflict; the caller rolls back and reads the first submit."""
    if tx.scalar("SELECT count(*) FROM annotations WHERE request_id = ?", [request_id]):
        raise AnnotationConflict(f"request id {request_id!r} is already in the log")
    try:
        new_id = tx.scalar(
            "INSERT INTO study_labels (request_id, study_id, item_id, version_id, annotator_id, payload, "
            "seconds_spent, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [
                request_id,
                study_id,
                item_id,
                version_id,
                annotator_id,
                json.dumps(payload, sort_keys=True),
                seconds_spent,
                now,
            ],
        )
    except StoreConflictError as exc:
        raise AnnotationConflict(f"request id {request_id!r} is already in the log") from exc
    return StoredAnnotation(
        int(new_id), annotator_id, item_id, version_id, payload, now, seconds_spent, request_id, task=task
    )


def _done_counts(one_study: bool = False) -> str:
    """Per (study, item): how many distinct raters' labels it has (the study's own, or the log's).
    ``one_study``: of the study given twice as parameters, rather than of all (what a label's check of
    its study's batch reads: the whole log of every study would be counted per label)."""
    labels_of, items_of = ("WHERE l.study_id = ? ", "WHERE si.study_id = ? ") if one_study else ("", "")
    return (
        "SELECT l.study_id, l.item_id, count(DISTINCT l.annotator_id) AS done FROM study_labels l "
        f"{labels_of}GROUP BY l.study_id, l.item_id "
        "UNION ALL SELECT si.study_id, si.item_id, count(DISTINCT a.annotator_id) FROM study_items si "
        "JOIN studies st ON st.id = si.study_id AND NOT coalesce(st.own_labels, false) "
        "JOIN items i ON i.id = si.item_id JOIN annotations a ON a.item_id = si.item_id "
        f"AND a.version_id = i.current_version_id AND a.task <> '{RULING}' {items_of}"
        "GROUP BY si.study_id, si.item_id"
    )


def list_studies(db: Store | Tx, dataset_id: int | None = None) -> pd.DataFrame:
    """Every study with its progress (items with all K raters' labels; raters' labels given of those
    needed), batches and stopping rule."""
    where = "WHERE st.dataset_id = ?" if dataset_id is not None else ""
    frame = db.df(
        "SELECT st.name AS study, d.name AS dataset, st.raters, st.stratify_by, st.seed, "
        "count(si.item_id) AS n_items, "
        "count(si.item_id) FILTER (WHERE coalesce(c.done, 0) >= st.raters) AS items_done, "
        "coalesce(max(si.batch), 1) AS batches, coalesce(sum(c.done), 0) AS labels, "
        "coalesce(st.kept_only, false) AS kept_only, "
        "r.target, r.batch AS batch_size, r.cap, r.stopped_by, "
        "u.name AS created_by, st.created_at "
        "FROM studies st JOIN datasets d ON d.id = st.dataset_id "
        "JOIN study_items si ON si.study_id = st.id "
        f"LEFT JOIN ({_done_counts()}) c ON c.study_id = st.id AND c.item_id = si.item_id "
        "LEFT JOIN study_rules r ON r.study_id = st.id "
        f"LEFT JOIN annotators u ON u.id = st.created_by {where} "
        "GROUP BY st.id, st.name, d.name, st.raters, st.stratify_by, st.seed, st.kept_only, r.target, r.batch, "
        "r.cap, r.stopped_by, u.name, st.created_at "
        "ORDER BY st.id",
        [dataset_id] if dataset_id is not None else [],
    )
    for column in ("n_items", "items_done", "batches", "labels"):
        frame[column] = frame[column].astype(int)
    frame["labels_needed"] = frame["n_items"] * frame["raters"]
    frame["kept_only"] = frame["kept_only"].astype(bool)
    frame.insert(
        6, "progress", (frame["items_done"] / frame["n_items"].where(frame["n_items"] > 0)).fillna(0.0)
    )
    return frame


def batch_progress(db: Store | Tx, study: Study) -> pd.DataFrame:
    """Per batch: its items and how many have all K raters' labels."""
    frame = db.df(
        "SELECT si.batch, count(*) AS n_items, count(*) FILTER (WHERE coalesce(c.done, 0) >= ?) AS items_done "
        f"FROM study_items si LEFT JOIN ({_done_counts(one_study=True)}) c ON c.study_id = si.study_id "
        "AND c.item_id = si.item_id WHERE si.study_id = ? GROUP BY si.batch ORDER BY si.batch",
        [study.raters, study.id, study.id, study.id],
    )
    for column in ("batch", "n_items", "items_done"):
        frame[column] = frame[column].astype(int)
    return frame


def study_items(db: Store | Tx, study_id: int) -> pd.DataFrame:
    """The study's items in draw order (batch, then item id)."""
    return db.df(
        "SELECT si.item_id, i.external_id, si.stratum, coalesce(si.batch, 1) AS batch FROM study_items si "
        "JOIN items i ON i.id = si.item_id WHERE si.study_id = ? ORDER BY coalesce(si.batch, 1), si.item_id",
        [study_id],
    )


def study_annotations(db: Store | Tx, study: Study) -> pd.DataFrame:
    """What the study's report reads, shaped as store.annotations.annotations_frame: its own labels
    (every row, corrections included), or for a study drawn before they existed, the annotation log
    on its items' current versions."""
    if not study.own_labels:
        frame = annotations_frame(db, study.dataset_id)
        ids = set(study_items(db, study.id)["item_id"])
        return frame[frame["item_id"].isin(ids)].reset_index(drop=True)
    return db.df(
        "SELECT l.id AS annotation_id, l.request_id, d.id AS dataset_id, d.name AS dataset, d.task, l.item_id, "
        "i.external_id, l.version_id, l.annotator_id, u.name AS annotator, l.payload, l.seconds_spent, "
        "l.created_at FROM study_labels l JOIN studies st ON st.id = l.study_id "
        "JOIN datasets d ON d.id = st.dataset_id JOIN items i ON i.id = l.item_id "
        "JOIN annotators u ON u.id = l.annotator_id WHERE l.study_id = ? ORDER BY l.id",
        [study.id],
    )


def study_states(db: Store | Tx, study: Study) -> pd.DataFrame:
    frame = states_frame(db, study.dataset_id)
    ids = set(study_items(db, study.id)["item_id"])
    return frame[frame["item_id"].isin(ids)].reset_index(drop=True)


def study_rater_names(db: Store | Tx, study_id: int) -> list[str]:
    rows = db.fetchall(
        "SELECT u.name FROM study_raters r JOIN annotators u ON u.id = r.annotator_id "
        "WHERE r.study_id = ? ORDER BY u.name",
        [study_id],
    )
    return [str(r[0]) for r in rows]


def rater_load(db: Store | Tx, study_id: int) -> dict[str, int]:
    """Study items assigned to each rater so far (the next batch spreads the load from there)."""
    rows = db.fetchall(
        "SELECT u.name, count(*) FROM study_assignments a JOIN annotators u ON u.id = a.annotator_id "
        "WHERE a.study_id = ? GROUP BY u.name",
        [study_id],
    )
    return {str(r[0]): int(r[1]) for r in rows}


def seen_by(db: Store | Tx, item_ids: list[int], dataset_id: int | None = None) -> dict[int, set[str]]:
    """Item -> the annotators who have seen it: labelled any of its versions, or rate it in a study.
    With ``dataset_id`` (all the items are that dataset's), one pass over the dataset instead of a
    list of ids: a draw looks at every candidate."""
    if not item_ids:
        return {}
    ids = [int(i) for i in item_ids]
    if dataset_id is not None:
        where, params = "a.dataset_id = ?", [dataset_id]
        study_where = "s.study_id IN (SELECT id FROM studies WHERE dataset_id = ?)"
        study_params = [dataset_id]
    else:
        marks = ", ".join("?" * len(ids))
        where, params = f"a.item_id IN ({marks})", ids
        study_where, study_params = f"s.item_id IN ({marks})", ids
    rows = db.fetchall(
        "SELECT DISTINCT a.item_id, u.name FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
        f"WHERE {where} UNION SELECT DISTINCT s.item_id, u.name FROM study_assignments s "
        f"JOIN annotators u ON u.id = s.annotator_id WHERE {study_where}",
        [*params, *study_params],
    )
    out: dict[int, set[str]] = {i: set() for i in ids}
    for item_id, name in rows:
        if int(item_id) in out:
            out[int(item_id)].add(str(name))
    return out


def assigned_raters(db: Store | Tx, study_id: int) -> dict[int, list[str]]:
    """Item -> the names of the raters it was assigned to when drawn."""
    out: dict[int, list[str]] = {}
    for item_id, name in db.fetchall(
        "SELECT a.item_id, u.name FROM study_assignments a JOIN annotators u ON u.id = a.annotator_id "
        "WHERE a.study_id = ? ORDER BY u.name",
        [study_id],
    ):
        out.setdefault(int(item_id), []).append(str(name))
    return out


# ----- reassigning a removed rater's pending items


def removed_annotator_id(db: Store | Tx, name: str) -> int | None:
    """The id of a removed annotator of this name (store.users.get_user finds active ones only)."""
    found = db.scalar("SELECT id FROM annotators WHERE name = ? AND removed_at IS NOT NULL", [name])
    return None if found is None else int(found)


def removed_raters_pending(db: Store | Tx, study_id: int) -> list[str]:
    """Removed annotators who still hold pending items of this study: whom a reassignment can help."""
    rows = db.fetchall(
        "SELECT DISTINCT u.name FROM study_assignments a JOIN annotators u ON u.id = a.annotator_id "
        "WHERE a.study_id = ? AND u.removed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM study_labels l "
        "WHERE l.study_id = a.study_id AND l.item_id = a.item_id AND l.annotator_id = a.annotator_id) "
        "ORDER BY u.name",
        [study_id],
    )
    return [str(r[0]) for r in rows]


def reassign_pending(
    store: Store, study_id: int, from_id: int, to_id: int, to_name: str, now: datetime | None = None
) -> tuple[list[str], list[str]]:
    """Give ``from_id``'s pending study items (assigned, not yet labelled by them) to ``to_id``, each
    one ``to_name`` has not seen (labelled, or rates in a study); the others stay. The new rater joins
    the study's rater list. Returns (moved, kept) external ids, in draw order. One transaction."""
    with store.writing() as tx:
        pending = tx.fetchall(
            "SELECT a.item_id, i.external_id FROM study_assignments a JOIN items i ON i.id = a.item_id "
            "WHERE a.study_id = ? AND a.annotator_id = ? AND NOT EXISTS (SELECT 1 FROM study_labels l "
            "WHERE l.study_id = a.study_id AND l.item_id = a.item_id AND l.annotator_id = a.annotator_id) "
            "ORDER BY a.batch, a.item_id",
            [study_id, from_id],
        )
        seen = seen_by(tx, [int(r[0]) for r in pending])
        moved: list[str] = []
        kept: list[str] = []
        for item_id, external_id in pending:
            if to_name in seen.get(int(item_id), set()):
                kept.append(str(external_id))
                continue
            tx.execute(
                "UPDATE study_assignments SET annotator_id = ?, assigned_at = coalesce(?, current_timestamp) "
                "WHERE study_id = ? AND item_id = ? AND annotator_id = ?",
                [to_id, now, study_id, int(item_id), from_id],
            )
            moved.append(str(external_id))
        if moved and not tx.scalar(
            "SELECT count(*) FROM study_raters WHERE study_id = ? AND annotator_id = ?", [study_id, to_id]
        ):
            tx.execute("INSERT INTO study_raters (study_id, annotator_id) VALUES (?, ?)", [study_id, to_id])
        dataset_id = int(tx.scalar("SELECT dataset_id FROM studies WHERE id = ?", [study_id]))
        tx.changed(dataset_id)
        return moved, kept
