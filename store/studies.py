"""Agreement studies: a drawn sample of a dataset's items, each given to K blind raters.

PRMBench-V had two researchers judge 100 sampled instances; MPBench three annotators 300. A study
raises its items' target to K, so the scheduler hands each item to K different annotators, and
its report is the agreement over those items only. The sample is drawn by services.studies
(qc.sampling) from study_candidates; create_study records it after checking, in its transaction,
that every drawn item can still be drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import pandas as pd

from store.annotations import annotations_frame
from store.datasets import get_dataset
from store.errors import StoreRequestError, written
from store.state import states_frame

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "MAX_RATERS",
    "STRATIFY_FIELDS",
    "Study",
    "StudyError",
    "check_study",
    "create_study",
    "get_study",
    "list_studies",
    "seen_by",
    "study_annotations",
    "study_candidates",
    "study_items",
    "study_states",
]

STRATIFY_FIELDS = ("error_type", "source", "final_answer_correct")
MAX_RATERS = 10


class StudyError(StoreRequestError):
    """A study that cannot be drawn, said so the admin can fix the request; nothing was stored."""


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


_STUDY_SQL = (
    "SELECT st.id, st.name, st.dataset_id, d.name, d.task, st.raters, st.stratify_by, st.seed, "
    "(SELECT count(*) FROM study_items si WHERE si.study_id = st.id), u.name, st.created_at "
    "FROM studies st JOIN datasets d ON d.id = st.dataset_id LEFT JOIN annotators u ON u.id = st.created_by"
)


def get_study(db: Store | Tx, name: str) -> Study | None:
    row = db.fetchone(_STUDY_SQL + " WHERE st.name = ?", [name])
    return Study(*row) if row else None


def study_candidates(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """The items a study may draw: every item of the dataset except those rejected and awaiting regeneration."""
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


def create_study(
    store: Store,
    *,
    name: str,
    dataset_name: str,
    raters: int,
    drawn: pd.DataFrame,
    stratify_by: str | None = "error_type",
    seed: int = 0,
    created_by: int | None = None,
    now: datetime | None = None,
) -> Study:
    """Record the ``drawn`` items (``item_id, stratum``, from study_candidates) and give each K raters.

    Items with fewer than K labels on their current version reopen with target max(target, K),
    so a dataset that asks for more annotators keeps asking; settled earliest-error items
    (consensus, discarded) keep their decision: the consensus rule owns them. A drawn item that
    can no longer be drawn (sent to regeneration since) refuses the whole study.
    """
    name = (name or "").strip()
    with store.writing() as tx:
        check_study(tx, name, len(drawn), raters, stratify_by)
        dataset = get_dataset(tx, dataset_name)
        if dataset is None:
            raise StudyError(f"there is no dataset named {dataset_name!r}")
        if len(set(drawn["item_id"])) != len(drawn):
            raise StudyError("the sample names an item twice: each item can be in a study once")
        candidates = set(study_candidates(tx, dataset.id)["item_id"])
        gone = [int(i) for i in drawn["item_id"] if i not in candidates]
        if gone:
            raise StudyError(
                f"{len(gone)} drawn item(s) of {dataset.name} changed while the sample was drawn: draw again"
            )
        tx.execute(
            "INSERT INTO studies (dataset_id, name, raters, stratify_by, seed, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, coalesce(?, current_timestamp))",
            [dataset.id, name, raters, stratify_by, seed, created_by, now],
        )
        study_id = tx.scalar("SELECT id FROM studies WHERE name = ?", [name])
        tx.executemany(
            "INSERT INTO study_items (study_id, item_id, stratum) VALUES (?, ?, ?)",
            [(study_id, int(i), s) for i, s in zip(drawn["item_id"], drawn["stratum"], strict=True)],
        )
        tx.execute(
            "UPDATE item_state SET target = greatest(item_state.target, ?), status = 'open', "
            "updated_at = coalesce(?, current_timestamp) FROM ("
            "  SELECT s.item_id AS sid, count(DISTINCT a.annotator_id) AS done FROM item_state s"
            "  JOIN study_items si ON si.item_id = s.item_id AND si.study_id = ?"
            "  JOIN items i ON i.id = s.item_id"
            "  LEFT JOIN annotations a ON a.item_id = s.item_id AND a.version_id = i.current_version_id"
            "  GROUP BY s.item_id"
            ") counts WHERE item_state.item_id = counts.sid AND counts.done < ? "
            "AND item_state.status IN ('open', 'complete', 'rejected', 'disputed')",
            [raters, now, study_id, raters],
        )
        tx.after_commit(lambda: tx.store.scheduler.invalidate(dataset.id))
        study = written(get_study(tx, name), f"study {name!r}")
        return study


def list_studies(db: Store | Tx, dataset_id: int | None = None) -> pd.DataFrame:
    """Every study with its progress: items with at least K annotators' labels on their current version."""
    where = "WHERE st.dataset_id = ?" if dataset_id is not None else ""
    frame = db.df(
        "SELECT st.name AS study, d.name AS dataset, st.raters, st.stratify_by, st.seed, "
        "count(si.item_id) AS n_items, "
        "count(si.item_id) FILTER (WHERE coalesce(c.done, 0) >= st.raters) AS items_done, "
        "u.name AS created_by, st.created_at "
        "FROM studies st JOIN datasets d ON d.id = st.dataset_id "
        "JOIN study_items si ON si.study_id = st.id "
        "LEFT JOIN (SELECT a.item_id, count(DISTINCT a.annotator_id) AS done FROM annotations a "
        "  JOIN items i ON i.id = a.item_id AND a.version_id = i.current_version_id GROUP BY a.item_id) c "
        "  ON c.item_id = si.item_id "
        f"LEFT JOIN annotators u ON u.id = st.created_by {where} "
        "GROUP BY st.id, st.name, d.name, st.raters, st.stratify_by, st.seed, u.name, st.created_at "
        "ORDER BY st.id",
        [dataset_id] if dataset_id is not None else [],
    )
    frame["n_items"] = frame["n_items"].astype(int)
    frame["items_done"] = frame["items_done"].astype(int)
    frame.insert(
        6, "progress", (frame["items_done"] / frame["n_items"].where(frame["n_items"] > 0)).fillna(0.0)
    )
    return frame


