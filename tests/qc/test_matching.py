"""qc.matching and qc.clustering on hand-computed cases (docs/PROTOCOLS.md E1, E3, E4, E6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from qc.clustering import cluster_steps
from qc.matching import (
    band_labels,
    band_of,
    encoder_decisions,
    greedy_matches,
    lis_ratio,
    macro_scores,
    match_f1,
    ordered_match_f1,
    table_s1,
)

T1 = [
    [0.80, 0.10, 0.36, 0.20, 0.05],
    [0.82, 0.40, 0.10, 0.10, 0.00],
    [0.10, 0.34, 0.60, 0.70, 0.20],
    [0.05, 0.50, 0.30, 0.20, 0.35],
]


def test_t1_global_greedy_and_reversed_order() -> None:
    assert greedy_matches(T1) == [(1, 0), (2, 3), (3, 1), (0, 2)]
    p, r, f1 = match_f1(T1)
    assert (p, r) == (1.0, 0.8)
    assert f1 == pytest.approx(0.888889, abs=1e-6)
    # in reference order the predictions read 1, 3, 0, 2: the longest non-decreasing run is 2 of 4
    assert ordered_match_f1(T1) == pytest.approx(0.755556, abs=1e-6)


def test_t1_row_in_order_greedy_gives_another_order() -> None:
    matches = greedy_matches(T1, order="row_in_order")
    assert matches == [(0, 0), (1, 1), (2, 3), (3, 4)]  # (3, 4) at exactly 0.35 is eligible
    assert lis_ratio(matches) == 1.0


def test_t2_greedy_is_not_a_maximum_matching() -> None:
    sim = [[0.90, 0.80], [0.85, 0.10]]
    assert greedy_matches(sim) == [(0, 0)]
    assert match_f1(sim) == (0.5, 0.5, 0.5)


def test_t3_empty_lists_and_nothing_matching() -> None:
    assert match_f1(np.zeros((0, 0))) == (1.0, 1.0, 1.0)
    assert ordered_match_f1([]) == 1.0
    assert match_f1(np.full((3, 5), 0.2)) == (0.0, 0.0, 0.0)
    assert ordered_match_f1(np.full((3, 5), 0.2)) == 0.0
    assert match_f1(np.zeros((0, 4)))[2] == 0.0  # one side empty: F1 0
    assert match_f1(np.zeros((2, 0)))[2] == 0.0


def test_reversed_order_keeps_f1_and_loses_the_order_term() -> None:
    sim = np.eye(4)[::-1]  # prediction j matches reference 3 - j
    assert match_f1(sim)[2] == 1.0
    assert ordered_match_f1(sim) == pytest.approx(0.7 + 0.3 * 0.25)
    assert ordered_match_f1(sim, alpha=0.0) == 1.0


def test_ties_go_by_row_then_column() -> None:
    # stepgate's order before issue 30, now the setting ties="lowest_index"; the default follows the
    # authors' crystal-metrics (larger row first; tests/qc/test_matching_ties.py)
    sim = np.full((2, 2), 0.6)
    assert greedy_matches(sim, ties="lowest_index") == [(0, 0), (1, 1)]
    sim = [[0.5, 0.7, 0.7], [0.7, 0.1, 0.1]]
    assert greedy_matches(sim, ties="lowest_index") == [(0, 1), (1, 0)]


@pytest.mark.parametrize(
    ("tp", "n_pred", "n_ref", "f1"),
    [
        (8, 8, 8, 1.0),
        (6, 8, 6, 0.857),
        (6, 6, 31, 0.324),
        (3, 3, 25, 0.214),
        (2, 2, 10, 0.333),
        (8, 8, 10, 0.889),
        (10, 10, 13, 0.870),
        (6, 6, 13, 0.632),
        (10, 17, 10, 0.741),
        (12, 16, 12, 0.857),
    ],
)
def test_papers_per_example_figures(tp: int, n_pred: int, n_ref: int, f1: float) -> None:
    sim = np.zeros((n_pred, n_ref))
    sim[np.arange(tp), np.arange(tp)] = 0.9
    assert match_f1(sim)[2] == pytest.approx(f1, abs=5e-4)


def test_macro_average_is_the_mean_of_examples_not_hm_of_means() -> None:
    a = np.eye(2)  # F1 1
    b = np.zeros((1, 4))
    b[0, 0] = 0.9  # P 1, R 0.25, F1 0.4
    scores = macro_scores([a, b])
    assert scores.examples == 2
    assert scores.f1 == pytest.approx(0.7)
    assert (scores.precision, scores.recall) == (1.0, 0.625)
    assert scores.f1 < 2 * 1.0 * 0.625 / 1.625
    assert scores.lis == 1.0
    assert math.isnan(macro_scores([]).f1)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 6)), elements=st.floats(-1, 1)))
def test_properties(sim: np.ndarray) -> None:
    matches = greedy_matches(sim)
    assert len({j for j, _ in matches}) == len({k for _, k in matches}) == len(matches)
    f1 = match_f1(sim)[2]
    assert 0.7 * f1 - 1e-12 <= ordered_match_f1(sim) <= f1 + 1e-12
    counts = [len(greedy_matches(sim, t)) for t in (0.3, 0.35, 0.4, 0.45, 0.5)]
    assert counts == sorted(counts, reverse=True)  # TP never grows with tau
    decided = encoder_decisions(sim)
    assert decided.shape == np.asarray(sim).shape
    assert not (decided & (np.asarray(sim) < 0.35)).any()


def test_encoder_decisions_assignment_vs_threshold() -> None:
    sim = [[0.90, 0.80], [0.85, 0.10]]
    assert encoder_decisions(sim).tolist() == [[True, False], [False, False]]
    assert encoder_decisions(sim, decision="threshold").tolist() == [[True, True], [True, False]]
    with pytest.raises(ValueError, match="decision"):
        encoder_decisions(sim, decision="hungarian")


def test_bands_are_half_open() -> None:
    assert band_labels() == ["< 0.20", "[0.20, 0.35)", "[0.35, 0.50)", "[0.50, 0.70)", ">= 0.70"]
    assert list(band_of([0.1999, 0.2, 0.5, 0.7, -0.3])) == [
        "< 0.20",
        "[0.20, 0.35)",
        "[0.50, 0.70)",
        ">= 0.70",
        "< 0.20",
    ]


def _crystal_pairs() -> tuple[list[float], list[bool], list[bool]]:
    """100 pairs shaped like CRYSTAL's study under the assignment reading: TP 14, FP 9, FN 7, TN 70."""
    sim: list[float] = []
    enc: list[bool] = []
    hum: list[bool] = []

    def add(n: int, s: float, e: bool, h: bool) -> None:
        sim.extend([s] * n)
        enc.extend([e] * n)
        hum.extend([h] * n)

    add(33, 0.10, False, False)
    add(14, 0.30, False, False)
    add(6, 0.45, False, True)  # missed
    add(13, 0.40, False, False)
    add(9, 0.594, True, False)  # false matches
    add(8, 0.60, True, True)
    add(8, 0.55, False, False)  # above tau, not in the assignment
    add(1, 0.75, False, True)  # missed
    add(6, 0.80, True, True)
    add(2, 0.80, False, False)
    return sim, enc, hum


