"""Agreement per field and annotator quality for the QC dashboard: pure functions on frames.

Inputs are the store's annotation log (one row per stored label) and long-format labels
(``item, annotator, field, value``, as qc.report reads them). Nothing here touches the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from qc.agreement import category_counts, cohen_kappa, encode_labels, observed_agreement
from qc.bootstrap import check_n_boot, wilson_interval
from qc.label_stats import latest_labels
from qc.report import agreement_report, point_estimates, tolerance_items
from tasks import SPECS

__all__ = [
    "COEFFICIENTS",
    "FAST_RATIO",
    "GAP",
    "MIN_ITEMS",
    "OUTLIER_RULES",
    "POSITION_BINS",
    "TASK_FIELDS",
    "agreement_by_group",
    "agreement_table",
    "annotator_quality",
    "earliest_error_by_position",
    "field_order",
    "label_fields",
    "lead_coefficient",
    "long_labels",
    "pairable_items",
    "relative_speed",
    "shared_items",
    "tolerance_items",
    "wide_by_field",
    "within_tolerance_ci",
]

NAN = float("nan")

# The level of every field a task stores: the PRMBench-V tool's three choices (difficulty is
# ordered easy < medium < hard) and ProcessBench's earliest-error step (a category, -1 = no error).
TASK_FIELDS: dict[str, dict[str, str]] = {
    "step_review": {"original": "nominal", "modification": "nominal", "difficulty": "ordinal"},
    "earliest_error": {"earliest_error": "nominal"},
    "step_match": {"match": "nominal"},
    # The gate's and the perturbation check's item verdicts; never the gate's free-text reason.
    "quality_gate": {"verdict": "nominal"},
    "perturbation_check": {"verdict": "nominal"},
}
COEFFICIENTS = (
    "observed_agreement",
    "gwet_ac1",
    "pabak",
    "krippendorff_alpha",
    "fleiss_kappa",
    "mean_cohen_kappa",
)

# Outlier rules (documented in OUTLIER_RULES; the dashboard prints that text).
FAST_RATIO = 0.5  # "too fast": typically under half the time the others took on the same items
GAP = 0.15  # "far from consensus": agreement 15 points below the team's median on a field
MIN_ITEMS = 5  # neither flag is raised on fewer items than this
OUTLIER_RULES = (
    f"**too fast**: on the items others also timed, the annotator's time is typically (median) below "
    f"{FAST_RATIO:.0%} of the others' median on the same item (items only they did are compared by "
    f"length: the others' seconds per step), over at least {MIN_ITEMS} compared items. Compared item by "
    "item, so a fast clicker who did many items cannot pull a pooled median down and hide. "
    f"**far from consensus**: on a field, the annotator's agreement with the consensus is more than "
    f"{GAP * 100:.0f} points below the median annotator's, over at least {MIN_ITEMS} compared items, "
    "with at least 3 annotators to compare (with 2 nobody can tell who drifts). "
    "The consensus is the stored earliest-error consensus (ProcessBench's 3 agreeing labels) where "
    "an item has one, else the majority of the other annotators' labels on the item (the "
    "annotator's own label left out; items where the others tie are not compared)."
)

# Earliest-error position bands (0-based step positions; the UI says "Step 1" for position 0).
POSITION_BINS: tuple[tuple[str, int, float], ...] = (
    ("all steps correct", -1, -1),
    ("Step 1", 0, 0),
    ("Step 2", 1, 1),
    ("Step 3", 2, 2),
    ("Steps 4-5", 3, 4),
    ("Steps 6-8", 5, 7),
    ("Step 9 or later", 8, float("inf")),
)


def label_fields(task: str, annotations: pd.DataFrame) -> dict[str, str]:
    """Field -> level for a task; for a task without a fixed list, every scalar payload field, nominal."""
    if task in TASK_FIELDS:
        return dict(TASK_FIELDS[task])
    fields: dict[str, str] = {}
    for label in latest_labels(annotations).get("label", []):
        for key, value in label.items():
            if key != "note" and isinstance(value, str | int | bool) and key not in fields:
                fields[key] = "nominal"
    return fields


def field_order(field: str) -> tuple[str, ...] | None:
    """The full label set of a choice field (so AC1 and PABAK count unused choices too)."""
    for spec in SPECS.values():
        if field in spec.choices:
            return spec.choices[field].values
    return None


def long_labels(annotations: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """Latest label per (item, annotator), one row per field present: ``item, annotator, field, value``."""
    latest = latest_labels(annotations)
    parts = []
    for field in fields:
        values = [label.get(field) if isinstance(label, dict) else None for label in latest.get("label", [])]
        part = pd.DataFrame(
            {
                "item": latest.get("item_id", []),
                "annotator": latest.get("annotator", []),
                "field": field,
                "value": pd.Series(values, dtype=object),
            }
        )
        parts.append(part[part["value"].notna()])
    if not parts:
        return pd.DataFrame(columns=["item", "annotator", "field", "value"])
    return pd.concat(parts, ignore_index=True)


def wide_by_field(long: pd.DataFrame, fields: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Items x annotators matrix per field that has labels: qc.report.ratings_matrix's table (last label
    wins, sorted rows and columns, None where unlabelled), filled with numpy instead of a pivot."""
    out = {}
    present = set(long["field"]) if len(long) else set()
    for field in fields:
        if field not in present:
            continue
        rows = long.loc[long["field"] == field, ["item", "annotator", "value"]]
        rows = rows.drop_duplicates(["item", "annotator"], keep="last")
        items = np.sort(rows["item"].unique())
        annotators = np.array(sorted(rows["annotator"].unique()), dtype=object)
        table = np.full((len(items), len(annotators)), None, dtype=object)
        table[
            np.searchsorted(items, rows["item"].to_numpy()),
            np.searchsorted(annotators, rows["annotator"].to_numpy()),
        ] = rows["value"].to_numpy()
        out[field] = pd.DataFrame(
            table, index=pd.Index(items, name="item"), columns=pd.Index(annotators, name="annotator")
        )
    return out


