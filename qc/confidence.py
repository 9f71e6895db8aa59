"""ConfProBench's confidence metrics (docs/PROTOCOLS.md D5): CRS, CSS, CCS and their average.

Exact-decimal thresholds: differences are compared after rounding to 9 decimals, so that
|0.9 - 0.7| is 0.2 and not above delta (D5.2); bin indices are computed on rounded values too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "ccs_from_components",
    "confidence",
    "confidence_scores",
    "crs_from_components",
    "ece",
    "reliability_bins",
]

NAN = float("nan")
_DECIMALS = 9


def confidence(p: Any) -> np.ndarray:
    """Eq. 2 (001 l.89): c = p if p >= 0.5 (the judge says correct) else 1 - p; c in [0.5, 1]."""
    values = np.asarray(p, dtype=float)
    return np.where(values >= 0.5, values, 1.0 - values)


def crs_from_components(
    ccr: float, accm: float, sccr: float, s: float = 5, weights: Sequence[float] = (0.4, 0.4, 0.2)
) -> float:
    """Eq. 6 (001 l.148): CRS = w1(1 - CCR) + w2(1 - s*ACCM) + w3(1 - s*SCCR)."""
    w1, w2, w3 = weights
    return w1 * (1 - ccr) + w2 * (1 - s * accm) + w3 * (1 - s * sccr)


def ccs_from_components(ece_all: float, ece_correct: float, ece_incorrect: float, s: float = 5) -> float:
    """Eq. 10-11 (001 l.218-226): CCS = 0.5(1 - s*ECE) + 0.5(1 - |ECE_correct - ECE_incorrect|)."""
    return 0.5 * (1 - s * ece_all) + 0.5 * (1 - abs(ece_correct - ece_incorrect))


def _bin_index(c: np.ndarray, n_bins: int) -> np.ndarray:
    """Right-closed equal-width bins over [0, 1]: (k/M, (k+1)/M], 0 in the first (D5.4)."""
    scaled = np.round(c * n_bins, _DECIMALS)
    out: np.ndarray = np.clip(np.ceil(scaled).astype(int) - 1, 0, n_bins - 1)
    return out


def reliability_bins(p: Any, gold: Any, n_bins: int = 10) -> pd.DataFrame:
    """The reliability diagram's table: per bin of confidence c, its edges, n, mean confidence and
    accuracy (the judge's label 1[p >= 0.5] equals gold). Empty bins have n 0 and NaN means."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    probs = np.asarray(p, dtype=float)
    truth = np.asarray(gold, dtype=float)
    c = confidence(probs)
    acc = ((probs >= 0.5).astype(float) == truth).astype(float)
    index = _bin_index(c, n_bins) if len(c) else np.zeros(0, dtype=int)
    rows = []
    for k in range(n_bins):
        mine = index == k
        n = int(mine.sum())
        rows.append(
            {
                "low": k / n_bins,
                "high": (k + 1) / n_bins,
                "n": n,
                "confidence": float(c[mine].mean()) if n else NAN,
                "accuracy": float(acc[mine].mean()) if n else NAN,
            }
        )
    return pd.DataFrame(rows)


def ece(p: Any, gold: Any, n_bins: int = 10) -> float:
    """Eq. 9 (001 l.212), literal reading: sum over bins of |B|/n * |acc(B) - conf(B)|; NaN on no steps."""
    table = reliability_bins(p, gold, n_bins)
    n = table["n"].sum()
    if not n:
        return NAN
    filled = table[table["n"] > 0]
    return float((filled["n"] / n * (filled["accuracy"] - filled["confidence"]).abs()).sum())


def _types(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def confidence_scores(
    p: Sequence[float],
    gold: Sequence[Any],
    error_type: Sequence[Any],
    p_perturbed: Sequence[Any] | None = None,
    eps: float = 0.01,
    delta: float = 0.2,
    s: float = 5,
    weights: Sequence[float] = (0.4, 0.4, 0.2),
    n_bins: int = 10,
) -> dict[str, float]:
    """ConfProBench (D5), one entry per step.

    ``p``: the judge's P(step correct) on the original input; ``gold``: 1 correct / 0 incorrect;
    ``error_type``: the gold type of an incorrect step (None for a correct one; a list counts toward
    each of its types); ``p_perturbed``: P(correct) on the perturbed input where the step's variant
    passed the check, else None. CRS is computed over the steps with a p_perturbed (a variant that
    failed the check takes no part), CSS and CCS over all steps. ECE uses n_bins equal-width bins over
    [0, 1], right-closed. ACCM is 0 when no step changed by more than eps. Keys: ccr, accm, sccr,
    crs, css, ece, ece_correct, ece_incorrect, ccs, avg (fractions, not x100).
    """
    probs = np.asarray(p, dtype=float)
    truth = np.asarray(gold, dtype=float)
    if not len(probs) == len(truth) == len(error_type):
        raise ValueError("p, gold and error_type must have one entry per step")
    if np.isnan(probs).any() or ((probs < 0) | (probs > 1)).any():
        raise ValueError("every p must be a probability in [0, 1]")
    if not np.isin(truth, (0.0, 1.0)).all():
        raise ValueError("gold must be 1 (correct) or 0 (incorrect) per step")
    perturbed = list(p_perturbed) if p_perturbed is not None else [None] * len(probs)
    if len(perturbed) != len(probs):
        raise ValueError("p_perturbed must have one entry per step (None where no variant passed)")
    paired = np.array([v is not None and not np.isnan(float(v)) for v in perturbed], dtype=bool)
    if paired.any():
        after = np.array([float(v) if v is not None else np.nan for v in perturbed])[paired]
        d = np.round(np.abs(confidence(probs[paired]) - confidence(after)), _DECIMALS)
        changed = d > eps
        ccr = float(changed.mean())
        accm = float(d[changed].mean()) if changed.any() else 0.0
        sccr = float((d > delta).mean())
        crs = crs_from_components(ccr, accm, sccr, s, weights)
    else:
        ccr = accm = sccr = crs = NAN
    correct = truth == 1
    p_correct = float(probs[correct].mean()) if correct.any() else NAN
    by_type: dict[str, list[float]] = {}
    for value, t in zip(probs, error_type, strict=True):
        for name in _types(t):
            by_type.setdefault(name, []).append(float(value))
    css = float(np.mean([p_correct - np.mean(v) for v in by_type.values()])) if by_type else NAN
    ece_all = ece(probs, truth, n_bins)
    ece_correct = ece(probs[correct], truth[correct], n_bins)
    ece_incorrect = ece(probs[~correct], truth[~correct], n_bins)
    ccs = ccs_from_components(ece_all, ece_correct, ece_incorrect, s)
    return {
        "ccr": ccr,
        "accm": accm,
        "sccr": sccr,
        "crs": crs,
        "css": css,
        "ece": ece_all,
        "ece_correct": ece_correct,
        "ece_incorrect": ece_incorrect,
        "ccs": ccs,
        "avg": float(np.mean([crs, css, ccs])),
    }