def test_table_s1_reproduces_crystals_overall_row() -> None:
    sim, enc, hum = _crystal_pairs()
    table = table_s1(sim, enc, hum)
    assert list(table.columns) == ["pairs", "agreement", "kappa", "false_matches", "missed_matches"]
    assert list(table.index) == [*band_labels(), "Overall"]
    assert table["pairs"].tolist() == [33, 14, 19, 25, 9, 100]
    overall = table.loc["Overall"]
    assert overall["agreement"] == pytest.approx(0.84)
    assert overall["kappa"] == pytest.approx(0.5341, abs=1e-4)
    assert (overall["false_matches"], overall["missed_matches"]) == (9, 7)
    assert table.loc["[0.35, 0.50)", "agreement"] == pytest.approx(13 / 19)
    assert table.loc["[0.50, 0.70)", "agreement"] == pytest.approx(16 / 25)
    assert table.loc[">= 0.70", "agreement"] == pytest.approx(8 / 9)
    assert math.isnan(table.loc["< 0.20", "kappa"])  # one label only: undefined
    detailed = table_s1(sim, enc, hum, with_means=True)
    assert detailed.loc["Overall", "false_mean_similarity"] == pytest.approx(0.594)


def test_table_s1_with_an_empty_band() -> None:
    table = table_s1([0.9], [True], [True])
    assert table.loc["< 0.20", "pairs"] == 0
    assert math.isnan(table.loc["< 0.20", "agreement"])


def test_clusters_are_components_with_medoids_in_order() -> None:
    # steps 0,1 (traj a) and 2,3 (traj b); 0~2 and 1~3 are paraphrases, 3 links weakly to 0
    sim = np.array(
        [
            [1.0, 0.1, 0.8, 0.2],
            [0.1, 1.0, 0.2, 0.9],
            [0.8, 0.2, 1.0, 0.1],
            [0.2, 0.9, 0.1, 1.0],
        ]
    )
    clusters = cluster_steps(sim, trajectory=["a", "a", "b", "b"], position=[0, 1, 0, 1])
    assert [c.members for c in clusters] == [(0, 2), (1, 3)]
    assert [c.medoid for c in clusters] == [0, 1]  # ties: the lowest index
    assert [c.generators for c in clusters] == [2, 2]
    assert [c.position for c in clusters] == [0.0, 0.5]
    # at exactly the threshold the edge counts (>=), and the chain 0-2-? is single-link
    sim[2, 3] = sim[3, 2] = 0.45
    assert [c.members for c in cluster_steps(sim)] == [(0, 1, 2, 3)]
    assert cluster_steps(sim)[0].medoid == 3  # least mean distance to the others
    assert cluster_steps(np.eye(3), min_cluster_size=2) == []
    assert cluster_steps(np.zeros((0, 0))) == []
