"""CRYSTAL's greedy matching on exactly equal similarities: the authors' order (PROTOCOLS.md E3).

The paper says only "greedy 1:1 assignment over pairs with S >= tau"; with ties (identical step texts
give equal cosines) the order decides how many pairs match. stepgate follows the authors' package by
default and keeps its earlier order as the setting ``ties="lowest_index"``.
"""

from __future__ import annotations

import bisect

import numpy as np
import pytest

from qc.matching import encoder_decisions, greedy_matches, macro_scores, match_f1, ordered_match_f1

# Values of the random matrices: a few levels, so that most matrices hold ties above tau. None is
# exactly tau = 0.35, where the paper's S >= tau and the package's S > tau differ (tested apart below).
LEVELS = np.array([0.10, 0.30, 0.40, 0.50, 0.50, 0.60, 0.70, 0.70, 0.80, 0.90])


def authors_find_matches(similarity_matrix: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """A copy, reduced to what decides the matching, of crystal-metrics 0.2.0 (the CRYSTAL authors'
    package, MIT; PyPI crystal-metrics, src/crystal_metrics/reasoning.py,
    MLLMReasoningEvaluator._find_matches): collect (S, pred, ref) for S > threshold, sort the triples
    in reverse, take a pair when neither step is used yet. Kept here only as the reference."""
    matched_refs: set[int] = set()
    matched_preds: set[int] = set()
    match_pairs = []
    similarities = []
    for i in range(similarity_matrix.shape[0]):
        for j in range(similarity_matrix.shape[1]):
            if similarity_matrix[i, j] > threshold:
                similarities.append((similarity_matrix[i, j], i, j))
    similarities.sort(reverse=True)
    for _sim, pred_idx, ref_idx in similarities:
        if pred_idx not in matched_preds and ref_idx not in matched_refs:
            matched_preds.add(pred_idx)
            matched_refs.add(ref_idx)
            match_pairs.append((pred_idx, ref_idx))
    return match_pairs


def authors_scores(sim: np.ndarray, threshold: float = 0.35, alpha: float = 0.3) -> tuple[float, float]:
    """Match F1 and Ordered F1 (order metric "lis") as the same package computes them from its
    matches (evaluate_single); the LIS there is strict (bisect_left), the same on distinct rows."""
    pairs = authors_find_matches(sim, threshold)
    precision = len({p for p, _ in pairs}) / sim.shape[0]
    recall = len({r for _, r in pairs}) / sim.shape[1]
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    lis = 1.0
    if len(pairs) >= 2:
        preds = [p for p, _ in sorted(pairs, key=lambda m: m[1])]
        tails: list[int] = []
        for value in preds:
            at = bisect.bisect_left(tails, value)
            tails[at : at + 1] = [value]
        lis = len(tails) / len(preds)
    return f1, f1 * ((1 - alpha) + alpha * lis)


def _tied_matrices(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.choice(LEVELS, size=(int(rng.integers(1, 9)), int(rng.integers(1, 9)))) for _ in range(count)]


def test_the_authors_order_on_many_matrices_with_ties() -> None:
    sims = _tied_matrices(2000, seed=30)
    differ_f1 = differ_ordered = 0
    for sim in sims:
        assert greedy_matches(sim) == authors_find_matches(sim, 0.35)
        f1, ordered = authors_scores(sim)
        assert match_f1(sim)[2] == pytest.approx(f1, abs=1e-12)
        assert ordered_match_f1(sim) == pytest.approx(ordered, abs=1e-12)
        old = match_f1(sim, ties="lowest_index")[2]
        differ_f1 += abs(old - f1) > 1e-12
        differ_ordered += abs(ordered_match_f1(sim, ties="lowest_index") - ordered) > 1e-12
    # the earlier order really is another reading: it changes a share of these matrices' scores
    assert differ_f1 > 0.02 * len(sims) and differ_ordered > differ_f1
    assert macro_scores(sims).f1 == pytest.approx(np.mean([authors_scores(s)[0] for s in sims]))


def test_ties_take_the_larger_row_then_the_larger_column() -> None:
    sim = np.full((2, 2), 0.6)
    assert greedy_matches(sim) == [(1, 1), (0, 0)]
    sim = [[0.5, 0.7, 0.7], [0.7, 0.1, 0.1]]
    assert greedy_matches(sim) == [(1, 0), (0, 2)]
    assert greedy_matches(sim, ties="lowest_index") == [(0, 1), (1, 0)]
    # a tie that changes the count: (1, 0) first leaves row 0 its column 1 ...
    sim = [[0.8, 0.8], [0.8, 0.1]]
    assert greedy_matches(sim) == [(1, 0), (0, 1)] and match_f1(sim)[2] == 1.0
    # ... where the earlier order took (0, 0) and left row 1 nothing
    assert (
        greedy_matches(sim, ties="lowest_index") == [(0, 0)] and match_f1(sim, ties="lowest_index")[2] == 0.5
    )
    assert encoder_decisions(sim).tolist() == [[False, True], [True, False]]


def test_the_paper_keeps_s_equal_to_tau_eligible_where_the_package_does_not() -> None:
    sim = np.array([[0.35, 0.10], [0.10, 0.90]])
    assert greedy_matches(sim) == [(1, 1), (0, 0)]  # S >= tau (004 l.96)
    assert authors_find_matches(sim, 0.35) == [(1, 1)]  # the package's S > tau


def test_an_unknown_tie_order_is_refused() -> None:
    with pytest.raises(ValueError, match="ties must be one of"):
        greedy_matches([[0.5]], ties="random")  # type: ignore[arg-type]
