"""qc.step_study: sampling by band across models, human labels, calibrated threshold."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from qc.agreement import cohen_kappa
from qc.step_study import (
    all_pairs,
    calibrate_threshold,
    human_agreement,
    human_majority,
    sample_pairs,
)


def _pairs(n_models: int = 3, per_model: int = 60, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for i in range(per_model):
            rows.append(
                [f"ex{i // 6}", f"model-{m}", i % 6, i, "p", "r", float(rng.uniform(-0.1, 0.95)), False]
            )
    return pd.DataFrame(
        rows, columns=["example", "model", "j", "k", "predicted", "reference", "similarity", "encoder_match"]
    )


def test_all_pairs_carries_the_assignment_decision() -> None:
    examples = [{"example": "e1", "model": "m", "predicted": ["a", "b"], "reference": ["x", "y"]}]
    sim = np.array([[0.90, 0.80], [0.85, 0.10]])
    frame = all_pairs(examples, [sim], 0.35)
    assert frame["encoder_match"].tolist() == [True, False, False, False]
    assert all_pairs(examples, [sim], 0.35, "threshold")["encoder_match"].tolist() == [
        True,
        True,
        True,
        False,
    ]


def test_sampling_by_band_across_models_is_seeded_and_order_free() -> None:
    pairs = _pairs()
    sample = sample_pairs(pairs, counts=(10, 10, 12), seed=7)
    assert sample["band"].value_counts().to_dict() == {"< 0.20": 10, "[0.20, 0.50)": 10, ">= 0.50": 12}
    high = sample[sample["band"] == ">= 0.50"]
    assert (high["similarity"] >= 0.5).all()
    assert high["model"].value_counts().to_dict() == {"model-0": 4, "model-1": 4, "model-2": 4}
    shuffled = pairs.sample(frac=1.0, random_state=3)
    again = sample_pairs(shuffled, counts=(10, 10, 12), seed=7)
    assert again[["model", "example", "j", "k"]].equals(sample[["model", "example", "j", "k"]])
    other = sample_pairs(pairs, counts=(10, 10, 12), seed=8)
    assert not other[["model", "k"]].equals(sample[["model", "k"]])


def test_a_short_band_gives_what_it_has() -> None:
    pairs = _pairs(1, 20)
    sample = sample_pairs(pairs, edges=(0.2, 0.5), counts=(100, 0, 0))
    assert len(sample) == int((pairs["similarity"] < 0.2).sum())
    with pytest.raises(ValueError, match="counts"):
        sample_pairs(pairs, counts=(1, 2))


def test_human_majority_and_agreement() -> None:
    labels = pd.DataFrame(
        {
            "pair": [1, 1, 2, 2, 3, 3, 4],
            "annotator": ["a", "b", "a", "b", "a", "b", "a"],
            "match": [True, True, False, True, False, False, True],
        }
    )
    assert human_majority(labels).to_dict() == {1: True, 3: False, 4: True}  # pair 2 is a tie
    agreement = human_agreement(labels)
    assert agreement.pairs == 3 and agreement.annotators == 2
    assert agreement.observed == pytest.approx(2 / 3)
    assert agreement.cohen_kappa == pytest.approx(cohen_kappa([True, False, False], [True, True, False]))


def test_calibration_finds_the_threshold_that_agrees_best() -> None:
    sim = np.linspace(0.0, 0.99, 100)
    human = sim >= 0.6
    calibration = calibrate_threshold(lambda t: sim >= t, human, replicates=200)
    assert calibration.threshold == pytest.approx(0.6)
    assert calibration.kappa == pytest.approx(1.0)
    assert calibration.low <= 0.6 <= calibration.high
    row = calibration.curve.set_index("threshold").loc[0.35]
    assert row["kappa"] == pytest.approx(cohen_kappa(list(human), list(sim >= 0.35)))
    assert math.isnan(calibrate_threshold(lambda t: np.zeros(0, bool), []).threshold)
