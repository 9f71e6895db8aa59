"""Agreement studies: an admin draws N items of a dataset, each for K blind raters.

The draw is qc.sampling's (stratified, seeded) over the items store.studies says a study may
draw; store.studies records it and raises the items' targets. Only admins draw; adjudicators and
admins list studies (their progress shows how far other annotators got).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from qc.sampling import stratified_sample
from services.access import require_admin, require_reviewer
from services.errors import InvalidInput, NotFound
from store import studies
from store.datasets import get_dataset

if TYPE_CHECKING:
    from store import Store
    from store.users import Annotator

__all__ = ["MAX_RATERS", "STRATIFY_FIELDS", "Study", "draw_study", "list_studies"]

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
) -> Study:
    """Admins only: draw the sample and give its items K raters; a bad request stores nothing."""
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
        if n_items > len(candidates):
            raise InvalidInput(
                f"{found.name} has {len(candidates)} items that a study can draw, not {n_items}"
            )
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
