"""The seeds' tables from the log: each preset has the paper's rows, columns and denominators.

ProcessBench's Table 2 (PROTOCOLS.md B3) is the one implementation of that table: the dashboard,
the report files and any study read it from here. Pure: a frame of settled items in, a frame out.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from qc.consensus import NO_ERROR

__all__ = ["TABLE2_ITEM_COLUMNS", "TABLE2_ROWS", "processbench_table2", "table2_items"]

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
    """ProcessBench's Table 2 from settled items (PROTOCOLS.md B3), shares in percent, unrounded.

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
