"""Scoring a model's predictions against gated labels: ProcessBench, PRMBench-V and PRMBench's PRMScore
here; MPBench in
qc.mpbench and ConfProBench in qc.confidence (re-exported below, so callers need this module only).

Every metric is a fraction in [0, 1] (the papers print x100). Pure functions on sequences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from qc.confidence import (
    ccs_from_components,
    confidence,
    confidence_scores,
    crs_from_components,
    reliability_bins,
)
from qc.mpbench import (
    best_of_n,
    mpbench_overall,
    rmscore,
    rps_scores,
    step_predictions,
    weighted_majority_vote,
)

__all__ = [
    "AVERAGE",
    "OVERALL",
    "PRMSCORE_CONVENTIONS",
    "best_of_n",
    "ccs_from_components",
    "choose_threshold",
    "confidence",
    "confidence_scores",
    "crs_from_components",
    "earliest_error_from_scores",
    "harmonic_mean",
    "lowest_scored_steps",
    "mpbench_overall",
    "prmbench_v_scores",
    "prmbench_v_table",
    "prmscore",
    "processbench_average",
    "processbench_scores",
    "processbench_table",
    "reliability_bins",
    "rmscore",
    "rps_scores",
    "step_correct",
    "step_predictions",
    "weighted_majority_vote",
]

NO_ERROR = -1
AVERAGE = "Average"  # ProcessBench's last column: the unweighted mean of the subsets' F1
OVERALL = "Overall"  # PRMBench-V's last column: macro over every item
NAN = float("nan")


def _indices(values: Sequence[Any]) -> np.ndarray:
    out: np.ndarray = pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(
        dtype=float
    )
    return out


def harmonic_mean(error_acc: float, correct_acc: float, both_zero: float = 0.0) -> float:
    """2ec/(e + c): ProcessBench's F1 (002 l.272). One accuracy 0 gives 0; both 0 gives ``both_zero``
    (the paper is silent; 0 by default, B4); NaN when either is undefined."""
    if np.isnan(error_acc) or np.isnan(correct_acc):
        return NAN
    if error_acc + correct_acc == 0:
        return float(both_zero)
    return 2 * error_acc * correct_acc / (error_acc + correct_acc)


def processbench_scores(
    predicted: Sequence[Any], gold: Sequence[Any], both_zero: float = 0.0
) -> dict[str, float]:
    """ProcessBench accuracies and their harmonic mean: Zheng et al. 2024, sec. 4.1 ("F1 score").

    ``error_acc``: share of erroneous items (gold != -1) whose predicted earliest-error index is
    exactly the gold one. ``correct_acc``: share of correct items (gold == -1) predicted -1.
    ``f1`` = 2*e*c/(e + c); ``both_zero`` when both are 0. Fractions in [0, 1], not percentages. An
    empty subset makes its accuracy NaN, and then f1 is NaN too. A missing prediction (None/NaN, a
    model output that did not parse) counts as wrong; a missing gold label raises ValueError.
    """
    pred = _indices(predicted)
    gold_arr = _indices(gold)
    if len(pred) != len(gold_arr):
        raise ValueError(f"predicted and gold differ in length: {len(pred)} != {len(gold_arr)}")
    if np.isnan(gold_arr).any():
        raise ValueError("gold labels must all be step indices or -1")
    erroneous = gold_arr != NO_ERROR
    hits = pred == gold_arr
    error_acc = float(hits[erroneous].mean()) if erroneous.any() else NAN
    correct_acc = float(hits[~erroneous].mean()) if (~erroneous).any() else NAN
    return {
        "error_acc": error_acc,
        "correct_acc": correct_acc,
        "f1": harmonic_mean(error_acc, correct_acc, both_zero),
    }


def processbench_average(f1s: Iterable[float]) -> float:
    """Table 3's Average: the unweighted mean of the subset F1s (B4; reproduces all 25 published rows).

    Not the F1 of the mean accuracies, nor a mean weighted by subset size. Undefined subsets (NaN)
    are left out, as B4 recommends (the caller warns); NaN when none is defined.
    """
    values = [float(v) for v in f1s if not np.isnan(float(v))]
    return float(np.mean(values)) if values else NAN


def processbench_table(
    predicted: Sequence[Any], gold: Sequence[Any], subsets: Sequence[Any], both_zero: float = 0.0
) -> pd.DataFrame:
    """Tables 3/5: one row per subset (order of first appearance) and a last row AVERAGE.

    Columns: n_error, n_correct (the denominators), error_acc, correct_acc, f1. The Average row has
    the mean of the subsets' F1 (processbench_average) and NaN accuracies, as the paper prints it.
    """
    if not len(predicted) == len(gold) == len(subsets):
        raise ValueError(
            f"predicted, gold and subsets differ in length: {len(predicted)}, {len(gold)}, {len(subsets)}"
        )
    frame = pd.DataFrame({"pred": list(predicted), "gold": list(gold), "subset": [str(s) for s in subsets]})
    rows = []
    for subset, part in frame.groupby("subset", sort=False):
        scores = processbench_scores(part["pred"].tolist(), part["gold"].tolist(), both_zero)
        gold_arr = _indices(part["gold"].tolist())
        rows.append(
            {
                "subset": subset,
                "n_error": int((gold_arr != NO_ERROR).sum()),
                "n_correct": int((gold_arr == NO_ERROR).sum()),
                **scores,
            }
        )
    table = pd.DataFrame(rows, columns=["subset", "n_error", "n_correct", "error_acc", "correct_acc", "f1"])
    average = {
        "subset": AVERAGE,
        "n_error": int(table["n_error"].sum()),
        "n_correct": int(table["n_correct"].sum()),
        "error_acc": NAN,
        "correct_acc": NAN,
        "f1": processbench_average(table["f1"]),
    }
    return pd.concat([table, pd.DataFrame([average])], ignore_index=True)


def earliest_error_from_scores(step_scores: Sequence[float], threshold: float, strict: bool = True) -> int:
    """A scalar PRM's earliest-error index (0-based; -1 = none): the first step whose score is not
    above ``threshold`` (002 l.278: correct iff "above"; ``strict=False`` counts a score equal to it
    as correct too, i.e. the first step below it). A missing score (None/NaN) counts as not above."""
    scores = np.asarray([np.nan if s is None else float(s) for s in step_scores], dtype=float)
    ok = scores > threshold if strict else scores >= threshold
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else NO_ERROR


def choose_threshold(
    step_scores: Sequence[Sequence[float]],
    gold: Sequence[Any],
    candidates: Sequence[float] | None = None,
    strict: bool = True,
) -> tuple[float, float]:
    """ProcessBench's tau for scalar PRMs: the one with the highest F1 on the items given (the paper
    passes its GSM8K subset, 002 l.278), and that F1. Candidates default to every midpoint between
    adjacent distinct scores plus one below and one above them all (the exact optimum); ties go to
    the smallest tau.
    """
    if len(step_scores) != len(gold):
        raise ValueError(f"step_scores and gold differ in length: {len(step_scores)} != {len(gold)}")
    if candidates is None:
        distinct = np.unique(
            [float(s) for scores in step_scores for s in scores if s is not None and not np.isnan(float(s))]
        )
        if not len(distinct):
            raise ValueError("no step scores to choose a threshold from")
        candidates = [distinct[0] - 1.0, *((distinct[:-1] + distinct[1:]) / 2.0), distinct[-1] + 1.0]
    best_tau, best_f1 = NAN, -1.0
    for tau in sorted(float(t) for t in candidates):
        predicted = [earliest_error_from_scores(s, tau, strict) for s in step_scores]
        f1 = processbench_scores(predicted, gold)["f1"]
        if not np.isnan(f1) and f1 > best_f1:
            best_tau, best_f1 = tau, f1
    return best_tau, (best_f1 if best_f1 >= 0 else NAN)


# ---- PRMBench-V (docs/PROTOCOLS.md A6) -------------------------------------------------------------------


def _step_set(steps: Any) -> set[int]:
    if steps is None or (isinstance(steps, float) and np.isnan(steps)):
        return set()
    return {int(s) for s in steps}


def _prmbench_item(pred: set[int], gold: set[int]) -> tuple[float, float, float]:
    hit = len(pred & gold)
    return float(pred == gold), (hit / len(pred) if pred else 0.0), hit / len(gold)


def prmbench_v_scores(predicted: Sequence[Any], gold: Sequence[Any]) -> dict[str, float]:
    """PRMBench-V's strict accuracy and relaxed precision and recall, macro over items (A6, 000 l.133-140).

    Per item a collection of 1-based erroneous step numbers (gold non-empty; duplicates ignored):
    accuracy = the two sets are equal; precision = |P & G| / |P| (0 for an empty or unparsed
    prediction, which stays in the denominator); recall = |P & G| / |G|. NaN on no items.
    """
    if len(predicted) != len(gold):
        raise ValueError(f"predicted and gold differ in length: {len(predicted)} != {len(gold)}")
    per_item = []
    for i, (p, g) in enumerate(zip(predicted, gold, strict=True)):
        gold_set = _step_set(g)
        if not gold_set:
            raise ValueError(f"item {i}: PRMBench-V's gold error steps must not be empty")
        per_item.append(_prmbench_item(_step_set(p), gold_set))
    if not per_item:
        return {"accuracy": NAN, "precision": NAN, "recall": NAN}
    acc, prec, rec = np.asarray(per_item).mean(axis=0)
    return {"accuracy": float(acc), "precision": float(prec), "recall": float(rec)}


def prmbench_v_table(
    predicted: Sequence[Any], gold: Sequence[Any], error_types: Sequence[Any]
) -> pd.DataFrame:
    """Tables 1 and 5: one row per error type (sorted) and OVERALL (macro over all items, A6), with
    the items behind each: columns error_type, n_items, accuracy, precision, recall."""
    if not len(predicted) == len(gold) == len(error_types):
        raise ValueError("predicted, gold and error_types differ in length")
    types = [str(t) for t in error_types]
    rows = []
    for t in sorted(set(types)):
        mine = [i for i, x in enumerate(types) if x == t]
        scores = prmbench_v_scores([predicted[i] for i in mine], [gold[i] for i in mine])
        rows.append({"error_type": t, "n_items": len(mine), **scores})
    rows.append({"error_type": OVERALL, "n_items": len(types), **prmbench_v_scores(predicted, gold)})
    return pd.DataFrame(rows, columns=["error_type", "n_items", "accuracy", "precision", "recall"])


def lowest_scored_steps(step_scores: Sequence[float], k: int) -> list[int]:
    """PRMBench-V's rule for scalar PRMs (A6, 000 l.476-478): the 1-based numbers of the k lowest-
    scored steps, ascending; k = the item's number of gold error steps. Among equal scores the
    earlier step goes first (a stable sort by score, then index). A missing score counts as lowest.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scores = np.asarray([-np.inf if s is None else float(s) for s in step_scores], dtype=float)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    order = np.argsort(scores, kind="stable")[:k]
    return sorted(int(i) + 1 for i in order)


