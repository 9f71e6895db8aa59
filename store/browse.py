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
    "lineage_rows",
    "step_count_rows",
]

STATES = ("open", "consensus", "complete", "discarded", "disputed", "rejected")
# name -> ORDER BY clause (fixed text: the request only picks a name)
SORTS = {
    "id": "i.id",
    "error type": "v.error_type NULLS LAST, i.id",
    "state": "coalesce(st.status, 'open'), i.id",
    "error position": "v.earliest_error NULLS LAST, i.id",
    "source": "v.source NULLS LAST, i.id",
    "newest version": "v.created_at DESC, i.id",
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


def _where(f: BrowseFilter) -> tuple[str, list[Any]]:
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
    if f.status:
        clauses.append("coalesce(st.status, 'open') = ?")
        params.append(f.status)
    if f.error_position is not None:
        # PRMBench's error steps (0-based in the store) or ProcessBench's earliest error.
        clauses.append(
            "(list_contains(CAST(v.error_steps AS INTEGER[]), ?) "
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


def browse_page(db: Store | Tx, f: BrowseFilter, page: int = 0, size: int = PAGE) -> tuple[pd.DataFrame, int]:
    """One page of matching items (current versions) and how many match in all."""
    where, params = _where(f)
    order = SORTS.get(f.sort, SORTS["id"])
    total = int(db.scalar(f"SELECT count(*) {_FROM}{where}", params))
    frame = db.df(
        "SELECT i.id AS item_id, d.name AS dataset, i.external_id, v.version, v.error_type, v.source, "
        "coalesce(st.status, 'open') AS state, v.earliest_error, v.error_steps, "
        f"left(v.question, 120) AS question {_FROM}{where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*params, size, max(page, 0) * size],
    )
    return frame, total


def error_position_counts(db: Store | Tx, f: BrowseFilter) -> pd.DataFrame:
    """PRMBench-V Fig. 7: error steps per 1-based position and error type (counts, not normalised)."""
    where, params = _where(f)
    return db.df(
        "WITH pos AS (SELECT coalesce(v.error_type, '(none)') AS error_type, "
        "unnest(CASE WHEN v.error_steps <> '[]' THEN CAST(v.error_steps AS INTEGER[]) "
        "WHEN v.earliest_error >= 0 THEN [v.earliest_error] ELSE [] END) AS position "
        f"{_FROM}{where}) "
        "SELECT error_type, position + 1 AS position, count(*) AS error_steps FROM pos "
        "GROUP BY ALL ORDER BY error_type, position",
        params,
    )


def step_count_rows(db: Store | Tx, f: BrowseFilter) -> pd.DataFrame:
    """PRMBench-V Fig. 8's data: per matching item, its error type and the steps of each chain
    (original, modified; solution for ProcessBench-style items)."""
    where, params = _where(f)
    return db.df(
        "SELECT coalesce(v.error_type, '(none)') AS error_type, s.role, count(*) AS n_steps "
        f"{_FROM}JOIN steps s ON s.version_id = v.id {where} "
        f"{'AND' if where else 'WHERE'} s.role IN ('original', 'modified', 'solution') "
        "GROUP BY i.id, v.error_type, s.role ORDER BY error_type, s.role",
        params,
    )


def filter_choices(db: Store | Tx) -> dict[str, list[str]]:
    """The values the filter dropdowns offer (datasets, tasks, sources, error types)."""
    return {
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


def annotation_rows(db: Store | Tx, item_id: int) -> pd.DataFrame:
    """Every stored label on an item, every version, corrections included, by arrival."""
    return db.df(
        "SELECT v.version, u.name AS annotator, a.payload, a.seconds_spent, a.created_at "
        "FROM annotations a JOIN annotators u ON u.id = a.annotator_id "
        "JOIN item_versions v ON v.id = a.version_id WHERE a.item_id = ? ORDER BY a.id",
        [item_id],
    )