def study_items(db: Store | Tx, study_id: int) -> pd.DataFrame:
    return db.df(
        "SELECT si.item_id, i.external_id, si.stratum FROM study_items si JOIN items i ON i.id = si.item_id "
        "WHERE si.study_id = ? ORDER BY si.item_id",
        [study_id],
    )


def study_annotations(db: Store | Tx, study: Study) -> pd.DataFrame:
    """The annotation log restricted to the study's items (current versions): what its report reads."""
    frame = annotations_frame(db, study.dataset_id)
    ids = set(study_items(db, study.id)["item_id"])
    return frame[frame["item_id"].isin(ids)].reset_index(drop=True)


def study_states(db: Store | Tx, study: Study) -> pd.DataFrame:
    frame = states_frame(db, study.dataset_id)
    ids = set(study_items(db, study.id)["item_id"])
    return frame[frame["item_id"].isin(ids)].reset_index(drop=True)


def seen_by(db: Store | Tx, item_ids: list[int]) -> dict[int, set[str]]:
    """Item -> the annotators who labelled any of its versions (they have seen it: not blind raters)."""
    if not item_ids:
        return {}
    rows = db.fetchall(
        "SELECT DISTINCT a.item_id, u.name FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
        f"WHERE a.item_id IN ({', '.join('?' * len(item_ids))})",
        [int(i) for i in item_ids],
    )
    out: dict[int, set[str]] = {int(i): set() for i in item_ids}
    for item_id, name in rows:
        out[int(item_id)].add(str(name))
    return out