# ---- PRMBench's PRMScore (docs/PROTOCOLS.md C3b; its authors' mr_eval) -----------------------------------

# Where a precision, recall or F1 has a zero denominator, the paper is silent and its formula gives 0;
# PRMBench's code (mr_eval/tasks/*/task.py, evaluate_function) sets it to -1 ("undefined"), lets that -1
# into 0.5 * F1 + 0.5 * negative F1, and its leaderboard scripts clip the score at 0.
PRMSCORE_CONVENTIONS = {
    "zero": "the paper's formula: an undefined F1 is 0",
    "minus_one_clipped": "PRMBench's code: an undefined F1 is -1, the score clipped at 0",
}


def step_correct(error_steps: Any, n_steps: int) -> list[bool]:
    """Per step 1..n_steps: correct unless its 1-based number is among ``error_steps``."""
    wrong = _step_set(error_steps)
    return [number not in wrong for number in range(1, n_steps + 1)]


def _ratio_or_minus_one(num: float, den: float) -> float:
    return num / den if den != 0 else -1.0


def _f1_minus_one(tp: float, fp: float, fn: float) -> float:
    """mr_eval's F1: precision and recall -1 where undefined, F1 -1 where precision + recall = 0."""
    precision, recall = _ratio_or_minus_one(tp, tp + fp), _ratio_or_minus_one(tp, tp + fn)
    total = precision + recall
    return 2 * precision * recall / total if total != 0 else -1.0


