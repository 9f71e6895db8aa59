"""CRYSTAL's step-match study (docs/PROTOCOLS.md E4): adversarial sampling of predicted x reference pairs by
similarity band, the human label per pair, and the threshold at which the encoder agrees best with
the humans. Pure: frames and arrays in, frames and numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from qc.agreement import cohen_kappa, fleiss_kappa, observed_agreement
from qc.matching import band_labels, band_of, encoder_decisions

__all__ = [
    "SAMPLING_COUNTS",
    "SAMPLING_EDGES",
    "Calibration",
    "all_pairs",
    "calibrate_threshold",
    "human_agreement",
    "human_majority",
    "sample_pairs",
]

SAMPLING_EDGES = (0.20, 0.50)  # low < 0.20, borderline [0.20, 0.50), high >= 0.50 (half-open)
SAMPLING_COUNTS = (33, 33, 34)  # the paper's 100 pairs: 33 low, 33 borderline, 34 high
PAIR_COLUMNS = ["example", "model", "j", "k", "predicted", "reference", "similarity", "encoder_match"]


def all_pairs(
    examples: Sequence[dict[str, Any]],
    sims: Sequence[np.ndarray],
    threshold: float,
    decision: str = "assignment",
) -> pd.DataFrame:
    """Every predicted x reference pair of every example with its similarity and the encoder's decision.

    examples: dicts with "example", "model", "predicted" (list), "reference" (list).
    """
    rows = []
    for ex, sim in zip(examples, sims, strict=True):
        decided = encoder_decisions(sim, threshold, decision)
        for j, p in enumerate(ex["predicted"]):
            for k, r in enumerate(ex["reference"]):
                rows.append(
                    [str(ex["example"]), str(ex["model"]), j, k, p, r, float(sim[j, k]), bool(decided[j, k])]
                )
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def sample_pairs(
    pairs: pd.DataFrame,
    edges: Sequence[float] = SAMPLING_EDGES,
    counts: Sequence[int] = SAMPLING_COUNTS,
    seed: int = 0,
) -> pd.DataFrame:
    """Stratified by similarity band, spread over models: per band, models take turns (in name order)
    drawing their next pair from a seeded shuffle, until the band's count is reached or it runs out.

    The same pairs, edges, counts and seed give the same sample whatever order the rows come in. A band
    with fewer pairs than asked gives all it has (the "band" and "short" columns say so).
    """
    labels = band_labels(edges)
    if len(counts) != len(labels):
        raise ValueError(f"{len(labels)} bands from edges {list(edges)} but {len(counts)} counts")
    if pairs.empty:
        return pairs.assign(band=pd.Series(dtype=object))
    ordered = pairs.sort_values(["model", "example", "j", "k"], kind="stable").reset_index(drop=True)
    ordered["band"] = band_of(ordered["similarity"].to_numpy(), edges)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for label, want in zip(labels, counts, strict=True):
        queues = []
        for _, group in ordered[ordered["band"] == label].groupby("model", sort=True):
            queues.append(list(group.index[rng.permutation(len(group))]))
        taken = 0
        while taken < want and any(queues):
            for queue in queues:
                if queue and taken < want:
                    chosen.append(int(queue.pop(0)))
                    taken += 1
    return ordered.loc[chosen].reset_index(drop=True)


def human_majority(labels: pd.DataFrame) -> pd.Series:
    """Per pair, the humans' majority (True = match); ties and unlabelled pairs are left out.

    labels: one row per (pair, annotator) with columns "pair" and "match" (bool).
    """
    if labels.empty:
        return pd.Series(dtype=bool)
    share = labels.groupby("pair")["match"].mean()
    return (share[share != 0.5] > 0.5).astype(bool)


@dataclass(frozen=True)
class HumanAgreement:
    pairs: int  # pairs with at least two labels
    annotators: int
    observed: float
    fleiss_kappa: float
    cohen_kappa: float  # the first two annotators by name, where there are exactly two; NaN otherwise


def human_agreement(labels: pd.DataFrame) -> HumanAgreement:
    """Human-human agreement over pairs labelled by two or more annotators."""
    if labels.empty:
        return HumanAgreement(0, 0, math.nan, math.nan, math.nan)
    wide = labels.pivot_table(index="pair", columns="annotator", values="match", aggfunc="last")
    wide = wide[wide.notna().sum(axis=1) >= 2]
    annotators = int(labels["annotator"].nunique())
    if wide.empty:
        return HumanAgreement(0, annotators, math.nan, math.nan, math.nan)
    ratings = wide.astype(object).where(wide.notna(), None).to_numpy()
    cohen = math.nan
    if wide.shape[1] == 2:
        both = wide.dropna()
        cohen = cohen_kappa(list(both.iloc[:, 0]), list(both.iloc[:, 1]))
    return HumanAgreement(len(wide), annotators, observed_agreement(ratings), fleiss_kappa(ratings), cohen)


@dataclass(frozen=True)
class Calibration:
    """The threshold where the encoder's decisions agree best with the humans (Cohen's kappa)."""

    threshold: float
    kappa: float
    agreement: float
    low: float  # bootstrap percentile interval of the best threshold
    high: float
    curve: pd.DataFrame  # threshold, agreement, kappa


def calibrate_threshold(
    decide: Callable[[float], np.ndarray],
    human: Sequence[bool],
    thresholds: Sequence[float] | None = None,
    replicates: int = 500,
    seed: int = 0,
    level: float = 0.95,
) -> Calibration:
    """Scan thresholds; ``decide(t)`` gives the encoder's decision per labelled pair at t (the greedy
    assignment re-run at t). Best = highest kappa, ties to the threshold nearest 0.35; its interval
    is the percentile interval of the best threshold over bootstrap resamples of the pairs."""
    grid = np.round(np.arange(0.05, 0.951, 0.01), 2) if thresholds is None else np.asarray(thresholds, float)
    hum = np.asarray(human, dtype=bool)
    if hum.size == 0:
        empty = pd.DataFrame(columns=["threshold", "agreement", "kappa"])
        return Calibration(math.nan, math.nan, math.nan, math.nan, math.nan, empty)
    decisions = np.stack([np.asarray(decide(float(t)), dtype=bool) for t in grid])
    curve = pd.DataFrame(
        {
            "threshold": grid,
            "agreement": (decisions == hum).mean(axis=1),
            "kappa": _kappas(decisions, hum),
        }
    )
    best = _best(curve["kappa"].to_numpy(), grid)
    rng = np.random.default_rng(seed)
    picks = []
    for _ in range(replicates):
        idx = rng.integers(0, hum.size, hum.size)
        kappas = _kappas(decisions[:, idx], hum[idx])
        if not np.isnan(kappas).all():
            picks.append(grid[_best(kappas, grid)])
    tail = (1 - level) / 2 * 100
    low, high = (
        (float(np.percentile(picks, tail)), float(np.percentile(picks, 100 - tail)))
        if picks
        else (
            math.nan,
            math.nan,
        )
    )
    row = curve.iloc[best]
    return Calibration(
        float(row["threshold"]), float(row["kappa"]), float(row["agreement"]), low, high, curve
    )


def _kappas(decisions: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each row of decisions against the human labels (binary, vectorised: the
    bootstrap runs it thousands of times); NaN where chance agreement is total."""
    if human.size < 2:
        return np.full(decisions.shape[0], np.nan)
    po = (decisions == human).mean(axis=1)
    pd_, ph = decisions.mean(axis=1), human.mean()
    pe = pd_ * ph + (1 - pd_) * (1 - ph)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(1 - pe <= 1e-12, np.nan, (po - pe) / (1 - pe))


def _best(kappas: np.ndarray, grid: np.ndarray) -> int:
    scores = np.where(np.isnan(kappas), -np.inf, kappas)
    top = np.flatnonzero(scores == scores.max())
    return int(top[np.argmin(np.abs(grid[top] - 0.35))])
