"""Dawid-Skene recovers simulated annotators' accuracies; it says nothing where no item has two labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from qc.dawid_skene import dawid_skene_accuracy


def test_simulated_accuracies_are_recovered() -> None:
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 400)
    accuracy = {"a": 0.95, "b": 0.8, "c": 0.6, "d": 0.4}
    columns = {}
    for who, p in accuracy.items():
        right = rng.random(400) < p
        columns[who] = np.where(right, truth, (truth + rng.integers(1, 3, 400)) % 3).astype(float)
    found = dawid_skene_accuracy(pd.DataFrame(columns))
    for who, p in accuracy.items():
        assert abs(found[who] - p) < 0.05, (who, found[who])


def test_no_item_with_two_labels_gives_nothing() -> None:
    assert dawid_skene_accuracy(pd.DataFrame({"a": [1.0, np.nan], "b": [np.nan, 1.0]})).empty
