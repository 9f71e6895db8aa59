"""ProcessBench scoring: accuracy on erroneous and on correct samples, and their harmonic mean."""

from __future__ import annotations

import math

import pytest

from qc.scoring import processbench_scores


def test_scores_on_a_hand_example():
    gold = [2, 0, 5, -1, -1, -1, 3]
    pred = [2, 1, 5, -1, 4, -1, -1]
    # erroneous (gold != -1): indices 2, 0, 5, 3 -> hits on 2 and 5 -> 2/4
    # correct (gold == -1): three items, predicted -1 twice -> 2/3
    scores = processbench_scores(pred, gold)
    assert scores["error_acc"] == pytest.approx(0.5)
    assert scores["correct_acc"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert set(scores) == {"error_acc", "correct_acc", "f1"}


def test_an_earlier_or_later_step_is_wrong_on_erroneous_samples():
    # ProcessBench asks for the earliest error exactly; flagging an error elsewhere is not credited.
    scores = processbench_scores([1, 3], [2, 2])
    assert scores["error_acc"] == 0.0


def test_flagging_an_error_in_a_correct_solution_is_wrong():
    scores = processbench_scores([0, -1], [-1, -1])
    assert scores["correct_acc"] == 0.5


def test_perfect_and_zero_scores():
    assert processbench_scores([1, -1], [1, -1]) == {"error_acc": 1.0, "correct_acc": 1.0, "f1": 1.0}
    assert processbench_scores([-1, 0], [1, -1]) == {"error_acc": 0.0, "correct_acc": 0.0, "f1": 0.0}


def test_an_empty_subset_gives_nan():
    only_errors = processbench_scores([1, 2], [1, 3])
    assert only_errors["error_acc"] == 0.5
    assert math.isnan(only_errors["correct_acc"]) and math.isnan(only_errors["f1"])
    only_correct = processbench_scores([-1], [-1])
    assert math.isnan(only_correct["error_acc"]) and only_correct["correct_acc"] == 1.0
    nothing = processbench_scores([], [])
    assert all(math.isnan(v) for v in nothing.values())


def test_an_unparsed_prediction_counts_as_wrong():
    scores = processbench_scores([None, float("nan")], [2, -1])
    assert scores == {"error_acc": 0.0, "correct_acc": 0.0, "f1": 0.0}


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="length"):
        processbench_scores([1], [1, 2])
    with pytest.raises(ValueError, match="gold"):
        processbench_scores([1], [None])
