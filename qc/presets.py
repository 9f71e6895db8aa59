"""The seeds' tables from the log: each preset has the paper's rows, columns and denominators.

ProcessBench's Table 2 (docs/PROTOCOLS.md B3) is the one implementation of that table: the dashboard,
the report files and any study read it from here. Pure: a frame of settled items in, a frame out.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from qc.agreement import cohen_kappa, fleiss_kappa, gwet_ac1, observed_agreement, pabak
from qc.bootstrap import wilson_interval
from qc.consensus import NO_ERROR

__all__ = [
    "MPBENCH_ROWS",
    "TABLE2_ITEM_COLUMNS",
    "TABLE2_ROWS",
    "TABLE_S1_ROWS",
    "crystal_table_s1",
    "mpbench_study",
    "prmbench_v_study",
    "processbench_table2",
    "table2_items",
]

STEP_THRESHOLDS = (5, 10, 15)
SETTLED_AT = (3, 4, 5)
TABLE2_ROWS = (
    "# Samples",
    "% Process errors",
    "# Steps",
    *(f"% ≥ {n} steps" for n in STEP_THRESHOLDS),
    *(f"% 3/{n} agreement" for n in SETTLED_AT),
)
TABLE2_ITEM_COLUMNS = ("subset", "status", "label", "n_annotators", "n_steps", "final_answer_correct")


def _answer(value: Any) -> bool | None:
    """A final-answer flag as True / False / None (unknown), whatever the frame's dtype."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    return bool(value)


def _retained(items: pd.DataFrame) -> pd.DataFrame:
    """Items in the released benchmark: consensus reached, and not "no error" on a wrong final answer.

    The second rule is ProcessBench's own discard (B2); the store's decision already applies it,
    it is repeated here so that a hand-built frame follows the paper too.
    """
    kept = items[items["status"] == "consensus"].copy()
    kept["label"] = pd.to_numeric(kept["label"], errors="coerce")
    kept = kept[kept["label"].notna()]
    wrong = np.array([_answer(v) is False for v in kept["final_answer_correct"]], dtype=bool)
    return kept[~((kept["label"] == NO_ERROR).to_numpy(dtype=bool) & wrong)]


def _percent(part: int | float, whole: int | float) -> float:
    return float("nan") if not whole else 100.0 * float(part) / float(whole)


def _column(items: pd.DataFrame, process_errors: float) -> list[float]:
    """One sub-column's cells in TABLE2_ROWS order; shares are of the column's own items."""
    n = len(items)
    steps = items["n_steps"].astype(float).to_numpy()
    settled = items["n_annotators"].astype(float).to_numpy()
    return [
        float(n),
        process_errors,
        float(steps.mean()) if n else float("nan"),
        *(_percent(int((steps >= k).sum()), n) for k in STEP_THRESHOLDS),
        *(_percent(int((settled == k).sum()), n) for k in SETTLED_AT),
    ]


