"""MPBench's metrics (docs/PROTOCOLS.md C3): step correctness (FEI, AEI = RMScore), answer aggregation (BoN,
MV) and reasoning process search (F1, MCC), their per-paradigm averages and the Overall.

Fractions in [0, 1] (MCC in [-1, 1]); the paper prints x100. Defaults are the readings that
reproduce Table 2 (C3, C4); each is a parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "RANDOM",
    "best_of_n",
    "first_error_accuracy",
    "first_error_index",
    "mcc",
    "mpbench_overall",
    "rmscore",
    "rps_scores",
    "solution_score",
    "step_predictions",
    "weighted_majority_vote",
]

NAN = float("nan")
# Table 2's random row (003 l.94), kept as constants for the delta columns (C3e), x100.
RANDOM = {"fei": 9.1, "aei": 50.0, "bon": 40.9, "mv": 40.9, "f1": 50.0, "mcc": 0.0, "overall": 31.8}
_AGGREGATES: dict[str, Callable[[np.ndarray], Any]] = {
    "min": np.min,
    "mean": np.mean,
    "sum": np.sum,
    "last": lambda s: s[-1],
}


def step_predictions(scores: Sequence[Any], threshold: float = 0.0, strict: bool = True) -> np.ndarray:
    """Per step: predicted correct (C3a: score > 0 on MPBench's [-1, 1] scale; ``strict=False`` for >=).
    A missing or unparsable score counts as predicted incorrect (it stays in the denominator)."""
    values = np.asarray([np.nan if s is None else float(s) for s in scores], dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(values), False, values > threshold if strict else values >= threshold)


def _f1(tp: float, fp: float, fn: float) -> float:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def rmscore(
    predicted_correct: Sequence[Any], gold_correct: Sequence[Any], w_neg: float = 0.5, w_pos: float = 0.5
) -> dict[str, float]:
    """RMScore = w_neg * F1_neg + w_pos * F1 over steps pooled (C3b; PRMBench's PRMScore), positive
    class = a correct step. Zero denominators give 0 (C3b). Keys: f1, f1_neg, rmscore."""
    pred = np.asarray(predicted_correct, dtype=bool)
    gold = np.asarray(gold_correct, dtype=bool)
    if pred.shape != gold.shape:
        raise ValueError(f"predicted and gold steps differ in number: {pred.shape} != {gold.shape}")
    tp = float((pred & gold).sum())
    tn = float((~pred & ~gold).sum())
    fp = float((pred & ~gold).sum())
    fn = float((~pred & gold).sum())
    f1, f1_neg = _f1(tp, fp, fn), _f1(tn, fn, fp)
    return {"f1": f1, "f1_neg": f1_neg, "rmscore": w_neg * f1_neg + w_pos * f1}


def first_error_index(predicted_correct: Sequence[Any]) -> int:
    """The first step predicted (or labelled) incorrect, 0-based; -1 when every step is correct."""
    bad = np.flatnonzero(~np.asarray(predicted_correct, dtype=bool))
    return int(bad[0]) if len(bad) else -1


def first_error_accuracy(predicted: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]]) -> float:
    """FEI (C3b default): share of items whose predicted first error equals the gold first error.
    Per item the per-step correct flags, predicted and gold."""
    if len(predicted) != len(gold):
        raise ValueError(f"predicted and gold differ in length: {len(predicted)} != {len(gold)}")
    if not len(gold):
        return NAN
    return float(
        np.mean([first_error_index(p) == first_error_index(g) for p, g in zip(predicted, gold, strict=True)])
    )


def solution_score(step_scores: Sequence[Any], aggregate: str = "min") -> float:
    """A candidate's score from its step scores (C3c: min by default; mean, sum or last)."""
    if aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate must be one of {sorted(_AGGREGATES)}, got {aggregate!r}")
    values = np.asarray([np.nan if s is None else float(s) for s in step_scores], dtype=float)
    values = values[~np.isnan(values)]
    return float(_AGGREGATES[aggregate](values)) if len(values) else -np.inf


def _pick(values: np.ndarray, rng: np.random.Generator) -> tuple[int, bool]:
    best = np.flatnonzero(values == values.max())
    return int(rng.choice(best)), len(best) > 1


def best_of_n(
    scores: Sequence[Sequence[float]], correct: Sequence[Sequence[Any]], seed: int = 0
) -> dict[str, float]:
    """BoN (C3c): share of problems whose highest-scored candidate is correct; ties broken at random
    with ``seed`` and counted (tie_rate). Per problem the candidates' solution scores and correctness."""
    rng = np.random.default_rng(seed)
    hits, ties = [], []
    for s, c in zip(scores, correct, strict=True):
        chosen, tie = _pick(np.asarray(s, dtype=float), rng)
        hits.append(bool(c[chosen]))
        ties.append(tie)
    return {
        "accuracy": float(np.mean(hits)) if hits else NAN,
        "tie_rate": float(np.mean(ties)) if ties else NAN,
    }


def weighted_majority_vote(
    scores: Sequence[Sequence[float]], answers: Sequence[Sequence[Any]], gold: Sequence[Any], seed: int = 0
) -> dict[str, float]:
    """MV (C3c): per problem, candidates grouped by final answer, S(a) = sum of their scores, the
    answer with the largest S chosen (ties at random with ``seed``); share chosen == gold answer."""
    rng = np.random.default_rng(seed)
    hits, ties = [], []
    for s, a, g in zip(scores, answers, gold, strict=True):
        totals: dict[Any, float] = {}
        for score, answer in zip(s, a, strict=True):
            totals[answer] = totals.get(answer, 0.0) + float(score)
        names = list(totals)
        chosen, tie = _pick(np.asarray([totals[n] for n in names]), rng)
        hits.append(names[chosen] == g)
        ties.append(tie)
    return {
        "accuracy": float(np.mean(hits)) if hits else NAN,
        "tie_rate": float(np.mean(ties)) if ties else NAN,
    }


def mcc(tp: float, tn: float, fp: float, fn: float) -> float:
    """Matthews' correlation (C3d, eq. 2); 0 when the denominator is 0."""
    denom = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denom) if denom else 0.0


def rps_scores(
    pair_scores: Sequence[Sequence[float]], correct_index: Sequence[int], seed: int = 0
) -> dict[str, float]:
    """RPS under pairwise argmax (C3d default): in each pair the higher-scored candidate is predicted
    correct and the other incorrect (ties at random with ``seed``); F1 and MCC on the pooled
    candidates, positive = correct. Without ties F1 = pair accuracy and MCC = 2*accuracy - 1 (C4d)."""
    rng = np.random.default_rng(seed)
    tp = tn = fp = fn = 0
    hits, ties = [], []
    for scores, right in zip(pair_scores, correct_index, strict=True):
        if len(scores) != 2 or right not in (0, 1):
            raise ValueError(
                f"each RPS item has two candidate scores and a correct index 0 or 1, got {scores!r}, {right!r}"
            )
        chosen, tie = _pick(np.asarray(scores, dtype=float), rng)
        ties.append(tie)
        hit = chosen == right
        hits.append(hit)
        tp, tn, fp, fn = (tp + 1, tn + 1, fp, fn) if hit else (tp, tn, fp + 1, fn + 1)
    if not hits:
        return {"f1": NAN, "mcc": NAN, "accuracy": NAN, "tie_rate": NAN}
    return {
        "f1": _f1(tp, fp, fn),
        "mcc": mcc(tp, tn, fp, fn),
        "accuracy": float(np.mean(hits)),
        "tie_rate": float(np.mean(ties)),
    }


def mpbench_overall(fei: float, aei: float, bon: float, mv: float, f1: float, mcc: float) -> dict[str, float]:
    """Table 2's averages from its six components (C3e, C4b): SC = (FEI + AEI)/2, AA = (BoN + MV)/2,
    RPS = (F1 + MCC)/2 and Overall = their mean, computed from the components (never from rounded
    averages). Any unit, as long as all six share it."""
    sc, aa, rps = (fei + aei) / 2, (bon + mv) / 2, (f1 + mcc) / 2
    return {"sc_avg": sc, "aa_avg": aa, "rps_avg": rps, "overall": (sc + aa + rps) / 3}