def pairable_items(wide: pd.DataFrame) -> int:
    """Items with at least two ratings: the items behind an agreement figure."""
    return int((wide.notna().sum(axis=1) >= 2).sum()) if len(wide) else 0


def lead_coefficient(level: str, paradox: bool, max_raters: int, n_categories: int) -> str:
    """The figure to read first for a field.

    Skewed prevalence: observed agreement (PRMBench-V reports OA for this reason; AC1 follows it).
    Ordinal: Krippendorff's alpha with ordinal distances. Binary with two raters per item: Cohen's
    kappa. Other nominal fields: Fleiss' kappa (any number of raters per item).
    """
    if paradox:
        return "observed_agreement"
    if level == "ordinal":
        return "krippendorff_alpha"
    if max_raters <= 2 and n_categories <= 2:
        return "mean_cohen_kappa"
    return "fleiss_kappa"


def within_tolerance_ci(
    wide: pd.DataFrame, tolerance: int = 1, n_boot: int = 1000, seed: int = 0, ci: float = 0.95
) -> tuple[float, float, float]:
    """qc.report.within_tolerance_agreement with a Wilson interval over the pairable items.

    A share, so Wilson's interval (qc.bootstrap.wilson_interval) rather than a percentile bootstrap,
    which collapses to (1, 1) at perfect agreement. ``n_boot`` and ``seed`` are checked and kept for
    callers; no resampling is needed.
    """
    check_n_boot(n_boot)
    share, pairs = tolerance_items(wide.to_numpy(dtype=float), tolerance)
    keep = pairs > 0
    share, n = share[keep], len(share[keep])
    if n < 2:
        return NAN, NAN, NAN
    point = float(share.mean())
    return (point, *wilson_interval(point, n, ci))


