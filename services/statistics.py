"""The statistics an annotation panel offers: the user's own for annotators, everyone's for reviewers.

On a blind task an annotator sees counts of their own labels only: no other annotator's row, no
"all annotators" total and no settlement shares, since each of those moves with the others' labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from qc import label_stats
from store import annotations as annotation_log
from store import state
from store.datasets import Dataset, list_datasets
from store.db import Store, on_all_cores
from store.users import Annotator

__all__ = ["PanelStatistics", "dataset_names", "panel_statistics"]


@dataclass(frozen=True)
class PanelStatistics:
    labels: int  # labels the user may count (their own, or everyone's for a reviewer)
    annotators: int
    items: int
    summary: pd.DataFrame  # per annotator: items, labels, median seconds
    distributions: dict[str, pd.DataFrame]  # field -> per annotator: the latest label per item, by value
    settlement: pd.DataFrame | None  # shares settled at 3/3, 3/4, 3/5, discarded (reviewers only)
    everyone: bool  # True when the tables hold every annotator's rows


def dataset_names(store: Store, task: str) -> list[str]:
    """The datasets a panel offers: the ones in use (an archived dataset is out of everyone's work;
    admins find it in the Data panel's Datasets tab)."""
    return [d.name for d in list_datasets(store, task=task, archived=False)]


@on_all_cores
def panel_statistics(
    store: Store,
    user: Annotator,
    dataset: Dataset,
    fields: Sequence[str],
    orders: Sequence[list[str] | None] = (),
) -> PanelStatistics:
    log = annotation_log.annotations_frame(store, dataset.id)
    everyone = user.can_see_labels
    if not everyone:
        log = log[log["annotator_id"] == user.id]
    distributions = {}
    for k, field in enumerate(fields):
        table = label_stats.label_distribution(log, field, orders[k] if k < len(orders) else None)
        # One annotator's own row: an "all annotators" total would say more than it is.
        distributions[field] = table if everyone else table[table["annotator"] != "all annotators"]
    settlement = None
    if everyone:
        states = state.states_frame(store, dataset.id)
        settlement = label_stats.settlement_shares(states, int(dataset.setting("quorum")))
    return PanelStatistics(
        labels=len(log),
        annotators=int(log["annotator_id"].nunique()),
        items=int(log["item_id"].nunique()),
        summary=label_stats.annotator_summary(log),
        distributions=distributions,
        settlement=settlement,
        everyone=everyone,
    )
