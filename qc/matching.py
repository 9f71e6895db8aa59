"""CRYSTAL's step matching (docs/PROTOCOLS.md E3, E4) on a precomputed similarity matrix.

Rows are predicted steps, columns reference steps. The rule is kept apart from the encoder so that
it can be tested on hand-made matrices; services.encoder embeds the steps and calls these.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import numpy as np
import pandas as pd

from qc.agreement import cohen_kappa

__all__ = [
    "ALPHA",
    "DEFAULT_EDGES",
    "TAU",
    "TIES",
    "ExampleScore",
    "MacroScores",
    "band_labels",
    "band_of",
    "encoder_decisions",
    "greedy_matches",
    "lis_ratio",
    "macro_scores",
    "match_f1",
    "ordered_match_f1",
    "score_example",
    "table_s1",
]

TAU = 0.35  # CRYSTAL's operating threshold (004 l.96)
ALPHA = 0.3  # weight of the order term in Ordered Match F1 (Eq. 6)
DEFAULT_EDGES = (0.20, 0.35, 0.50, 0.70)  # Table S1's bands
GreedyOrder = Literal["global_desc", "row_in_order"]
# How the global greedy orders pairs of exactly equal similarity (identical step texts give equal
# cosines). The paper is silent; "crystal_metrics" is the authors' package (reasoning.py,
# _find_matches: the (S, j, k) triples sorted in reverse, so the larger row goes first, then the
# larger column); "lowest_index" is stepgate's order before issue 30 (smaller row, then column).
TieOrder = Literal["crystal_metrics", "lowest_index"]
TIES: tuple[TieOrder, ...] = ("crystal_metrics", "lowest_index")


def _matrix(sim: Any) -> np.ndarray:
    arr = np.asarray(sim, dtype=np.float64)
    if arr.size == 0:
        rows = arr.shape[0] if arr.ndim == 2 else 0
        cols = arr.shape[1] if arr.ndim == 2 else 0
        return np.zeros((rows, cols))
    if arr.ndim != 2:
        raise ValueError(f"a similarity matrix has 2 dimensions, not {arr.ndim}")
    return arr


def greedy_matches(
    sim: Any, threshold: float = TAU, order: GreedyOrder = "global_desc", ties: TieOrder = "crystal_metrics"
) -> list[tuple[int, int]]:
    """The greedy 1:1 assignment (E3): eligible pairs (sim >= threshold, the paper's inclusive rule
    where the authors' package has >) by decreasing similarity; each row and column used once. Not a
    maximum matching, on purpose: CRYSTAL's figures come from the greedy one.

    ``ties``: among exactly equal similarities, "crystal_metrics" (default) takes the larger row first,
    then the larger column, as the authors' package does; "lowest_index" the smaller row, then column.
    ``order="row_in_order"``: each predicted step in turn takes its most similar unused reference
    (the sheet's alternative reading, which changes Ordered F1); ties there go to the lower column.
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    s = _matrix(sim)
    rows, cols = np.nonzero(s >= threshold)
    if order == "row_in_order":
        taken: set[int] = set()
        out = []
        for j in range(s.shape[0]):
            ks = [k for k in np.nonzero(s[j] >= threshold)[0] if k not in taken]
            if ks:
                k = int(min(ks, key=lambda c: (-s[j, c], c)))
                taken.add(k)
                out.append((j, k))
        return out
    sign = -1 if ties == "crystal_metrics" else 1
    # np.lexsort sorts by its last key first: similarity (descending), then row, then column
    ranked = np.lexsort((sign * cols, sign * rows, -s[rows, cols]))
    used_rows: set[int] = set()
    used_cols: set[int] = set()
    matches = []
    for idx in ranked:
        j, k = int(rows[idx]), int(cols[idx])
        if j not in used_rows and k not in used_cols:
            used_rows.add(j)
            used_cols.add(k)
            matches.append((j, k))
    return matches


def _prf(tp: int, n_pred: int, n_ref: int) -> tuple[float, float, float]:
    """Eq. 3 with the sheet's rules: both empty -> 1; one side empty or nothing matched -> 0."""
    if n_pred == 0 and n_ref == 0:
        return 1.0, 1.0, 1.0
    precision = tp / max(n_pred, 1)
    recall = tp / max(n_ref, 1)
    f1 = 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def lis_ratio(matches: Sequence[tuple[int, int]]) -> float | None:
    """Longest non-decreasing run of prediction indices, read in reference order, over the matches
    (Eq. 5, patience sorting); None when nothing matched."""
    if not matches:
        return None
    js = [j for j, _ in sorted(matches, key=lambda m: m[1])]
    tails: list[int] = []
    for j in js:
        at = bisect.bisect_right(tails, j)
        if at == len(tails):
            tails.append(j)
        else:
            tails[at] = j
    return len(tails) / len(js)


@dataclass(frozen=True)
class ExampleScore:
    """One example's figures: what the macro averages are made of."""

    n_pred: int
    n_ref: int
    matches: tuple[tuple[int, int], ...]
    precision: float
    recall: float
    f1: float
    lis: float | None  # None when nothing matched
    ordered_f1: float


def score_example(
    sim: Any,
    threshold: float = TAU,
    alpha: float = ALPHA,
    order: GreedyOrder = "global_desc",
    ties: TieOrder = "crystal_metrics",
) -> ExampleScore:
    s = _matrix(sim)
    matches = greedy_matches(s, threshold, order, ties)
    precision, recall, f1 = _prf(len(matches), s.shape[0], s.shape[1])
    lis = lis_ratio(matches)
    # both sides empty: F1 = 1 and the order term counts as perfect (the sheet's rule)
    ordered = f1 * ((1 - alpha) + alpha * (1.0 if lis is None else lis))
    return ExampleScore(s.shape[0], s.shape[1], tuple(matches), precision, recall, f1, lis, ordered)


def match_f1(
    sim: Any, threshold: float = TAU, ties: TieOrder = "crystal_metrics"
) -> tuple[float, float, float]:
    """Precision, recall and F1 of one example (Eq. 3) from its greedy assignment."""
    score = score_example(sim, threshold, ties=ties)
    return score.precision, score.recall, score.f1


def ordered_match_f1(
    sim: Any, threshold: float = TAU, alpha: float = ALPHA, ties: TieOrder = "crystal_metrics"
) -> float:
    """F1 * ((1 - alpha) + alpha * LIS ratio) of one example (Eq. 6)."""
    return score_example(sim, threshold, alpha, ties=ties).ordered_f1


@dataclass(frozen=True)
class MacroScores:
    """Macro averages over examples (Eq. 4): F1 is the mean of per-example F1, not HM(P, R)."""

    examples: int
    precision: float
    recall: float
    f1: float
    ordered_f1: float
    lis: float  # over examples with at least one match (the sheet's lis_empty = exclude)


def macro_scores(
    sims: Iterable[Any],
    threshold: float = TAU,
    alpha: float = ALPHA,
    order: GreedyOrder = "global_desc",
    ties: TieOrder = "crystal_metrics",
) -> MacroScores:
    scores = [score_example(s, threshold, alpha, order, ties) for s in sims]
    if not scores:
        nan = math.nan
        return MacroScores(0, nan, nan, nan, nan, nan)
    lis = [s.lis for s in scores if s.lis is not None]
    return MacroScores(
        examples=len(scores),
        precision=float(np.mean([s.precision for s in scores])),
        recall=float(np.mean([s.recall for s in scores])),
        f1=float(np.mean([s.f1 for s in scores])),
        ordered_f1=float(np.mean([s.ordered_f1 for s in scores])),
        lis=float(np.mean(lis)) if lis else math.nan,
    )


def encoder_decisions(
    sim: Any, threshold: float = TAU, decision: str = "assignment", ties: TieOrder = "crystal_metrics"
) -> np.ndarray:
    """The encoder's match / no-match per pair (E4). "assignment": the pair is in the greedy
    assignment, the only reading under which Table S1's kappa, 9/7 split and 77 agree;
    "threshold": sim >= threshold."""
    s = _matrix(sim)
    if decision == "threshold":
        return np.asarray(s >= threshold, dtype=bool)
    if decision != "assignment":
        raise ValueError(f"decision must be 'assignment' or 'threshold', not {decision!r}")
    out = np.zeros(s.shape, dtype=bool)
    for j, k in greedy_matches(s, threshold, ties=ties):
        out[j, k] = True
    return out


def band_labels(edges: Sequence[float] = DEFAULT_EDGES) -> list[str]:
    """Half-open bands from the edges: "< 0.20", "[0.20, 0.35)", ..., ">= 0.70"."""
    e = list(edges)
    if not e or any(b <= a for a, b in pairwise(e)):
        raise ValueError(f"band edges must be increasing and not empty: {e}")
    inner = [f"[{a:.2f}, {b:.2f})" for a, b in pairwise(e)]
    return [f"< {e[0]:.2f}", *inner, f">= {e[-1]:.2f}"]


def band_of(similarity: Any, edges: Sequence[float] = DEFAULT_EDGES) -> np.ndarray:
    """Each similarity's band label (half-open [lo, hi), so 0.50 is in [0.50, 0.70))."""
    labels = np.array(band_labels(edges), dtype=object)
    values = np.asarray(similarity, dtype=np.float64).reshape(-1)
    return np.asarray(labels[np.searchsorted(np.asarray(edges), values, side="right")], dtype=object)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def _row(sim: np.ndarray, enc: np.ndarray, hum: np.ndarray, with_means: bool) -> dict[str, float]:
    false = enc & ~hum
    missed = ~enc & hum
    row: dict[str, float] = {
        "pairs": int(sim.size),
        "agreement": float(np.mean(enc == hum)) if sim.size else math.nan,
        "kappa": cohen_kappa(list(hum), list(enc)) if sim.size else math.nan,
        "false_matches": int(false.sum()),
        "missed_matches": int(missed.sum()),
    }
    if with_means:
        row["false_mean_similarity"] = _mean(sim[false])
        row["missed_mean_similarity"] = _mean(sim[missed])
    return row


def table_s1(
    similarity: Any,
    encoder_match: Any,
    human_match: Any,
    edges: Sequence[float] = DEFAULT_EDGES,
    *,
    with_means: bool = False,
) -> pd.DataFrame:
    """CRYSTAL's Table S1 from labelled pairs: per band and "Overall", the pairs, the human-encoder
    agreement (fraction), Cohen's kappa (NaN where undefined), false matches (encoder yes, human no)
    and missed matches (the reverse). ``with_means`` adds the mean similarity of each kind of error."""
    sim = np.asarray(similarity, dtype=np.float64).reshape(-1)
    enc = np.asarray(encoder_match, dtype=bool).reshape(-1)
    hum = np.asarray(human_match, dtype=bool).reshape(-1)
    if not sim.size == enc.size == hum.size:
        raise ValueError(
            f"one entry per pair: {sim.size} similarities, {enc.size} decisions, {hum.size} labels"
        )
    bands = band_of(sim, edges)
    rows = {
        label: _row(sim[bands == label], enc[bands == label], hum[bands == label], with_means)
        for label in band_labels(edges)
    }
    rows["Overall"] = _row(sim, enc, hum, with_means)
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "band"
    return table.astype({"pairs": int, "false_matches": int, "missed_matches": int})
