"""Scoring against the papers: hand-computed cases and the papers' own published numbers.

Published figures come from docs/PROTOCOLS.md (B5 ProcessBench, A8 PRMBench-V, C4 MPBench, D5/D6
ConfProBench) with the tolerances given there for rounded inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qc.confidence import ece, reliability_bins
from qc.mpbench import first_error_accuracy
from qc.scoring import (
    AVERAGE,
    OVERALL,
    best_of_n,
    ccs_from_components,
    choose_threshold,
    confidence_scores,
    crs_from_components,
    earliest_error_from_scores,
    harmonic_mean,
    lowest_scored_steps,
    mpbench_overall,
    prmbench_v_scores,
    prmbench_v_table,
    processbench_average,
    processbench_scores,
    processbench_table,
    rmscore,
    rps_scores,
    step_predictions,
    weighted_majority_vote,
)

# ---- ProcessBench (B4, B5) ------------------------------------------------------------------------

# Table 3 (B5 T4): subset F1s GSM8K, MATH, OlympiadBench, Omni-MATH and the published Average.
TABLE3 = {
    "Math-Shepherd-PRM-7B": (47.9, 29.5, 24.8, 23.8, 31.5),
    "RLHFlow-PRM-Mistral-8B": (50.4, 33.4, 13.8, 15.8, 28.4),
    "RLHFlow-PRM-Deepseek-8B": (38.8, 33.8, 16.9, 16.9, 26.6),
    "Skywork-PRM-1.5B": (59.0, 48.0, 19.3, 19.2, 36.4),
    "Skywork-PRM-7B": (70.8, 53.6, 22.9, 21.0, 42.1),
    "Qwen2.5-Math-7B-PRM800K": (68.2, 62.6, 50.7, 44.3, 56.5),
    "Meta-Llama-3-8B-Instruct": (13.1, 13.8, 4.8, 12.6, 11.1),
    "Meta-Llama-3-70B-Instruct": (52.2, 22.8, 21.2, 20.0, 29.1),
    "Llama-3.1-8B-Instruct": (10.9, 5.1, 2.8, 1.6, 5.1),
    "Llama-3.1-70B-Instruct": (74.9, 48.2, 46.7, 41.0, 52.7),
    "Llama-3.3-70B-Instruct": (82.9, 59.4, 46.7, 43.0, 58.0),
    "Qwen2.5-Math-7B-Instruct": (26.8, 25.7, 14.2, 12.7, 19.9),
    "Qwen2.5-Math-72B-Instruct": (65.8, 52.1, 32.5, 31.7, 45.5),
    "Qwen2.5-Coder-7B-Instruct": (14.3, 6.5, 4.1, 1.8, 6.7),
    "Qwen2.5-Coder-14B-Instruct": (50.1, 39.9, 34.0, 27.3, 37.8),
    "Qwen2.5-Coder-32B-Instruct": (68.9, 60.1, 48.9, 46.3, 56.1),
    "Qwen2-7B-Instruct": (8.4, 19.0, 14.7, 12.1, 13.6),
    "Qwen2-72B-Instruct": (67.6, 49.2, 42.1, 40.2, 49.8),
    "Qwen2.5-7B-Instruct": (36.5, 36.6, 29.7, 27.4, 32.6),
    "Qwen2.5-14B-Instruct": (69.3, 53.3, 45.0, 41.3, 52.2),
    "Qwen2.5-32B-Instruct": (65.6, 53.1, 40.0, 38.3, 49.3),
    "Qwen2.5-72B-Instruct": (76.2, 61.8, 54.6, 52.2, 61.2),
    "QwQ-32B-Preview": (88.0, 78.7, 57.8, 61.3, 71.5),
    "GPT-4o-0806": (79.2, 63.6, 51.4, 53.5, 61.9),
    "o1-mini": (93.2, 88.9, 87.2, 82.4, 87.9),
}


@pytest.mark.parametrize("model", sorted(TABLE3))
def test_processbench_average_is_the_mean_of_the_subset_f1s(model):
    *f1s, published = TABLE3[model]
    assert abs(processbench_average(f1s) - published) <= 0.05 + 1e-9


def test_processbench_average_is_not_the_f1_of_the_mean_accuracies():
    # Math-Shepherd (B5): F1 of the mean accuracies is 31.8, the published Average 31.5.
    accs = [(32.4, 91.7), (18.0, 82.0), (15.0, 71.1), (14.2, 73.0)]
    pooled = harmonic_mean(np.mean([a for a, _ in accs]), np.mean([c for _, c in accs]))
    assert round(pooled, 1) == 31.8
    assert round(processbench_average([harmonic_mean(a, c) for a, c in accs]), 1) == 31.5


# B5 T5: (e hits / N_error, c hits / N_correct) -> F1(k/N) x100 and the published F1.
INTEGER_VECTORS = [
    ((67, 207), (177, 193), 47.847, 47.9),
    ((128, 207), (160, 193), 70.836, 70.8),
    ((225, 594), (265, 406), 47.938, 48.0),
    ((236, 661), (296, 339), 50.683, 50.7),
    ((169, 207), (184, 193), 87.960, 88.0),
    ((423, 759), (164, 241), 61.278, 61.3),
    ((58, 207), (0, 193), 0.0, 0.0),
    ((0, 207), (39, 193), 0.0, 0.0),
    ((1, 594), (104, 406), 0.335, 0.3),
    ((250, 661), (108, 339), 34.585, 34.6),
]


def _predictions(error_hits: int, n_error: int, correct_hits: int, n_correct: int) -> tuple[list, list]:
    """Gold labels with n_error erroneous items (step 2) and n_correct correct ones, and predictions
    that hit exactly the given counts (a miss: step 1 on erroneous, step 0 on correct items)."""
    gold = [2] * n_error + [-1] * n_correct
    pred = (
        [2] * error_hits
        + [1] * (n_error - error_hits)
        + [-1] * correct_hits
        + [0] * (n_correct - correct_hits)
    )
    return pred, gold


@pytest.mark.parametrize(("errors", "corrects", "f1_exact", "f1_published"), INTEGER_VECTORS)
def test_processbench_f1_from_counts_reproduces_the_paper(errors, corrects, f1_exact, f1_published):
    pred, gold = _predictions(errors[0], errors[1], corrects[0], corrects[1])
    scores = processbench_scores(pred, gold)
    assert 100 * scores["f1"] == pytest.approx(f1_exact, abs=5e-4)
    assert abs(100 * scores["f1"] - f1_published) <= 0.12


def test_one_accuracy_zero_gives_f1_zero_and_both_zero_is_a_setting():
    assert harmonic_mean(0.28, 0.0) == 0.0
    assert harmonic_mean(0.0, 0.0) == 0.0
    assert math.isnan(harmonic_mean(0.0, 0.0, both_zero=float("nan")))
    assert processbench_scores([-1, 0], [1, -1], both_zero=float("nan"))["f1"] != 0.0


def test_processbench_table_has_the_papers_denominators_and_average():
    pred_a, gold_a = _predictions(67, 207, 177, 193)  # Math-Shepherd on GSM8K
    pred_b, gold_b = _predictions(107, 594, 333, 406)
    subsets = ["gsm8k"] * 400 + ["math"] * 1000
    table = processbench_table(pred_a + pred_b, gold_a + gold_b, subsets).set_index("subset")
    assert list(table.index) == ["gsm8k", "math", AVERAGE]
    assert (table.loc["gsm8k", "n_error"], table.loc["gsm8k", "n_correct"]) == (207, 193)
    assert table.loc["math", "error_acc"] == pytest.approx(107 / 594)
    assert table.loc[AVERAGE, "f1"] == pytest.approx((table.loc["gsm8k", "f1"] + table.loc["math", "f1"]) / 2)
    assert math.isnan(table.loc[AVERAGE, "error_acc"])


def test_a_subset_without_correct_items_is_left_out_of_the_average():
    table = processbench_table([1, 1, -1, 2], [1, -1, -1, 2], ["a", "a", "a", "b"]).set_index("subset")
    assert math.isnan(table.loc["b", "f1"])
    assert table.loc[AVERAGE, "f1"] == pytest.approx(table.loc["a", "f1"])


def test_a_scalar_prm_flags_the_first_step_not_above_the_threshold():
    assert earliest_error_from_scores([0.9, 0.5, 0.2], 0.5) == 1  # 0.5 is not above 0.5
    assert earliest_error_from_scores([0.9, 0.5, 0.2], 0.5, strict=False) == 2
    assert earliest_error_from_scores([0.9, 0.8], 0.5) == -1
    assert earliest_error_from_scores([0.9, None], 0.5) == 1


def test_the_threshold_is_the_f1_optimum_on_the_items_given():
    scores = [[0.9, 0.2, 0.8], [0.9, 0.8], [0.1, 0.9]]
    gold = [1, -1, 0]
    # Midpoints 0.15, 0.5, 0.85 (and below/above all): 0.15 -> F1 2/3; 0.5 -> every item right; 0.85 -> 0.
    tau, f1 = choose_threshold(scores, gold)
    assert (tau, f1) == (pytest.approx(0.5), pytest.approx(1.0))
    # A given grid: 0.15 and 0.85 only -> 0.15 wins with F1 2/3.
    assert choose_threshold(scores, gold, candidates=[0.85, 0.15]) == (0.15, pytest.approx(2 / 3))
    # Ties go to the smallest tau: 0.3 and 0.5 both split the same way.
    assert choose_threshold(scores, gold, candidates=[0.5, 0.3])[0] == 0.3


# ---- PRMBench-V (A6, A8) -------------------------------------------------------------------------


def test_prmbench_v_strict_accuracy_and_relaxed_precision_recall_by_hand():
    predicted = [[2, 3], [], [1, 1], [7], [2, 4]]
    gold = [[3], [1], [1], [2], [4, 2]]
    # per item (acc, P, R): (0, 1/2, 1), (0, 0, 0), (1, 1, 1), (0, 0, 0) out of range, (1, 1, 1)
    scores = prmbench_v_scores(predicted, gold)
    assert scores == {
        "accuracy": pytest.approx(2 / 5),
        "precision": pytest.approx(2.5 / 5),
        "recall": pytest.approx(3 / 5),
    }
    with pytest.raises(ValueError, match="must not be empty"):
        prmbench_v_scores([[1]], [[]])


def test_scalar_prms_flag_the_k_lowest_steps_earlier_first_so_precision_equals_recall():
    assert lowest_scored_steps([0.5, 0.1, 0.1, 0.9], 1) == [2]
    assert lowest_scored_steps([0.5, 0.1, 0.1, 0.9], 3) == [1, 2, 3]
    assert lowest_scored_steps([0.3, 0.3, 0.3], 2) == [1, 2]
    rng = np.random.default_rng(0)
    predicted, gold = [], []
    for _ in range(50):
        n = int(rng.integers(3, 10))
        g = sorted(rng.choice(np.arange(1, n + 1), size=int(rng.integers(1, n)), replace=False).tolist())
        predicted.append(lowest_scored_steps(rng.random(n).round(1).tolist(), len(g)))
        gold.append(g)
    scores = prmbench_v_scores(predicted, gold)
    assert scores["precision"] == pytest.approx(scores["recall"])  # A8 #8: P = R for scalar PRMs


# Table 1 (000 l.72-89): Overall and the nine types' strict accuracies.
TABLE1 = {
    "Gemini-1.5-pro": (0.34, [0.21, 0.51, 0.18, 0.38, 0.76, 0.26, 0.18, 0.24, 0.30]),
    "GPT-4o": (0.27, [0.23, 0.44, 0.14, 0.30, 0.58, 0.20, 0.15, 0.14, 0.20]),
    "InternVL-3-78B": (0.28, [0.26, 0.51, 0.12, 0.41, 0.69, 0.16, 0.13, 0.14, 0.14]),
    "Qwen-2-VL-7B-Instruct": (0.02, [0.01, 0.04, 0.01, 0.02, 0.01, 0.01, 0.00, 0.01, 0.07]),
    "URSA-RM-8B": (0.16, [0.05, 0.25, 0.22, 0.14, 0.07, 0.28, 0.13, 0.20, 0.15]),
    "MM-PRM": (0.14, [0.02, 0.02, 0.25, 0.15, 0.09, 0.29, 0.10, 0.17, 0.18]),
}


@pytest.mark.parametrize("model", sorted(TABLE1))
def test_prmbench_v_overall_from_907_items_per_type_matches_table1(model):
    overall, per_type = TABLE1[model]
    predicted, gold, types = [], [], []
    for t, share in enumerate(per_type):
        hits = round(share * 907)
        predicted += [[1]] * hits + [[2]] * (907 - hits)
        gold += [[1]] * 907
        types += [f"type{t}"] * 907
    table = prmbench_v_table(predicted, gold, types).set_index("error_type")
    assert table.loc[OVERALL, "n_items"] == 8163
    assert abs(table.loc[OVERALL, "accuracy"] - overall) <= 0.01
    assert table.loc[OVERALL, "accuracy"] == pytest.approx(table.drop(OVERALL)["accuracy"].mean())


# ---- MPBench (C3, C4) ----------------------------------------------------------------------------


def test_rmscore_pools_steps_with_correct_steps_as_the_positive_class():
    predicted = step_predictions([0.8, 0.0, -0.5, 0.3, None])  # score > 0 is correct; 0 and None are not
    assert predicted.tolist() == [True, False, False, True, False]
    gold = [True, True, False, False, False]
    # TP 1 (step 1), FN 1 (step 2), TN 2 (steps 3, 5), FP 1 (step 4)
    # F1 = 2*(1/2)*(1/2)/1 = 1/2; F1_neg: P = 2/3, R = 2/3 -> 2/3
    scores = rmscore(predicted, gold)
    assert scores["f1"] == pytest.approx(0.5) and scores["f1_neg"] == pytest.approx(2 / 3)
    assert scores["rmscore"] == pytest.approx(0.5 * 0.5 + 0.5 * 2 / 3)


def test_first_error_identification_is_an_exact_match_of_the_first_flagged_step():
    predicted = [[True, False, True], [True, True], [False, True]]
    gold = [[True, False, False], [True, False], [False, True]]
    assert first_error_accuracy(predicted, gold) == pytest.approx(2 / 3)


def test_best_of_n_and_weighted_majority_vote_by_hand():
    scores = [[0.9, 0.1, 0.5], [0.2, 0.2, -1.0]]
    correct = [[False, True, True], [True, False, False]]
    bon = best_of_n(scores, correct, seed=0)
    assert bon["tie_rate"] == 0.5 and 0.0 <= bon["accuracy"] <= 0.5
    # MV: problem 1 answers A(0.9) B(0.1) B(0.5) -> B 0.6 < A 0.9 -> A (gold B: miss);
    # problem 2: C(0.2) C(0.2) D(-1) -> C (gold C: hit).
    mv = weighted_majority_vote(scores, [["A", "B", "B"], ["C", "C", "D"]], ["B", "C"])
    assert mv == {"accuracy": 0.5, "tie_rate": 0.0}


def test_pairwise_argmax_without_ties_gives_f1_equal_accuracy_and_mcc_2a_minus_1():
    rng = np.random.default_rng(1)
    pairs = rng.random((200, 2)).tolist()
    right = rng.integers(0, 2, 200).tolist()
    scores = rps_scores(pairs, right)
    assert scores["tie_rate"] == 0.0
    assert scores["f1"] == pytest.approx(scores["accuracy"])
    assert scores["mcc"] == pytest.approx(2 * scores["accuracy"] - 1)


# C4d: published F1 and MCC under pairwise argmax: MCC = 2 F1 - 100 within 0.15 (38B is the erratum).
RPS_ROWS = [
    (50.0, 0.0),
    (45.5, -9.1),
    (53.1, 6.3),
    (56.5, 12.9),
    (48.1, -3.8),
    (53.6, 7.1),
    (66.3, 32.5),
    (64.4, 28.8),
    (54.8, 9.6),
    (70.5, 41.1),
    (69.8, 39.6),
    (84.7, 69.5),
]


@pytest.mark.parametrize(("f1", "mcc_published"), RPS_ROWS)
def test_published_rps_rows_follow_the_pairwise_identity(f1, mcc_published):
    assert abs((2 * f1 - 100) - mcc_published) <= 0.15


# C4b: published per-paradigm Avgs and Overall (Random first); the 8B and 38B rows are errata.
MPBENCH_AVGS = {
    "Random": (29.6, 40.9, 25.0, 31.8),
    "InternVL2.5-1B": (35.6, 40.2, 18.2, 31.3),
    "InternVL2.5-26B": (31.0, 61.5, 34.7, 42.4),
    "Qwen2.5-VL-3B": (24.9, 65.9, 22.1, 37.6),
    "Qwen2-VL-7B": (29.1, 67.9, 30.3, 42.4),
    "Qwen2.5-VL-7B": (32.0, 55.8, 49.4, 45.7),
    "Qwen2.5-VL-72B": (45.0, 75.7, 46.6, 55.8),
    "QVQ": (35.5, 57.7, 32.2, 41.8),
    "Gemini-2.0-flash-exp": (64.4, 75.9, 55.8, 65.4),
    "Gemini-2.0-thinking-exp": (64.4, 74.7, 54.7, 64.6),
    "GPT-4o": (62.8, 73.7, 77.1, 71.2),
}


@pytest.mark.parametrize("model", sorted(MPBENCH_AVGS))
def test_mpbench_overall_is_the_mean_of_the_three_paradigms(model):
    sc, aa, rps, overall = MPBENCH_AVGS[model]
    # mpbench_overall from components whose pairwise means are the published Avgs
    got = mpbench_overall(sc, sc, aa, aa, rps, rps)
    assert abs(got["overall"] - overall) <= 0.10


def test_mpbench_averages_from_published_components():
    random = mpbench_overall(9.1, 50.0, 40.9, 40.9, 50.0, 0.0)
    assert random["sc_avg"] == pytest.approx(29.55) and random["rps_avg"] == 25.0
    assert round(random["overall"], 1) == 31.8
    assert mpbench_overall(0, 0, 0, 0, 84.7, 69.5)["rps_avg"] == pytest.approx(77.1)
    # InternVL2.5-8B's published Overall 48.3 does not follow from its Avgs 46.8 / 68.7 / 29.7 (C4b).
    assert abs(mpbench_overall(46.8, 46.8, 68.7, 68.7, 29.7, 29.7)["overall"] - 48.3) > 0.05


# ---- ConfProBench (D5.8, D6) ---------------------------------------------------------------------


def _crs(pairs):
    p = [a for a, _ in pairs]
    return confidence_scores(p, [1] * len(p), [None] * len(p), p_perturbed=[b for _, b in pairs])


def test_crs_vector_t1_and_a_label_flip_is_invisible():
    got = _crs([(0.9, 0.9), (0.9, 0.85), (0.6, 0.4), (0.95, 0.7), (0.2, 0.3)])
    assert got["ccr"] == pytest.approx(0.6) and got["accm"] == pytest.approx(0.4 / 3)
    assert got["sccr"] == pytest.approx(0.2) and got["crs"] == pytest.approx(0.293333, abs=1e-6)


def test_crs_thresholds_compare_exact_decimals_t2():
    got = _crs([(0.9, 0.7), (0.9, 0.89), (0.91, 0.90)])
    assert got["ccr"] == pytest.approx(1 / 3) and got["accm"] == pytest.approx(0.2)
    assert got["sccr"] == 0.0 and got["crs"] == pytest.approx(0.466667, abs=1e-6)


def test_a_variant_that_failed_the_check_takes_no_part_in_crs():
    p = [0.9, 0.9, 0.9]
    with_failed = confidence_scores(p, [1, 1, 1], [None] * 3, p_perturbed=[0.9, 0.5, None])
    # Over the two steps with a passed variant: d = 0, 0.4 -> CCR 1/2 (over three it would be 1/3).
    assert with_failed["ccr"] == pytest.approx(0.5) and with_failed["sccr"] == pytest.approx(0.5)
    nothing = confidence_scores(p, [1, 1, 1], [None] * 3)
    assert math.isnan(nothing["crs"]) and math.isnan(nothing["avg"])
    assert set(nothing) == {
        "ccr",
        "accm",
        "sccr",
        "crs",
        "css",
        "ece",
        "ece_correct",
        "ece_incorrect",
        "ccs",
        "avg",
    }


def test_css_vector_t3_counts_only_types_present():
    got = confidence_scores([0.9, 0.8, 0.3, 0.5, 0.9], [1, 1, 0, 0, 0], [None, None, "RE", "RE", "NCE"])
    assert got["css"] == pytest.approx(0.2)


def test_ece_and_ccs_vector_t4_literal():
    got = confidence_scores([0.9, 0.8, 0.3, 0.5, 0.9], [1, 1, 0, 0, 0], [None, None, "RE", "RE", "RE"])
    assert got["ece"] == pytest.approx(0.36)
    assert got["ece_correct"] == pytest.approx(0.15)
    assert got["ece_incorrect"] == pytest.approx(0.566667, abs=1e-6)
    assert got["ccs"] == pytest.approx(-0.108333, abs=1e-6)


def test_ece_bins_are_right_closed_t5_and_p_half_is_correct_t6():
    assert ece([0.85, 0.9], [1, 0]) == pytest.approx(0.375)  # both in (0.8, 0.9]
    bins = reliability_bins([0.5, 1.0, 0.0], [1, 1, 0])
    assert bins.loc[4, "n"] == 1 and bins.loc[4, "accuracy"] == 1.0  # c = 0.5 in (0.4, 0.5], label 1
    assert bins.loc[9, "n"] == 2  # c = 1.0 (p = 1 and p = 0) in (0.9, 1.0]
    assert bins["n"].sum() == 3


# D6.1 / D6.2 / D6.5: published components -> published CRS, CCS and Avg.
D6 = {
    "InternVL3-8B": ((21.47, 6.56, 0.89), 77.41, 11.55, (13.35, 8.86, 90.18), 25.97, 38.31),
    "Qwen2.5-VL-32B": ((15.83, 6.29, 0.04), 81.06, 15.93, (7.47, 9.41, 88.88), 41.60, 46.20),
    "GPT-4o": ((21.82, 13.46, 6.98), 57.37, 30.71, (1.92, 10.54, 76.93), 62.00, 50.03),
    "Gemini-2.5-flash": ((38.56, 8.17, 5.15), 63.08, 48.29, (4.32, 6.43, 87.56), 48.62, 53.33),
    "QVQ": ((28.68, 6.74, 0.86), 74.17, 12.60, (11.43, 8.25, 89.72), 30.69, 39.15),
}


@pytest.mark.parametrize("model", sorted(D6))
def test_confprobench_published_rows_follow_from_their_components(model):
    crs_parts, crs, css, ece_parts, ccs, avg = D6[model]
    assert abs(100 * crs_from_components(*(v / 100 for v in crs_parts)) - crs) <= 0.025
    assert abs(100 * ccs_from_components(*(v / 100 for v in ece_parts)) - ccs) <= 0.02
    assert abs((crs + css + ccs) / 3 - avg) <= 0.01


def test_minicpm_ccs_is_a_published_erratum():
    # D6.5: ECE 45.16, ECE(C) 16.51, ECE(I) 84.61 give -46.945, not the printed -47.95.
    assert 100 * ccs_from_components(0.4516, 0.1651, 0.8461) == pytest.approx(-46.945, abs=0.015)
