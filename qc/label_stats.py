"""Per-annotator counts and label distributions behind each panel's "View statistics".

Pure functions on the frames the store returns (annotations_frame, states_frame).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from tasks.base import QUORUM

__all__ = ["annotator_summary", "label_distribution", "latest_labels", "settlement_shares"]


def latest_labels(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, annotator): their latest label, payload parsed into a dict."""
    if annotations.empty:
        return annotations.assign(label=pd.Series(dtype=object))
    latest = annotations.sort_values("annotation_id").groupby(["item_id", "annotator"], as_index=False).last()
    latest["label"] = [json.loads(p) if isinstance(p, str) else p for p in latest["payload"]]
    return latest


def annotator_summary(annotations: pd.DataFrame) -> pd.DataFrame:
    """Items labelled, labels given (corrections included) and median seconds per label, by annotator."""
    columns = ["annotator", "items", "labels", "median_seconds"]
    if annotations.empty:
        return pd.DataFrame(columns=columns)
    grouped = annotations.groupby("annotator")
    out = pd.DataFrame(
        {
            "items": grouped["item_id"].nunique(),
            "labels": grouped.size(),
            "median_seconds": grouped["seconds_spent"].median().round(1),
        }
    ).reset_index()
    return out[columns].sort_values("annotator", ignore_index=True)


def label_distribution(annotations: pd.DataFrame, field: str, order: list[Any] | None = None) -> pd.DataFrame:
    """Annotator x label counts of one payload field (latest label per item), with a total row."""
    latest = latest_labels(annotations)
    if latest.empty:
        return pd.DataFrame(columns=["annotator", *(order or [])])
    values = pd.Series([label.get(field) for label in latest["label"]], index=latest.index)
    table = pd.crosstab(latest["annotator"], values.astype(str))
    if order is not None:
        table = table.reindex(columns=[str(o) for o in order], fill_value=0)
    table.loc["all annotators"] = table.sum()
    return table.reset_index().rename(columns={"row_0": "annotator"}).rename_axis(columns=None)


def settlement_shares(states: pd.DataFrame, quorum: int = QUORUM) -> pd.DataFrame:
    """Annotation progress: items settled at 3/3, 3/4, 3/5, discarded, still open; counts and shares of all items.

    A progress view for the annotation panel, not ProcessBench's Table 2 (whose agreement rows are
    shares of the retained items of each subset and label column): that is qc.presets.processbench_table2.
    """
    total = len(states)
    rows = []
    settled = states[states["status"] == "consensus"]
    for n in sorted(settled["settled_at"].dropna().astype(int).unique()):
        rows.append((f"{quorum}/{n}", int((settled["settled_at"] == n).sum())))
    rows.append(("discarded", int((states["status"] == "discarded").sum())))
    rows.append(("open", int((states["status"] == "open").sum())))
    frame = pd.DataFrame(rows, columns=["state", "items"])
    frame["share"] = (frame["items"] / total).round(3) if total else 0.0
    return frame
