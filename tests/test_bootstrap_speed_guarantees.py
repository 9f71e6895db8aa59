"""The bootstrap's faster replicate weights give the very same numbers, bit for bit, as before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qc.report
from qc.bootstrap import resample_indices
from qc.report import _weights, agreement_report


def _weights_as_before(draws: np.ndarray, n_items: int) -> np.ndarray:
    """The first implementation: one bincount over the chunk with an offset per replicate."""
    draws = draws.copy()
    draws += (np.arange(len(draws)) * n_items)[:, None]
    return np.bincount(draws.ravel(), minlength=draws.size).reshape(len(draws), n_items).astype(float)


@pytest.mark.parametrize(("n_items", "n_boot"), [(1, 3), (7, 25), (1000, 40), (20_000, 9)])
def test_replicate_weights_are_the_old_counts(n_items: int, n_boot: int) -> None:
    for draws in resample_indices(n_items, n_boot, seed=4):
        got = _weights(draws, n_items)
        assert got.dtype == np.float64 and np.array_equal(got, _weights_as_before(draws, n_items))
        assert (got.sum(axis=1) == n_items).all()


def _long_ratings(items: int, annotators: int, missing: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, items)
    noisy = np.where(
        rng.random((items, annotators)) < 0.75, truth[:, None], rng.integers(0, 3, (items, annotators))
    ).astype(float)
    noisy[rng.random(noisy.shape) < missing] = np.nan
    return pd.DataFrame(
        {
            "item": np.repeat(np.arange(items), annotators),
            "annotator": np.tile(np.arange(annotators), items),
            "field": "f",
            "value": noisy.ravel(),
        }
    ).dropna()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_seeded_report_is_bit_for_bit_the_report_of_the_old_weights(
    level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _long_ratings(1500, 4, 0.15, seed=11)
    now = agreement_report(frame, {"f": level}, n_boot=300, seed=7)
    monkeypatch.setattr(qc.report, "_weights", _weights_as_before)
    before = agreement_report(frame, {"f": level}, n_boot=300, seed=7)
    pd.testing.assert_frame_equal(now, before, check_exact=True)
