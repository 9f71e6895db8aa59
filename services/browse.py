"""Browse: filter, page, open an item with its history and every label on it, plot the filter.

Every use case here shows other annotators' labels (or lets one infer them: a filter by annotator,
a decision state), so each one checks the role first, through services.access: a panel event
called over HTTP by a script meets the same rule as a click.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import pandas as pd

from services.access import may_see_archived, require_reviewer
from services.errors import InvalidInput, NotAllowed, NotFound
from services.exports import ItemSelection, Progress, Written, export
from store.browse import (
    DIFFICULTIES,
    PAGE,
    SORTS,
    STATES,
    BrowseFilter,
    annotation_rows,
    browse_page,
    error_position_counts,
    filter_choices,
    label_time_rows,
    lineage_rows,
    matching_item_ids,
    step_count_rows,
)
from store.datasets import list_datasets
from store.db import on_all_cores
from store.items import ItemView, get_item
from store.state import ItemState, get_item_state
from store.users import Annotator

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from store import Store

__all__ = [
    "DIFFICULTIES",
    "FIGURES",
    "OWN_WORK_ONLY",
    "PAGE",
    "SORTS",
    "STATES",
    "BrowseFilter",
    "ItemDetail",
    "Page",
    "choices",
    "distribution",
    "export_view",
    "figures",
    "filter_from_query",
    "open_item",
    "query_for",
    "search",
    "select_items",
    "step_counts",
]

_MAX_TEXT = 200
_FIELDS = ("dataset", "task", "source", "error_type", "status", "annotator", "text", "difficulty")
# The Browse panel's plots, each for the current filter, in the order shown.
FIGURES = ("error_positions", "step_counts", "steps_per_chain", "labels_by_annotator", "time_per_item")


@dataclass(frozen=True)
class Page:
    rows: pd.DataFrame
    total: int
    page: int  # 0-based
    pages: int


@dataclass(frozen=True)
class ItemDetail:
    item: ItemView
    dataset: str
    state: ItemState | None
    lineage: list[dict[str, Any]]
    annotations: pd.DataFrame
    versions: list[ItemView]  # every version, oldest first (for diffs between them)
    own_work_only: bool = False  # an annotator's view: their own labels, no decided state


def _checked(f: BrowseFilter) -> BrowseFilter:
    """Bounded, known values only: the filter comes from a form or a URL anyone can edit."""
    if f.status and f.status not in STATES:
        raise InvalidInput(f"unknown state {f.status!r}: choose one of {', '.join(STATES)}")
    if f.difficulty and f.difficulty not in DIFFICULTIES:
        raise InvalidInput(f"unknown difficulty {f.difficulty!r}: choose one of {', '.join(DIFFICULTIES)}")
    if f.sort not in SORTS:
        raise InvalidInput(f"unknown sort {f.sort!r}: choose one of {', '.join(SORTS)}")
    if f.error_position is not None and not 1 <= f.error_position <= 10_000:
        raise InvalidInput("error position: a step number from 1")
    for name in _FIELDS:
        value = getattr(f, name)
        if value is not None and (not isinstance(value, str) or len(value) > _MAX_TEXT):
            raise InvalidInput(f"{name}: at most {_MAX_TEXT} characters")
    cleaned: dict[str, Any] = {n: (getattr(f, n) or "").strip() or None for n in _FIELDS}
    return replace(f, **cleaned)


OWN_WORK_ONLY = (
    "Annotators browse their own finished work only: other annotators' labels, and the states and "
    "difficulties decided from them, are for adjudicators and admins."
)
_DECIDED = ("state", "difficulty")  # columns and sorts read from every annotator's labels


def _scoped(user: Annotator, f: BrowseFilter) -> BrowseFilter:
    """The filter as this user may run it. Reviewers: as asked. An annotator: the items they labelled,
    and no condition on what others' labels decided (a state or difficulty would tell them)."""
    f = replace(_checked(f), live_only=not may_see_archived(user))
    if user.can_see_labels:
        return f
    if f.annotator not in (None, user.name) or f.status or f.difficulty or f.sort in _DECIDED:
        raise NotAllowed(OWN_WORK_ONLY)
    # Each item as the version they labelled: the current one may be another annotator's accepted edit.
    return replace(f, annotator=user.name, labelled_by=user.name)


def choices(store: Store, user: Annotator) -> dict[str, list[str]]:
    """The filter's choices (names of datasets, sources, error types: nobody's labels); archived
    datasets for admins only; an annotator's from their own live work only."""
    if not user.can_see_labels:  # the values of their own work only, as they labelled it
        return filter_choices(store, _scoped(user, BrowseFilter()))
    found = filter_choices(store)
    if not may_see_archived(user):
        hidden = {d.name for d in list_datasets(store, archived=True)}
        found["dataset"] = [name for name in found["dataset"] if name not in hidden]
    return found