def agreement_table(
    long: pd.DataFrame,
    fields: dict[str, str],
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    wides: dict[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """qc.report.agreement_report for the fields that have labels, plus the items behind each figure,
    the lead coefficient, and for earliest error the agreement within one step (with its interval)."""
    wides = wides if wides is not None else wide_by_field(long, list(fields))
    present = {f: lv for f, lv in fields.items() if f in wides}
    if not present:
        return pd.DataFrame(columns=["field", "level", "n_items", "n_pairable", "lead", *COEFFICIENTS])
    order = {}
    for field in present:
        choices = field_order(field)
        if choices is not None and _labels(wides[field]) <= set(choices):
            order[field] = choices
    table = agreement_report(long, present, n_boot=n_boot, seed=seed, order=order, ci=ci)
    pairable, leads, within = [], [], []
    for row in table.itertuples():
        wide = wides[row.field]
        pairable.append(pairable_items(wide))
        max_raters = int(wide.notna().sum(axis=1).max()) if len(wide) else 0
        leads.append(lead_coefficient(row.level, bool(row.kappa_paradox), max_raters, row.n_categories))
        within.append(
            within_tolerance_ci(wide, 1, n_boot, seed, ci)
            if row.field == "earliest_error"
            else (NAN, NAN, NAN)
        )
    table.insert(3, "n_pairable", pairable)
    table.insert(4, "lead", leads)
    table["within_1_step"], table["within_1_step_low"], table["within_1_step_high"] = zip(
        *within, strict=True
    )
    return table


def shared_items(wide: pd.DataFrame) -> pd.DataFrame:
    """Annotator x annotator count of items both labelled (the n behind each pairwise cell)."""
    present = wide.notna().to_numpy(dtype=float)
    return pd.DataFrame(present.T @ present, index=wide.columns, columns=wide.columns).astype(int)


def _modal_label(row: np.ndarray) -> float:
    """The most-chosen label; a tie goes to the earliest step, and to "no error" (-1) only when
    every tied label is -1 (-1 sorts first but is no step)."""
    values = row[~np.isnan(row)]
    if not len(values):
        return NAN
    labels, counts = np.unique(values, return_counts=True)
    tied = labels[counts == counts.max()]
    steps = tied[tied >= 0]
    return float(steps.min() if len(steps) else tied.min())


def earliest_error_by_position(
    wide: pd.DataFrame, bins: Sequence[tuple[str, int, float]] = POSITION_BINS, tolerance: int = 1
) -> pd.DataFrame:
    """Agreement by where the error is: items grouped by their most-chosen earliest-error step.

    Exact observed agreement and agreement within ``tolerance`` steps per band, over items with at
    least two labels. ProcessBench's errors cluster early; late errors in long chains are harder.
    """
    columns = ["position", "n_items", "observed_agreement", "within_1_step"]
    values = wide.to_numpy(dtype=float) if len(wide) else np.empty((0, 0))
    if not len(values):
        return pd.DataFrame(columns=columns)
    keep = (~np.isnan(values)).sum(axis=1) >= 2
    values = values[keep]
    modal = np.array([_modal_label(r) for r in values])
    share, _ = tolerance_items(values, tolerance)
    rows = []
    for name, low, high in bins:
        mask = (modal >= low) & (modal <= high)
        n = int(mask.sum())
        oa = observed_agreement(values[mask].astype(object)) if n else NAN
        rows.append((name, n, oa, float(share[mask].mean()) if n >= 2 else NAN))
    return pd.DataFrame(rows, columns=columns)


def agreement_by_group(
    wides: dict[str, pd.DataFrame], fields: dict[str, str], groups: pd.Series
) -> pd.DataFrame:
    """Point estimates per group of items (e.g. error type) and field, with the items behind them.

    ``wides`` maps field -> items x annotators (wide_by_field); ``groups`` maps item id -> group
    name; items without a group fall in "(none)". Labels are coded once per field, so every group
    shares the field's label set (Gwet's q, the nominal categories), interval and ratio fields too.
    """
    names = ["observed_agreement", "gwet_ac1", "fleiss_kappa", "krippendorff_alpha"]
    columns = ["group", "field", "n_items", *names]
    rows = []
    for field, level in fields.items():
        if field not in wides:
            continue
        wide = wides[field]
        choices = field_order(field)
        codes, categories = encode_labels(
            wide, choices if choices is not None and _labels(wide) <= set(choices) else None
        )
        # Codes keep nominal and ordinal coefficients exact (ordinal alpha reads ranks only).
        numeric = all(isinstance(c, int | float) and not isinstance(c, bool) for c in categories)
        data: Any
        order: list[Any] | None
        if level in ("nominal", "ordinal"):
            data, order = codes, list(range(len(categories)))
        else:  # the field's values as they are, over the field's whole label set (AC1's q)
            data, order = wide, (categories if numeric else None)
        group_of = (
            pd.Series(wide.index.map(groups), index=wide.index, dtype=object)
            .fillna("(none)")
            .astype(str)
            .to_numpy()
        )
        for group in sorted(set(group_of)):
            part = np.asarray(data)[group_of == group]
            rated = ~pd.isna(part)
            part = part[:, rated.any(axis=0)]
            n = int((rated.sum(axis=1) >= 2).sum())
            points = point_estimates(part, names, level, order) if n >= 2 else dict.fromkeys(names, NAN)
            rows.append({"group": group, "field": field, "n_items": n, **points})
    return pd.DataFrame(rows, columns=columns)


def _labels(wide: pd.DataFrame) -> set[Any]:
    values = wide.to_numpy().ravel()
    return {v for v in values if not pd.isna(v)}


def _consensus_codes(codes: np.ndarray, column: int, k: int) -> np.ndarray:
    """Leave-one-out plurality per item: the others' unique most frequent code, NaN on a tie or no one else."""
    others = np.delete(codes, column, axis=1)
    counts = category_counts(others, k) if others.shape[1] else np.zeros((len(codes), k))
    top = counts.max(axis=1) if k else np.zeros(len(codes))
    unique = (counts == top[:, None]).sum(axis=1) == 1
    out = np.where(unique & (top > 0), counts.argmax(axis=1) if k else 0, np.nan)
    return out.astype(float)


def _stored_codes(wide: pd.DataFrame, stored: pd.Series, categories: list[Any]) -> np.ndarray:
    index = {c: i for i, c in enumerate(categories)}
    labels = wide.index.map(stored)
    return np.array([index.get(v, np.nan) if not pd.isna(v) else np.nan for v in labels], dtype=float)


def relative_speed(item_seconds: pd.DataFrame) -> dict[Any, tuple[float, int]]:
    """Per annotator: the median over their items of (their seconds / the others' median seconds on the
    same item), and how many items that compares. Items nobody else timed are compared by length when
    ``item_seconds`` has an ``n_steps`` column: the others' median seconds per step times the item's steps.
    """
    timed = item_seconds.dropna(subset=["seconds"])
    out: dict[Any, tuple[float, int]] = {}
    if timed.empty:
        return out
    has_length = "n_steps" in timed.columns
    for who, mine in timed.groupby("annotator"):
        others = timed[timed["annotator"] != who]
        by_item = others.groupby("item")["seconds"].median()
        per_step = NAN
        if has_length:
            steps = others["n_steps"].astype(float)
            rates = (others["seconds"] / steps.where(steps > 0)).dropna()
            per_step = float(rates.median()) if len(rates) else NAN
        ratios = []
        for item, seconds, n_steps in zip(
            mine["item"], mine["seconds"], mine["n_steps"] if has_length else [NAN] * len(mine), strict=True
        ):
            reference = by_item.get(item, NAN)
            if np.isnan(reference) and has_length and not np.isnan(per_step) and n_steps and n_steps > 0:
                reference = per_step * float(n_steps)
            if not np.isnan(reference) and reference > 0:
                ratios.append(float(seconds) / float(reference))
        out[who] = (float(np.median(ratios)) if ratios else NAN, len(ratios))
    return out


SETTLED = ("consensus", "complete", "accepted")  # item states with an agreed outcome
DISCARDED = ("discarded",)  # no agreement reachable: the item leaves the benchmark


def annotator_quality(
    wides: dict[str, pd.DataFrame],
    item_seconds: pd.DataFrame,
    stored_consensus: pd.Series | None = None,
    fast_ratio: float = FAST_RATIO,
    gap: float = GAP,
    min_items: int = MIN_ITEMS,
    item_status: pd.Series | None = None,
) -> pd.DataFrame:
    """One row per annotator and field: items done, how many of them settled and how many were
    discarded (apart: a discarded item has no consensus to agree with), median seconds, agreement and
    Cohen's kappa with the consensus, and the outlier flags of OUTLIER_RULES.

    ``wides``: field -> items x annotators (wide_by_field). ``item_seconds``: ``annotator, item,
    seconds`` (time spent per item). ``stored_consensus``: item -> agreed label where the task
    stores one (earliest error); other items use the leave-one-out majority. Comparing only with
    stored consensus would count only settled items, where most annotators agree by construction.
    ``item_status``: item -> its state's status (SETTLED and DISCARDED name which count where).
    """
    columns = [
        "annotator",
        "field",
        "items",
        "settled",
        "discarded",
        "median_seconds",
        "compared",
        "agreement",
        "kappa",
        "flags",
    ]
    if not wides:
        return pd.DataFrame(columns=columns)
    timed = item_seconds.dropna(subset=["seconds"])
    median = timed.groupby("annotator")["seconds"].median()
    status = item_status if item_status is not None else pd.Series(dtype=object)
    speed = relative_speed(timed)
    rows = []
    for field, wide in wides.items():
        codes, categories = encode_labels(wide)
        stored = _stored_codes(wide, stored_consensus, categories) if stored_consensus is not None else None
        for j, who in enumerate(wide.columns):
            mine = codes[:, j]
            truth = _consensus_codes(codes, j, len(categories))
            if stored is not None:  # the stored decision wins where there is one
                truth = np.where(np.isnan(stored), truth, stored)
            both = ~np.isnan(mine) & ~np.isnan(truth)
            statuses = status.reindex(wide.index[~np.isnan(mine)]).to_numpy(dtype=object)
            agreement = float(np.mean(mine[both] == truth[both])) if both.any() else NAN
            kappa = cohen_kappa(mine[both].tolist(), truth[both].tolist()) if both.sum() >= 2 else NAN
            rows.append(
                {
                    "annotator": who,
                    "field": field,
                    "items": int((~np.isnan(mine)).sum()),
                    "settled": int(np.isin(statuses, SETTLED).sum()),
                    "discarded": int(np.isin(statuses, DISCARDED).sum()),
                    "median_seconds": float(median.get(who, NAN)),
                    "compared": int(both.sum()),
                    "agreement": agreement,
                    "kappa": kappa,
                }
            )
    out = pd.DataFrame(rows, columns=columns[:-1])
    flags = []
    for row in out.itertuples():
        found = []
        ratio, compared = speed.get(row.annotator, (NAN, 0))
        if compared >= min_items and ratio < fast_ratio:
            found.append("too fast")
        peers = out[(out["field"] == row.field) & (out["compared"] >= min_items)]["agreement"].dropna()
        if row.compared >= min_items and len(peers) >= 3 and row.agreement < peers.median() - gap:
            found.append("far from consensus")
        flags.append(", ".join(found))
    out["flags"] = flags
    return out.sort_values(["annotator", "field"], ignore_index=True)[columns]
