"""The Browse panel's SQL: filtered, sorted pages of items (LIMIT/OFFSET), one item's history, and
the error-position counts behind PRMBench-V's Figure 7, all for the same filter.

Why SQL pages: a million-step dataset must not be loaded to show 25 rows. Every filter value is
a bound parameter; sort keys come from a fixed table, never from the request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from store.annotations import RULING

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "SORTS",
    "STATES",
    "BrowseFilter",
    "annotation_rows",
    "browse_page",
    "error_position_counts",
    "filter_choices",
    "label_time_rows",
    "lineage_rows",
    "lineage_with_authors",
    "matching_item_ids",
    "step_count_rows",
]

# Item states (item_state.status, by the task's rule) and "regenerating": rejected and waiting for a
# regeneration job (queued or running), the gate's state until the new version arrives.
STATES = ("open", "consensus", "complete", "discarded", "disputed", "accepted", "rejected", "regenerating")
DIFFICULTIES = ("easy", "medium", "hard")  # the decided difficulty (PRMBench-V's tool, majority of labels)
_STATE = (
    "CASE WHEN EXISTS (SELECT 1 FROM jobs j WHERE j.item_id = i.id AND j.status IN ('queued', 'running')) "
    "THEN 'regenerating' ELSE coalesce(st.status, 'open') END"
)
_DIFFICULTY = "(CAST(st.decision AS JSON) ->> 'difficulty')"
# name -> ORDER BY clause (fixed text: the request only picks a name)
SORTS = {
    "id": "i.id",
    "error type": "v.error_type NULLS LAST, i.id",
    "state": f"{_STATE}, i.id",
    "error position": "v.earliest_error NULLS LAST, i.id",
    "source": "v.source NULLS LAST, i.id",
    "newest version": "v.created_at DESC, i.id",
    "difficulty": f"{_DIFFICULTY} NULLS LAST, i.id",
}
PAGE = 25


@dataclass(frozen=True)
class BrowseFilter:
    """What the user asked for; None or "" = no condition. `error_position` is 1-based, as shown."""

    dataset: str | None = None
    task: str | None = None
    source: str | None = None
    error_type: str | None = None
    status: str | None = None
    error_position: int | None = None
    annotator: str | None = None
    text: str | None = None
    sort: str = "id"
    difficulty: str | None = None
    # An annotator's own finished work: the items they labelled, each as the version they last labelled,
    # never the current one (another annotator's accepted edit or a regeneration makes that).
    labelled_by: str | None = None
    live_only: bool = False  # archived datasets left out (everyone but admins: services.browse)


def _where(db: Store | Tx, f: BrowseFilter) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for value, clause in (
        (f.dataset, "d.name = ?"),
        (f.task, "d.task = ?"),
        (f.source, "v.source = ?"),
        (f.error_type, "v.error_type = ?"),
    ):
        if value:
            clauses.append(clause)
            params.append(value)
    if f.live_only:
        clauses.append("d.archived_at IS NULL")
    if f.status:
        clauses.append(f"{_STATE} = ?")
        params.append(f.status)
    if f.difficulty:
        clauses.append(f"{_DIFFICULTY} = ?")
        params.append(f.difficulty)
    if f.error_position is not None:
        # PRMBench's error steps (0-based in the store) or ProcessBench's earliest error.
        clauses.append(
            f"(? = ANY({db.engine.json_int_array('v.error_steps')}) "
            "OR (v.error_steps = '[]' AND v.earliest_error = ?))"
        )
        params += [f.error_position - 1, f.error_position - 1]
    if f.annotator:
        clauses.append(
            "EXISTS (SELECT 1 FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
            "WHERE a.item_id = i.id AND u.name = ?)"
        )
        params.append(f.annotator)
    if f.text:
        needle = "%" + f.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append(
            "(v.question ILIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM steps s "
            "WHERE s.version_id = v.id AND s.text ILIKE ? ESCAPE '\\'))"
        )
        params += [needle, needle]
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


_FROM = (
    "FROM items i JOIN datasets d ON d.id = i.dataset_id JOIN item_versions v ON v.id = i.current_version_id "
    "LEFT JOIN item_state st ON st.item_id = i.id "
)
_FROM_LABELLED = (
    "FROM (SELECT a.item_id, max(a.version_id) AS version_id FROM annotations a "
    "JOIN annotators u ON u.id = a.annotator_id WHERE u.name = ? GROUP BY a.item_id) mine "
    "JOIN items i ON i.id = mine.item_id JOIN datasets d ON d.id = i.dataset_id "
    "JOIN item_versions v ON v.id = mine.version_id LEFT JOIN item_state st ON st.item_id = i.id "
)


def _source(db: Store | Tx, f: BrowseFilter, joins: str = "") -> tuple[str, list[Any]]:
    """FROM ... WHERE ... for the filter (with `joins` between them): current versions, or the versions
    `f.labelled_by` labelled."""
    where, params = _where(db, f)
    if f.labelled_by:
        return f"{_FROM_LABELLED}{joins}{where}", [f.labelled_by, *params]
    return f"{_FROM}{joins}{where}", params


def browse_page(db: Store | Tx, f: BrowseFilter, page: int = 0, size: int = PAGE) -> tuple[pd.DataFrame, int]:
    """One page of matching items (current versions) and how many match in all."""
    source, params = _source(db, f)
    order = SORTS.get(f.sort, SORTS["id"])
    # A text search scans every step: its total rides along as a window count (one scan, not two).
    # Without one, a count and a top-25 are cheaper than the window over every row.
    windowed = bool(f.text)
    frame = db.df(
        "SELECT i.id AS item_id, d.name AS dataset, i.external_id, v.version, v.error_type, v.source, "
        f"{_STATE} AS state, {_DIFFICULTY} AS difficulty, v.earliest_error, v.error_steps, "
        f"left(v.question, 120) AS question{', count(*) OVER () AS total' if windowed else ''} "
        f"{source} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, size, max(page, 0) * size],
    )
    if windowed and len(frame):
        return frame.drop(columns=["total"]), int(frame["total"].iloc[0])
    total = int(db.scalar(f"SELECT count(*) {source}", params))
    return frame.drop(columns=["total"], errors="ignore"), total


def error_position_counts(db: Store | Tx, f: BrowseFilter) -> pd.DataFrame:
    """PRMBench-V Fig. 7: error steps per 1-based position and error type (counts, not normalised)."""
    source, params = _source(db, f)
    return db.df(
        "WITH pos AS (SELECT coalesce(v.error_type, '(none)') AS error_type, "
        f"unnest(CASE WHEN v.error_steps <> '[]' THEN {db.engine.json_int_array('v.error_steps')} "
        "WHEN v.earliest_error >= 0 THEN ARRAY[v.earliest_error] ELSE CAST(ARRAY[] AS INTEGER[]) END) "
        f"AS position {source}) "
        "SELECT error_type, position + 1 AS position, count(*) AS error_steps FROM pos "
        "GROUP BY error_type, position ORDER BY error_type, position",
        params,
    )


def step_count_rows(db: Store | Tx, f: BrowseFilter) -> pd.DataFrame:
    """PRMBench-V Fig. 8's data: per matching item, its error type and the steps of each chain
    (original, modified; solution for ProcessBench-style items)."""
    where, _ = _where(db, f)
    source, params = _source(db, f, "JOIN steps s ON s.version_id = v.id ")
    return db.df(
        "SELECT coalesce(v.error_type, '(none)') AS error_type, s.role, count(*) AS n_steps "
        f"{source} {'AND' if where else 'WHERE'} s.role IN ('original', 'modified', 'solution') "
        "GROUP BY i.id, v.error_type, s.role ORDER BY error_type, s.role",
        params,
    )


def filter_choices(db: Store | Tx, scope: BrowseFilter | None = None) -> dict[str, list[str]]:
    """The values the filter dropdowns offer (difficulties, datasets, tasks, sources, error types).
    With `scope`, only those of the items it matches, as it shows them (an annotator's own work: the
    versions they labelled; issue 32: no value from an item they have no access to)."""
    if scope is not None:
        where, _ = _where(db, scope)
        source, params = _source(db, scope)

        def values(column: str) -> list[str]:
            rows = db.fetchall(
                f"SELECT DISTINCT {column} {source} {'AND' if where else 'WHERE'} "
                f"{column} IS NOT NULL ORDER BY 1 LIMIT 200",
                params,
            )
            return [r[0] for r in rows]

        return {
            "difficulty": list(DIFFICULTIES),
            "dataset": values("d.name"),
            "task": values("d.task"),
            "source": values("v.source"),
            "error_type": values("v.error_type"),
        }
    return {
        "difficulty": list(DIFFICULTIES),
        "dataset": [r[0] for r in db.fetchall("SELECT name FROM datasets ORDER BY name")],
        "task": [r[0] for r in db.fetchall("SELECT DISTINCT task FROM datasets ORDER BY 1")],
        "source": [
            r[0]
            for r in db.fetchall(
                "SELECT DISTINCT v.source FROM items i JOIN item_versions v ON v.id = i.current_version_id "
                "WHERE v.source IS NOT NULL ORDER BY 1 LIMIT 200"
            )
        ],
        "error_type": [
            r[0]
            for r in db.fetchall(
                "SELECT DISTINCT v.error_type FROM items i JOIN item_versions v ON v.id = i.current_version_id "
                "WHERE v.error_type IS NOT NULL ORDER BY 1 LIMIT 200"
            )
        ],
    }


def lineage_rows(db: Store | Tx, item_id: int) -> list[dict[str, Any]]:
    """Every version of an item, oldest first: number, parent number, why, when, and its question."""
    rows = db.records(
        "SELECT v.id AS version_id, v.version, p.version AS parent, v.reason, v.created_at, v.question, "
        "v.error_steps FROM item_versions v LEFT JOIN item_versions p ON p.id = v.parent_id "
        "WHERE v.item_id = ? ORDER BY v.version",
        [item_id],
    )
    for row in rows:
        row["error_steps"] = json.loads(row["error_steps"])
    return rows


def lineage_with_authors(db: Store | Tx, item_id: int) -> list[dict[str, Any]]:
    """lineage_rows (versions oldest first: number, parent, why, when) with who made each
    (None for imports and generators)."""
    rows = lineage_rows(db, item_id)
    authors = dict(
        db.fetchall(
            "SELECT v.id, u.name FROM item_versions v LEFT JOIN annotators u ON u.id = v.created_by "
            "WHERE v.item_id = ?",
            [item_id],
        )
    )
    for row in rows:
        row["created_by"] = authors.get(row["version_id"])
    return rows


def annotation_rows(db: Store | Tx, item_id: int) -> pd.DataFrame:
    """Every stored label on an item, every version, corrections included, by arrival."""
    return db.df(
        "SELECT v.version, u.name AS annotator, a.payload, a.seconds_spent, a.created_at "
        "FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
        "JOIN item_versions v ON v.id = a.version_id WHERE a.item_id = ? ORDER BY a.id",
        [item_id],
    )


def matching_item_ids(db: Store | Tx, f: BrowseFilter) -> list[int]:
    """Every matching item's id in the filter's sort order (what an export of the filter carries)."""
    source, params = _source(db, f)
    order = SORTS.get(f.sort, SORTS["id"])
    return [int(r[0]) for r in db.fetchall(f"SELECT i.id {source} ORDER BY {order}", params)]


def label_time_rows(db: Store | Tx, f: BrowseFilter) -> pd.DataFrame:
    """Per annotator and matching item: labels stored (corrections included, rulings not) and the
    seconds spent on it summed, as the dashboard counts them (every version of the item)."""
    source, params = _source(db, f)
    return db.df(
        "SELECT u.name AS annotator, a.item_id AS item, count(*) AS labels, "
        "sum(a.seconds_spent) AS seconds FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
        f"WHERE a.task <> '{RULING}' AND a.item_id IN (SELECT i.id {source}) "
        "GROUP BY u.name, a.item_id ORDER BY annotator, item",
        params,
    )
