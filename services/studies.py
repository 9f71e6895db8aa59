"""Agreement studies: an admin draws N items of a dataset, each for K blind raters.

The draw is qc.sampling's (stratified, seeded) over the items store.studies says a study may
draw; store.studies records it and raises the items' targets. Only admins draw; adjudicators and
admins list studies (their progress shows how far other annotators got).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from qc.sampling import fresh_raters, stratified_sample, study_pool
from services.access import require_admin, require_reviewer
from services.errors import InvalidInput, NotFound
from store import studies
from store.datasets import get_dataset

if TYPE_CHECKING:
    from store import Store
    from store.users import Annotator

__all__ = ["MAX_RATERS", "STRATIFY_FIELDS", "Study", "draw_study", "list_studies", "plan_raters"]

MAX_RATERS = studies.MAX_RATERS
STRATIFY_FIELDS = studies.STRATIFY_FIELDS
Study = studies.Study


def list_studies(store: Store, user: Annotator, dataset: str | None = None) -> pd.DataFrame:
    """Every study (of one dataset, if named) with its progress."""
    require_reviewer(user)
    dataset_id = None
    if dataset is not None:
        found = get_dataset(store, dataset)
        if found is None:
            raise NotFound(f"There is no dataset named {dataset!r}.")
        dataset_id = found.id
    return studies.list_studies(store, dataset_id)


def draw_study(
    store: Store,
    user: Annotator,
    *,
    dataset: str | None,
    name: str,
    n_items: int | None,
    raters: int | None,
    stratify_by: str | None = "error_type",
    seed: int = 0,
    kept_only: bool = False,
) -> Study:
    """Admins only: draw the sample and give its items K raters; a bad request stores nothing.

    ``kept_only`` draws as the papers drew (PROTOCOLS A5, C1a): only items the gate kept
    (qc.sampling.study_pool). Off by default while a study also serves as the gate's own pilot.
    """
    admin = require_admin(user)
    if not dataset:
        raise InvalidInput("pick a dataset at the top of the dashboard first")
    if n_items is None or raters is None:
        raise InvalidInput("give the number of items and the raters per item")
    found = get_dataset(store, dataset)
    if found is None:
        raise NotFound(f"there is no dataset named {dataset!r}")
    name = (name or "").strip()
    try:
        studies.check_study(store, name, n_items, raters, stratify_by)
        candidates = studies.study_candidates(store, found.id)
        if kept_only:
            candidates = study_pool(candidates)
        if n_items > len(candidates):
            kind = "kept items" if kept_only else "items that a study can draw"
            raise InvalidInput(f"{found.name} has {len(candidates)} {kind}, not {n_items}")
        drawn = stratified_sample(candidates, n_items, stratify_by, seed)
        return studies.create_study(
            store,
            name=name,
            dataset_name=found.name,
            raters=raters,
            drawn=drawn,
            stratify_by=stratify_by,
            seed=seed,
            created_by=admin.id,
        )
    except studies.StudyError as exc:
        raise InvalidInput(str(exc)) from exc


def plan_raters(store: Store, user: Annotator, study: str, raters: list[str], seed: int = 0) -> pd.DataFrame:
    """Admins: which of ``raters`` rates which study item, K per item, none of whom has labelled the
    item (qc.sampling.fresh_raters). Read-only: nothing is stored, no item's state changes."""
    require_admin(user)
    found = studies.get_study(store, study)
    if found is None:
        raise NotFound(f"There is no study named {study!r}.")
    items = studies.study_items(store, found.id)
    ids = [int(i) for i in items["item_id"]]
    try:
        plan = fresh_raters(ids, raters, studies.seen_by(store, ids), found.raters, seed)
    except ValueError as exc:
        raise InvalidInput(f"{found.name}: {exc}; add raters who have not labelled it") from exc
    return pd.DataFrame(
        {
            "item_id": ids,
            "external_id": items["external_id"].tolist(),
            "raters": [", ".join(plan[i]) for i in ids],
        }
    )