@on_all_cores
def search(store: Store, user: Annotator, f: BrowseFilter, page: int = 0) -> Page:
    """One page of 25 matching items; a page past the end shows the last one. An annotator's pages hold
    their own finished work, without the decided state and difficulty."""
    f = _scoped(user, f)
    rows, total = browse_page(store, f, page=max(int(page), 0))
    pages = max(1, -(-total // PAGE))
    if page >= pages and total:
        page = pages - 1
        rows, total = browse_page(store, f, page=page)
    rows = rows.assign(
        error_steps=[", ".join(str(i + 1) for i in json.loads(s)) for s in rows["error_steps"]],
        earliest_error=[None if pd.isna(e) or e < 0 else int(e) + 1 for e in rows["earliest_error"]],
    )
    if not user.can_see_labels:
        rows = rows.drop(columns=list(_DECIDED))
    return Page(rows, total, max(int(page), 0), pages)


@on_all_cores
def distribution(store: Store, user: Annotator, f: BrowseFilter) -> tuple[pd.DataFrame, Figure]:
    """Error-step positions by error type for the filter, and PRMBench-V's Figure 7 drawn from them."""
    counts = error_position_counts(store, _scoped(user, f))
    from qc.plots import error_position_figure  # matplotlib loads when a plot is first drawn

    return counts, error_position_figure(counts)


@on_all_cores
def step_counts(store: Store, user: Annotator, f: BrowseFilter) -> tuple[pd.DataFrame, Figure]:
    """Steps per chain by error type for the filter (original vs modified), and PRMBench-V's Figure 8."""
    rows = step_count_rows(store, _scoped(user, f))
    from qc.plots import step_counts_figure

    return rows, step_counts_figure(rows)


@on_all_cores
def figures(store: Store, user: Annotator, f: BrowseFilter) -> dict[str, Figure]:
    """Every plot of the panel for the filter (FIGURES' names): PRMBench-V's Figures 7 and 8, steps
    per chain, labels by annotator and time per item (three queries, however many plots). An
    annotator's plots count their own labels and time only."""
    from qc.plots import (
        error_position_figure,
        labels_by_annotator_figure,
        step_counts_figure,
        steps_per_chain_figure,
        time_per_item_figure,
    )

    f = _scoped(user, f)
    chains = step_count_rows(store, f)
    labels = label_time_rows(store, f)
    if not user.can_see_labels:
        labels = labels[labels["annotator"] == user.name]
    return {
        "error_positions": error_position_figure(error_position_counts(store, f)),
        "step_counts": step_counts_figure(chains),
        "steps_per_chain": steps_per_chain_figure(chains),
        "labels_by_annotator": labels_by_annotator_figure(labels),
        "time_per_item": time_per_item_figure(labels),
    }


def open_item(store: Store, user: Annotator, item_id: Any) -> ItemDetail:
    """An item's current version, its versions as a lineage and every label on it (discarded too).
    An annotator opens only items they labelled: the version they last labelled and their own labels,
    nothing that depends on others' (no current version, no lineage, no state; issue 32, hole 2)."""
    try:
        number = int(item_id)
    except (TypeError, ValueError):
        raise InvalidInput(f"item: {item_id!r} is not an item number") from None
    item = get_item(store, number) if 0 < number < 2**62 else None
    if item is None:
        raise NotFound(
            f"no item {number}" if user.can_see_labels else f"item {number} is not among your finished work"
        )
    frame = annotation_rows(store, number)
    if not user.can_see_labels:
        frame = frame[frame["annotator"] == user.name].reset_index(drop=True)
        if frame.empty:  # the same answer as for a missing item: nothing tells whether others labelled it
            raise NotFound(f"item {number} is not among your finished work")
    if len(frame):
        labels = pd.json_normalize([json.loads(p) for p in frame["payload"]])
        labels.index = frame.index
        frame = pd.concat([frame.drop(columns=["payload"]), labels], axis=1)
    from store.datasets import get_dataset

    dataset = get_dataset(store, item.dataset_id)
    lineage = lineage_rows(store, number)
    versions = [v for v in (get_item(store, number, row["version_id"]) for row in lineage) if v is not None]
    if not user.can_see_labels:
        labelled = int(frame["version"].max())
        item = next(v for v in versions if v.version == labelled)
        lineage, versions = [], [item]
    return ItemDetail(
        item=item,
        dataset=dataset.name if dataset else "",
        state=get_item_state(store, number) if user.can_see_labels else None,
        lineage=lineage,
        annotations=frame,
        versions=versions,
        own_work_only=not user.can_see_labels,
    )


def query_for(f: BrowseFilter, item_id: int | None = None, page: int = 0) -> str:
    """The URL query that reopens this filter (and item, and page) in the Browse tab."""
    params: dict[str, Any] = {"tab": "browse"}
    for name in (*_FIELDS, "error_position"):
        value = getattr(f, name)
        if value not in (None, ""):
            params[name] = value
    if f.sort != "id":
        params["sort"] = f.sort
    if page:
        params["page"] = page + 1
    if item_id is not None:
        params["item"] = item_id
    return "?" + urlencode(params)


def filter_from_query(params: Mapping[str, str]) -> tuple[BrowseFilter, int | None, int]:
    """A link's query back to (filter, item id or None, 0-based page); unknown keys are ignored."""

    def number(name: str) -> int | None:
        raw = params.get(name)
        if raw in (None, ""):
            return None
        try:
            return int(str(raw))
        except ValueError:
            raise InvalidInput(f"{name}: {raw!r} is not a number") from None

    fields: dict[str, Any] = {n: params.get(n) or None for n in _FIELDS}
    f = BrowseFilter(
        **fields,
        error_position=number("error_position"),
        sort=params.get("sort") or "id",
    )
    return _checked(f), number("item"), max((number("page") or 1) - 1, 0)


def select_items(store: Store, f: BrowseFilter) -> ItemSelection:
    """The filter's matching items for an export, and the filter as its manifest names it (with the
    link that reopens the view). No role check: callers check (Browse) or own the file (the CLI)."""
    f = _checked(f)
    named = {n: getattr(f, n) for n in (*_FIELDS, "error_position") if getattr(f, n) not in (None, "")}
    return ItemSelection(matching_item_ids(store, f), {**named, "sort": f.sort, "link": query_for(f)})


def export_view(
    store: Store, user: Annotator, f: BrowseFilter, fmt: str, out: Path, progress: Progress | None = None
) -> Written:
    """The current filter's items in a format, for an adjudicator or admin (it carries every label)."""
    require_reviewer(user)
    return export(
        store, fmt, out, dataset=_checked(f).dataset, items=select_items(store, f), progress=progress
    )
