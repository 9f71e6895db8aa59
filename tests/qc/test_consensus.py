"""ProcessBench's escalation rule, majority vote and Dawid-Skene."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from qc.consensus import (
    Consensus,
    dawid_skene,
    earliest_error_consensus,
    majority_vote,
)

# --- earliest_error_consensus --------------------------------------------------------------


def test_three_agreeing_annotators_settle_at_three():
    c = earliest_error_consensus([2, 2, 2])
    assert c == Consensus("consensus", 2, 0, 3, 3)


def test_no_error_consensus_is_minus_one():
    c = earliest_error_consensus([-1, -1, -1])
    assert (c.status, c.label, c.settled_at) == ("consensus", -1, 3)


def test_needed_counts_down_to_the_quorum_then_one_at_a_time():
    assert earliest_error_consensus([]).needed == 3
    assert earliest_error_consensus([4]).needed == 2
    assert earliest_error_consensus([4, 5]).needed == 1
    assert earliest_error_consensus([4, 5, 4]) == Consensus("pending", None, 1, None, 3)
    assert earliest_error_consensus([4, 5, 4, 5]) == Consensus("pending", None, 1, None, 4)


def test_fourth_annotator_breaks_a_two_one_tie():
    c = earliest_error_consensus([3, 1, 3, 3])
    assert (c.status, c.label, c.settled_at, c.needed) == ("consensus", 3, 4, 0)


def test_fifth_annotator_settles_at_three_of_five():
    c = earliest_error_consensus([3, 1, 1, 3, 3])
    assert (c.status, c.label, c.settled_at) == ("consensus", 3, 5)


def test_two_two_one_is_discarded():
    # ProcessBench sec. 3.2: an annotation distribution of (2, 2, 1) cannot reach three within five.
    c = earliest_error_consensus([0, 1, 0, 1, 2])
    assert (c.status, c.label, c.needed, c.settled_at) == ("discarded", None, 0, 5)


def test_two_one_one_one_is_discarded():
    c = earliest_error_consensus([0, 0, 1, 2, 3])
    assert (c.status, c.settled_at) == ("discarded", 5)


def test_two_one_one_is_still_pending_after_four():
    # (a, a, b, c): one more "a" reaches three, so the fifth annotator is worth assigning.
    c = earliest_error_consensus([0, 0, 1, 2])
    assert (c.status, c.needed) == ("pending", 1)


def test_four_different_labels_are_discarded_at_four():
    c = earliest_error_consensus([0, 1, 2, -1])
    assert (c.status, c.settled_at, c.needed) == ("discarded", 4, 0)


def test_three_different_labels_are_pending():
    assert earliest_error_consensus([0, 1, 2]).status == "pending"


def test_labels_after_settling_do_not_change_the_decision():
    c = earliest_error_consensus([5, 5, 5, 1, 1])
    assert (c.status, c.label, c.settled_at, c.n_labels) == ("consensus", 5, 3, 5)


def test_other_quorum_and_maximum():
    assert earliest_error_consensus([1, 1], quorum=2, max_annotators=3).settled_at == 2
    assert earliest_error_consensus([1, 2], quorum=2, max_annotators=3).needed == 1
    assert earliest_error_consensus([1, 2, 3], quorum=2, max_annotators=3).status == "discarded"
    # quorum 3 of at most 3: the first disagreement already rules a unanimous three out.
    assert earliest_error_consensus([1, 2], quorum=3, max_annotators=3).status == "discarded"
    assert earliest_error_consensus([1, 2, 2, 2], quorum=3, max_annotators=7).settled_at == 4
    assert earliest_error_consensus([1, 2, 3, 4, 5], quorum=3, max_annotators=7).status == "pending"
    with pytest.raises(ValueError, match="quorum"):
        earliest_error_consensus([], quorum=6, max_annotators=5)


def test_consensus_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        earliest_error_consensus([1, 1, 1]).label = 2


# --- majority vote ---------------------------------------------------------------------------


def test_majority_vote_outcomes():
    vote = majority_vote(["a", "b", "a", None])
    assert (vote.label, vote.status, vote.counts) == ("a", "majority", {"a": 2, "b": 1})
    assert majority_vote(["a", "b"]).status == "tie"
    assert majority_vote(["a", "b"]).label is None
    assert majority_vote([None, float("nan")]).status == "empty"
    assert majority_vote(["a"], min_votes=2).status == "tie"
    assert majority_vote(["a", "a", "b"], min_votes=2).label == "a"


# --- Dawid-Skene -----------------------------------------------------------------------------

PLANTED = [0.95, 0.9, 0.8, 0.7, 0.55]


@pytest.fixture(scope="module")
def planted() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """2000 items, 3 classes, 5 annotators with known accuracies; errors uniform over wrong classes; 10% missing."""
    rng = np.random.default_rng(2024)
    n_items, k = 2000, 3
    truth = rng.choice(k, n_items, p=[0.5, 0.3, 0.2])
    labels = np.empty((n_items, len(PLANTED)))
    for j, accuracy in enumerate(PLANTED):
        wrong = (truth + rng.integers(1, k, n_items)) % k
        labels[:, j] = np.where(rng.random(n_items) < accuracy, truth, wrong)
    labels[rng.random(labels.shape) < 0.1] = np.nan
    frame = pd.DataFrame(
        {
            "item": np.repeat(np.arange(n_items), len(PLANTED)),
            "annotator": np.tile([f"a{j}" for j in range(len(PLANTED))], n_items),
            "label": labels.ravel(),
        }
    )
    return frame, truth, labels


def test_dawid_skene_recovers_planted_accuracies(planted):
    frame, _, _ = planted
    result = dawid_skene(frame)
    assert result.converged
    np.testing.assert_allclose(result.accuracy.to_numpy(), PLANTED, atol=0.03)
    assert list(result.accuracy.index) == [f"a{j}" for j in range(5)]
    assert result.posterior.shape == (2000, 3)
    np.testing.assert_allclose(result.posterior.sum(axis=1), 1.0)
    np.testing.assert_allclose(result.priors.to_numpy(), [0.5, 0.3, 0.2], atol=0.03)
    assert result.confusion_matrix("a0").shape == (3, 3)


def test_dawid_skene_beats_majority_vote(planted):
    frame, truth, labels = planted
    result = dawid_skene(frame)
    ds_accuracy = np.mean(result.labels.to_numpy() == truth)
    votes = [majority_vote(row) for row in labels.tolist()]
    mv_accuracy = np.mean([v.label == t for v, t in zip(votes, truth, strict=True)])
    assert ds_accuracy > mv_accuracy
    assert ds_accuracy > 0.95


def test_dawid_skene_on_string_labels_and_custom_columns():
    frame = pd.DataFrame(
        {
            "doc": [1, 1, 1, 2, 2, 2, 3, 3],
            "who": ["x", "y", "z", "x", "y", "z", "x", "y"],
            "tag": ["ok", "ok", "bad", "bad", "bad", "bad", "ok", None],
        }
    )
    result = dawid_skene(frame, item_col="doc", annotator_col="who", label_col="tag")
    assert result.classes == ["bad", "ok"]
    assert result.labels.to_dict() == {1: "ok", 2: "bad", 3: "ok"}
    with pytest.raises(ValueError, match="at least one"):
        dawid_skene(frame.iloc[:0], item_col="doc", annotator_col="who", label_col="tag")
