"""The QC dashboard's report as one value: every table it shows, computed from the store's frames.

Pure: takes the annotation log, the item states and the gating counts the store returns, and
returns a frozen DashboardReport that the panel, the plots and the report files all read.
ProcessBench's Table 2 comes from qc.presets, its one implementation.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from qc import quality
from qc.agreement import pairwise_matrix
from qc.coverage import coverage_note
from qc.presets import processbench_table2, table2_items
from tasks.base import MAX_ANNOTATORS, QUORUM

__all__ = ["DashboardReport", "build_dashboard", "consensus_states", "item_seconds", "stored_consensus"]

_STATUS_ORDER = ("discarded", "complete", "rejected", "disputed", "open")


@dataclass(frozen=True)
class DashboardReport:
    """What the dashboard shows for one dataset (or one study's items)."""

    scope: str  # "dataset NAME" or "study NAME"
    dataset: str
    task: str
    n_boot: int
    seed: int
    n_labels: int
    annotators: list[str]
    agreement: pd.DataFrame  # quality.agreement_table
    by_error_type: pd.DataFrame  # quality.agreement_by_group over error types
    by_position: pd.DataFrame  # quality.earliest_error_by_position (empty for other tasks)
    pairwise: dict[str, pd.DataFrame]  # field -> annotator x annotator observed agreement
    shared: dict[str, pd.DataFrame]  # field -> items both annotators labelled
    quality: pd.DataFrame  # quality.annotator_quality
    item_seconds: pd.DataFrame  # annotator, item, seconds
    states_by_dataset: pd.DataFrame  # items per workflow state, by dataset (counts)
    table2: pd.DataFrame  # qc.presets.processbench_table2 (earliest-error datasets; else empty)
    gating: pd.DataFrame  # what, count
    generated_at: str
    seconds_to_compute: float = 0.0
    notes: list[str] = field(default_factory=list)
    outlier_rules: str = quality.OUTLIER_RULES
    ci: float = 0.95  # the confidence level of every interval, printed beside them

    @property
    def ci_label(self) -> str:
        """'95%' for 0.95: the level as the tables print it."""
        return f"{100 * self.ci:g}%"

    @property
    def interval_coverage(self) -> str:
        """What the coefficients' intervals are and how often they hold the truth (qc.coverage)."""
        return coverage_note(self.ci)

    @property
    def paradox_fields(self) -> list[str]:
        """Fields where skewed prevalence makes kappa misleading (qc.agreement.kappa_paradox)."""
        if self.agreement.empty:
            return []
        return [str(f) for f in self.agreement.loc[self.agreement["kappa_paradox"].astype(bool), "field"]]


def item_seconds(annotations: pd.DataFrame) -> pd.DataFrame:
    """Seconds each annotator spent per item: every save on the item summed (corrections included)."""
    if annotations.empty:
        return pd.DataFrame(columns=["annotator", "item", "seconds"])
    spent = annotations.groupby(["annotator", "item_id"])["seconds_spent"].sum(min_count=1)
    out = spent.rename("seconds").reset_index().rename(columns={"item_id": "item"})
    if "n_steps" in annotations.columns:  # the item's length, for "too fast" on items only one person timed
        lengths = annotations.groupby("item_id")["n_steps"].first()
        out["n_steps"] = out["item"].map(lengths)
    return out


def stored_consensus(states: pd.DataFrame) -> pd.Series:
    """Item -> the label its stored decision agreed on (earliest error), wherever there is one."""
    labels = {}
    for item, decision in zip(states.get("item_id", []), states.get("decision", []), strict=True):
        if isinstance(decision, str) and decision:
            label = json.loads(decision).get("label")
            if label is not None:
                labels[item] = label
    return pd.Series(labels, dtype=object)


def _state_name(status: str, settled_at: float | None, quorum: int) -> str:
    if status == "consensus" and settled_at is not None and not pd.isna(settled_at):
        return f"{quorum}/{int(settled_at)}"
    return str(status)


def consensus_states(
    states: pd.DataFrame,
    by: str,
    quorum: int = QUORUM,
    max_annotators: int = MAX_ANNOTATORS,
    labels: dict[Any, Any] | None = None,
    quorums: dict[str, int] | None = None,
) -> pd.DataFrame:
    """Items per consensus state (ProcessBench's 3/3, 3/4, 3/5, discarded; open, complete, rejected) by group.

    ``by`` is a column of states_frame (dataset, final_answer_correct); ``labels`` renames its
    values; ``quorums`` gives a dataset's own quorum where it is not ``quorum``. Every state
    column is present (zeros included), and "settled" counts the items no longer open.
    """
    keys = [f"{quorum}/{n}" for n in range(quorum, max_annotators + 1)]
    if states.empty:
        return pd.DataFrame(columns=[by, "items", *keys, *_STATUS_ORDER, "settled"])
    q = states["dataset"].map(quorums or {}).fillna(quorum).astype(int)
    names = [
        _state_name(s, n, qq) for s, n, qq in zip(states["status"], states["settled_at"], q, strict=True)
    ]
    groups = states[by].map(lambda v: (labels or {}).get(v, v) if not pd.isna(v) else "unknown").astype(str)
    table = pd.crosstab(groups, pd.Series(names, index=states.index))
    extra = sorted(c for c in table.columns if c not in keys and c not in _STATUS_ORDER)
    table = table.reindex(columns=[*keys, *extra, *_STATUS_ORDER], fill_value=0)
    table.insert(0, "items", table.sum(axis=1))
    table["settled"] = table["items"] - table["open"]
    return table.rename_axis(by).reset_index().rename_axis(columns=None)


def build_dashboard(
    annotations: pd.DataFrame,
    states: pd.DataFrame,
    all_states: pd.DataFrame,
    gating: dict[str, int],
    *,
    dataset: str,
    task: str,
    scope: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    quorum: int = QUORUM,
    max_annotators: int = MAX_ANNOTATORS,
    quorums: dict[str, int] | None = None,
    ci: float = 0.95,
) -> DashboardReport:
    """Every dashboard table for one dataset's labels (``annotations``) and item ``states``.

    ``all_states`` is states_frame over every dataset (for consensus states by dataset). For
    earliest-error tasks ``states`` also needs ``n_steps`` (ProcessBench's Table 2).
    """
    started = time.perf_counter()
    fields = quality.label_fields(task, annotations)
    long = quality.long_labels(annotations, list(fields))
    wides = quality.wide_by_field(long, list(fields))
    agreement = quality.agreement_table(long, fields, n_boot=n_boot, seed=seed, ci=ci, wides=wides)
    error_types = (
        states.set_index("item_id")["error_type"] if "error_type" in states else pd.Series(dtype=object)
    )
    by_type = quality.agreement_by_group(wides, fields, error_types)
    pairwise = {f: pairwise_matrix(w, "agreement", min_items=1) for f, w in wides.items()}
    shared = {f: quality.shared_items(w) for f, w in wides.items()}
    by_position = pd.DataFrame(columns=["position", "n_items", "observed_agreement", "within_1_step"])
    if "earliest_error" in wides:
        by_position = quality.earliest_error_by_position(wides["earliest_error"])
    seconds = item_seconds(annotations)
    consensus = stored_consensus(states) if task == "earliest_error" else None
    status = states.set_index("item_id")["status"] if "status" in states else None
    quality_table = quality.annotator_quality(wides, seconds, consensus, item_status=status)
    states_by_dataset = consensus_states(all_states, "dataset", quorum, max_annotators, quorums=quorums)
    table2 = processbench_table2(table2_items(states)) if task == "earliest_error" else pd.DataFrame()
    gating_frame = pd.DataFrame({"what": list(gating), "count": [int(v) for v in gating.values()]})
    annotators = sorted(str(a) for a in annotations["annotator"].unique()) if len(annotations) else []
    return DashboardReport(
        scope=scope or f"dataset {dataset}",
        dataset=dataset,
        task=task,
        n_boot=n_boot,
        seed=seed,
        n_labels=len(annotations),
        annotators=annotators,
        agreement=agreement,
        by_error_type=by_type,
        by_position=by_position,
        pairwise=pairwise,
        shared=shared,
        quality=quality_table,
        item_seconds=seconds,
        states_by_dataset=states_by_dataset,
        table2=table2,
        gating=gating_frame,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        seconds_to_compute=time.perf_counter() - started,
        ci=ci,
    )
