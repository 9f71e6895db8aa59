"""Fleiss' kappa with missing ratings: stepgate's pooled shares, and where irrCAC's per-item mean differs.

statsmodels' fleiss_kappa refuses a count table with unequal raters per item (it asserts equal row
sums), so it cannot be the reference here; the two generalisations are written out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from qc.agreement import fleiss_kappa, fleiss_kappa_from_counts

# items rated [a a a], [a b], [b b], [b]: the last one is single-rated
RATINGS = [["a", "a", "a"], ["a", "b", None], ["b", "b", None], ["b", None, None]]
COUNTS = np.array([[3, 0], [1, 1], [0, 2], [0, 1]], dtype=float)


def irrcac_fleiss(counts: np.ndarray) -> float:
    """irrCAC's generalisation (Gwet 2014, sec. 4.2): P-bar over items with >= 2 ratings, the shares
    as the mean over every rated item of its own shares n_ij / m_i (single-rated items included)."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    pa = float(((counts * (counts - 1)).sum(axis=1)[pairable] / (m * (m - 1))[pairable]).mean())
    rated = m >= 1
    pi = (counts[rated] / m[rated, None]).mean(axis=0)
    pe = float((pi**2).sum())
    return (pa - pe) / (1 - pe)


def test_missing_ratings_pool_the_shares_over_the_pairable_items() -> None:
    # P-bar = (1 + 0 + 1) / 3; shares pooled over the 7 ratings of the 3 pairable items: (4/7, 3/7),
    # chance 25/49; kappa = (2/3 - 25/49) / (24/49) = 23/72
    assert fleiss_kappa(RATINGS) == pytest.approx(23 / 72, abs=1e-12)
    assert fleiss_kappa_from_counts(COUNTS) == pytest.approx(23 / 72, abs=1e-12)
    # irrCAC's per-item mean of shares, the single-rated item included: (3/8, 5/8) and 13/45
    assert irrcac_fleiss(COUNTS) == pytest.approx(13 / 45, abs=1e-12)
    assert abs(23 / 72 - 13 / 45) > 0.03


def test_with_the_same_raters_on_every_item_the_two_coincide() -> None:
    rng = np.random.default_rng(4)
    for _ in range(50):
        ratings = rng.integers(0, 3, size=(int(rng.integers(3, 30)), int(rng.integers(2, 6))))
        counts = np.stack([(ratings == c).sum(axis=1) for c in range(3)], axis=1).astype(float)
        if len(np.unique(ratings)) < 2:
            continue
        assert fleiss_kappa(ratings) == pytest.approx(irrcac_fleiss(counts), abs=1e-12)