def prmscore(
    predicted_correct: Sequence[Any], gold_correct: Sequence[Any], undefined: str = "zero"
) -> dict[str, float]:
    """PRMBench's PRMScore = 0.5 * F1 + 0.5 * negative F1 over steps pooled, a correct step the
    positive class (C3b). ``undefined`` (PRMSCORE_CONVENTIONS): "zero", the paper's formula (an
    undefined precision, recall or F1 is 0; qc.mpbench.rmscore); "minus_one_clipped", PRMBench's
    code: -1 there, let into the score, the score then clipped at 0, to reproduce its published
    table to the digit. E.g. error steps {2, 3} predicted [F, T, F]: 0.25 by the formula, 0 by the
    code (its F1 is -1). Keys: f1, f1_neg, prmscore."""
    if undefined not in PRMSCORE_CONVENTIONS:
        raise ValueError(f"undefined must be one of {', '.join(PRMSCORE_CONVENTIONS)}, not {undefined!r}")
    if undefined == "zero":
        paper = rmscore(predicted_correct, gold_correct)
        return {"f1": paper["f1"], "f1_neg": paper["f1_neg"], "prmscore": paper["rmscore"]}
    pred = np.asarray(predicted_correct, dtype=bool)
    gold = np.asarray(gold_correct, dtype=bool)
    if pred.shape != gold.shape:
        raise ValueError(f"predicted and gold steps differ in number: {pred.shape} != {gold.shape}")
    tp, tn = float((pred & gold).sum()), float((~pred & ~gold).sum())
    fp, fn = float((pred & ~gold).sum()), float((~pred & gold).sum())
    f1, f1_neg = _f1_minus_one(tp, fp, fn), _f1_minus_one(tn, fn, fp)
    score = 0.5 * f1 + 0.5 * f1_neg
    return {"f1": f1, "f1_neg": f1_neg, "prmscore": score if score > 0 else 0.0}
