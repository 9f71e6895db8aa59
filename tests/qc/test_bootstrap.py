"""The one item bootstrap: same seed same draws, and a clear error for no replicates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from qc import quality
from qc.bootstrap import percentile_interval, resample_indices
from qc.report import agreement_report, bootstrap_ci


def test_draws_repeat_with_the_seed_and_cover_n_boot_rows() -> None:
    first = np.concatenate(list(resample_indices(7, 25, seed=3)))
    again = np.concatenate(list(resample_indices(7, 25, seed=3)))
    assert first.shape == (25, 7) and (first == again).all() and first.max() < 7


@pytest.mark.parametrize("n_boot", [0, -5, 2.5])
def test_no_replicates_is_refused_by_every_caller(n_boot) -> None:
    ratings = [[0, 0], [1, 1], [0, 1]]
    long = pd.DataFrame(
        {"item": [1, 1, 2, 2], "annotator": ["a", "b", "a", "b"], "field": "f", "value": [0, 0, 1, 0]}
    )
    wide = pd.DataFrame([[0.0, 1.0], [2.0, 2.0], [-1.0, -1.0]])
    for call in (
        lambda: resample_indices(3, n_boot),
        lambda: bootstrap_ci(ratings, "fleiss_kappa", n_boot=n_boot),
        lambda: bootstrap_ci(ratings, lambda r: 0.0, n_boot=n_boot),
        lambda: agreement_report(long, {"f": "nominal"}, n_boot=n_boot),
        lambda: quality.within_tolerance_ci(wide, 1, n_boot=n_boot),
    ):
        with pytest.raises(ValueError, match="n_boot must be a positive number"):
            call()


def test_the_interval_skips_undefined_replicates() -> None:
    assert percentile_interval(np.array([np.nan, 1.0, 1.0])) == (1.0, 1.0)
    low, high = percentile_interval(np.array([np.nan, np.nan]))
    assert np.isnan(low) and np.isnan(high)
    with pytest.raises(ValueError, match="ci must be"):
        percentile_interval(np.ones(3), ci=95)