def processbench_table2(items: pd.DataFrame) -> pd.DataFrame:
    """ProcessBench's Table 2 from settled items (docs/PROTOCOLS.md B3), shares in percent, unrounded.

    ``items``: one row per annotated item with TABLE2_ITEM_COLUMNS. Only retained items count
    (status "consensus", not labelled -1 on a wrong final answer). Each subset splits by the
    consensus label: "error" (label >= 0) and "correct" (label -1). "% Process errors" is the
    subset's FA-correct items whose label is >= 0, over its FA-correct items (an unknown final
    answer is left out), printed in both sub-columns as the paper spans it. "% 3/n agreement"
    counts items settled with exactly n annotators, so the three rows add up to 100 per column.
    Subsets keep their order of first appearance. An empty column has 0 samples and NaN elsewhere.
    """
    missing = [c for c in TABLE2_ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ValueError(f"items need the columns {', '.join(TABLE2_ITEM_COLUMNS)}; missing {missing}")
    kept = _retained(items)
    subsets = [str(s) for s in pd.unique(items["subset"].astype(str))]
    cells: dict[tuple[str, str], list[float]] = {}
    for subset in subsets:
        mine = kept[kept["subset"].astype(str) == subset]
        fa_correct = mine[np.array([_answer(v) is True for v in mine["final_answer_correct"]], dtype=bool)]
        process_errors = _percent(int((fa_correct["label"] >= 0).sum()), len(fa_correct))
        cells[(subset, "error")] = _column(mine[mine["label"] >= 0], process_errors)
        cells[(subset, "correct")] = _column(mine[mine["label"] == NO_ERROR], process_errors)
    columns = pd.MultiIndex.from_tuples(list(cells), names=["subset", "column"])
    return pd.DataFrame(
        np.array(list(cells.values()), dtype=float).T.reshape(len(TABLE2_ROWS), len(cells)),
        index=pd.Index(TABLE2_ROWS, name="row"),
        columns=columns,
    )


def _label(decision: Any) -> Any:
    if isinstance(decision, str) and decision:
        return json.loads(decision).get("label")
    return decision.get("label") if isinstance(decision, dict) else None


def table2_items(states: pd.DataFrame) -> pd.DataFrame:
    """processbench_table2's input from item states (the store's states_frame plus ``n_steps``).

    The subset is the item's source (ProcessBench's split, e.g. "gsm8k"), else its dataset; the
    label is the stored decision's; n_annotators is the number of labels it took to settle.
    """
    needed = ["dataset", "status", "decision", "settled_at", "final_answer_correct", "n_steps"]
    missing = [c for c in needed if c not in states.columns]
    if missing:
        raise ValueError(f"item states need the columns {', '.join(needed)}; missing {missing}")
    if states.empty:
        return pd.DataFrame(columns=list(TABLE2_ITEM_COLUMNS))
    source = states["source"] if "source" in states else pd.Series(None, index=states.index)
    subset = source.where(source.notna() & (source.astype(str) != ""), states["dataset"])
    return pd.DataFrame(
        {
            "subset": subset.astype(str),
            "status": states["status"],
            "label": [_label(d) for d in states["decision"]],
            "n_annotators": states["settled_at"],
            "n_steps": states["n_steps"],
            "final_answer_correct": [_answer(v) for v in states["final_answer_correct"]],
        }
    )


# ---- The agreement studies' tables (docs/PROTOCOLS.md A5, C1a) -------------------------------------------
# Row names follow Table 2's convention: "# " a count, "% " a share in percent, else a coefficient.

PRMBENCH_V_PUBLISHED = {"# Items": 100.0, "# Agreements": 94.0, "% Observed agreement": 94.0}  # 000 l.370
MPBENCH_PER_PARADIGM = 100  # 003 l.178: 100 instances per evaluation paradigm, 3 annotators


def _valid(values: np.ndarray, valid: Any) -> np.ndarray:
    """1.0 where a rating says valid, 0.0 where it says anything else, NaN where missing."""
    out = np.full(values.shape, np.nan)
    present = ~pd.isna(values)
    out[present] = (values[present] == valid).astype(float)
    return out


def prmbench_v_study(ratings: pd.DataFrame, valid: Any) -> pd.DataFrame:
    """PRMBench-V's agreement study (A5) as its recommended report, beside the paper's figures.

    ``ratings``: items x raters, one validity label each (``valid`` is the label meaning valid). Each
    item's first two ratings in column order are rater A and B (the paper's two researchers); items
    with fewer than two take no part. Rows: counts, the 2x2 table, observed agreement with its
    Wilson 95% interval, Cohen's kappa, PABAK (k = 2) and Gwet's AC1; columns "this study", "paper".
    """

    values = _valid(ratings.to_numpy(dtype=object), valid)
    firsts = [row[~np.isnan(row)][:2] for row in values]
    pairs = np.array([p for p in firsts if len(p) == 2]).reshape(-1, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    n = len(pairs)
    agree = int((a == b).sum())
    oa = agree / n if n else float("nan")
    low, high = wilson_interval(oa, n)
    rows = {
        "# Items": n,
        "# Agreements": agree,
        "% Observed agreement": 100 * oa,
        "% OA 95% Wilson low": 100 * low,
        "% OA 95% Wilson high": 100 * high,
        "# Both valid": int(((a == 1) & (b == 1)).sum()),
        "# A valid, B invalid": int(((a == 1) & (b == 0)).sum()),
        "# A invalid, B valid": int(((a == 0) & (b == 1)).sum()),
        "# Both invalid": int(((a == 0) & (b == 0)).sum()),
        "Cohen's kappa": cohen_kappa(a.tolist(), b.tolist()),
        "PABAK": pabak(a.tolist(), b.tolist(), n_categories=2),
        "Gwet's AC1": gwet_ac1(pairs.tolist(), categories=[0.0, 1.0]),
    }
    published = [PRMBENCH_V_PUBLISHED.get(name, float("nan")) for name in rows]
    return pd.DataFrame(
        {"this study": [float(v) for v in rows.values()], "paper": published},
        index=pd.Index(list(rows), name="row"),
    )


def _mpbench_column(values: np.ndarray, total: int, pool: float | None) -> list[float]:

    rated = (~np.isnan(values)).sum(axis=1)
    values = values[rated >= 2]
    n = len(values)
    counts = (~np.isnan(values)).sum(axis=1)
    yes = np.nansum(values, axis=1)
    unanimous_valid = float((yes == counts).mean()) if n else float("nan")
    majority_valid = float((yes > counts / 2).mean()) if n else float("nan")
    unanimous = float(((yes == counts) | (yes == 0)).mean()) if n else float("nan")
    low, high = wilson_interval(unanimous_valid, n)
    return [
        float(n),
        100 * n / total if total else float("nan"),
        float(pool) if pool else float("nan"),
        100 * n / pool if pool else float("nan"),
        100 * unanimous_valid,
        100 * low,
        100 * high,
        100 * majority_valid,
        100 * unanimous,
        100 * observed_agreement(values.tolist()) if n else float("nan"),
        fleiss_kappa(values.tolist()) if n else float("nan"),
    ]


MPBENCH_ROWS = (
    "# Items",
    "% Of the study",
    "# Pool",
    "% Sampling fraction",
    "% Unanimous valid",
    "% Unanimous valid 95% Wilson low",
    "% Unanimous valid 95% Wilson high",
    "% Majority valid",
    "% Unanimous agreement",
    "% Pairwise agreement",
    "Fleiss' kappa",
)


def mpbench_study(
    ratings: pd.DataFrame, paradigm: pd.Series, valid: Any, pool: dict[str, int] | None = None
) -> pd.DataFrame:
    """MPBench's human verification study (C1a) with its allocation per paradigm.

    ``ratings``: items x raters validity labels; ``paradigm``: item -> paradigm (its allocation
    stratum); ``pool``: paradigm -> items it was drawn from (for the sampling fraction). One column
    per paradigm and "Pooled"; the headline is the unanimous-valid rate (C1a's conservative reading)
    with its Wilson 95% interval; majority-valid, unanimous and pairwise inter-annotator agreement and
    Fleiss' kappa (not in the paper) beside it. Items with fewer than two ratings take no part.
    """
    values = _valid(ratings.to_numpy(dtype=object), valid)
    groups = pd.Series(ratings.index.map(paradigm), index=ratings.index, dtype=object).fillna("(none)")
    names = [str(g) for g in pd.unique(groups.astype(str))]
    total = int(((~np.isnan(values)).sum(axis=1) >= 2).sum())
    columns = {}
    for name in names:
        mine = (groups.astype(str) == name).to_numpy()
        columns[name] = _mpbench_column(values[mine], total, (pool or {}).get(name))
    columns["Pooled"] = _mpbench_column(values, total, float(sum(pool.values())) if pool else None)
    return pd.DataFrame(columns, index=pd.Index(MPBENCH_ROWS, name="row"))


# CRYSTAL's Table S1 (docs/PROTOCOLS.md E4) printed as the other presets: one row per figure, one column per
# similarity band and Overall (qc.matching.table_s1 has bands as rows).
TABLE_S1_ROWS = {
    "pairs": "# Pairs",
    "agreement": "% Agreement",
    "kappa": "Cohen's kappa",
    "false_matches": "# False matches",
    "missed_matches": "# Missed matches",
    "false_mean_similarity": "False matches: mean similarity",
    "missed_mean_similarity": "Missed matches: mean similarity",
}


def crystal_table_s1(table: pd.DataFrame) -> pd.DataFrame:
    """qc.matching.table_s1's frame turned to the presets' layout; agreement in percent."""
    out = table[[c for c in TABLE_S1_ROWS if c in table.columns]].astype(float).T
    if "agreement" in out.index:
        out.loc["agreement"] = 100 * out.loc["agreement"]
    out.index = pd.Index([TABLE_S1_ROWS[r] for r in out.index], name="row")
    out.columns = [str(c) for c in out.columns]
    return out
