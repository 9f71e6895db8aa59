"""Scoring a model's predictions against gated labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["processbench_scores"]

NO_ERROR = -1


def processbench_scores(predicted: Sequence[Any], gold: Sequence[Any]) -> dict[str, float]:
    """ProcessBench accuracies and their harmonic mean: Zheng et al. 2024, sec. 4.1 ("F1 score").

    ``error_acc``: share of erroneous items (gold != -1) whose predicted earliest-error index is
    exactly the gold one. ``correct_acc``: share of correct items (gold == -1) predicted -1.
    ``f1`` = 2*e*c/(e + c), 0.0 when both are 0. Fractions in [0, 1], not percentages. An empty
    subset makes its accuracy NaN, and then f1 is NaN too. A missing prediction (None/NaN, a
    model output that did not parse) counts as wrong; a missing gold label raises ValueError.
    """
    pred = pd.to_numeric(pd.Series(list(predicted), dtype=object), errors="coerce").to_numpy(dtype=float)
    gold_arr = pd.to_numeric(pd.Series(list(gold), dtype=object), errors="coerce").to_numpy(dtype=float)
    if len(pred) != len(gold_arr):
        raise ValueError(f"predicted and gold differ in length: {len(pred)} != {len(gold_arr)}")
    if np.isnan(gold_arr).any():
        raise ValueError("gold labels must all be step indices or -1")
    erroneous = gold_arr != NO_ERROR
    hits = pred == gold_arr
    error_acc = float(hits[erroneous].mean()) if erroneous.any() else float("nan")
    correct_acc = float(hits[~erroneous].mean()) if (~erroneous).any() else float("nan")
    if np.isnan(error_acc) or np.isnan(correct_acc):
        f1 = float("nan")
    elif error_acc + correct_acc == 0:
        f1 = 0.0
    else:
        f1 = 2 * error_acc * correct_acc / (error_acc + correct_acc)
    return {"error_acc": error_acc, "correct_acc": correct_acc, "f1": f1}
