"""The agreement report: long-format pivoting, the per-item-sums fast path and bootstrap intervals."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

import qc.report
from qc.agreement import (
    LEVELS,
    fleiss_kappa,
    gwet_ac1,
    kappa_paradox,
    krippendorff_alpha,
    observed_agreement,
    pairwise_matrix,
)
from qc.report import (
    FAST_STATISTICS,
    agreement_report,
    bootstrap_ci,
    point_estimates,
    ratings_matrix,
    within_tolerance_agreement,
)

N = None
# Krippendorff (2011), the 4 observers x 12 units example with missing values (units as rows).
KRIPPENDORFF_UNITS = [
    [1, 1, N, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [N, 5, 5, 5],
    [N, N, 1, 1],
    [N, 3, N, N],
]


def noisy_ratings(n_items: int, n_annotators: int, k: int, seed: int, missing: float = 0.25) -> np.ndarray:
    """Labels that agree with a hidden truth half the time, with some ratings missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    noise = rng.integers(0, k, (n_items, n_annotators))
    ratings = np.where(rng.random((n_items, n_annotators)) < 0.5, truth[:, None], noise).astype(float)
    ratings[rng.random(ratings.shape) < missing] = np.nan
    return ratings


def long_format(ratings: np.ndarray, field: str) -> pd.DataFrame:
    n_items, n_annotators = ratings.shape
    frame = pd.DataFrame(
        {
            "item": np.repeat(np.arange(n_items), n_annotators),
            "annotator": np.tile([f"ann{j}" for j in range(n_annotators)], n_items),
            "field": field,
            "value": ratings.ravel(),
        }
    )
    return frame.dropna(subset=["value"]).reset_index(drop=True)


def mean_pairwise(ratings: object, metric: str) -> float:
    matrix = pairwise_matrix(ratings, metric=metric).to_numpy()
    return float(np.nanmean(matrix[np.triu_indices(len(matrix), 1)]))


# --- long format --------------------------------------------------------------------------------


def test_ratings_matrix_pivots_one_field_and_keeps_the_last_repeat():
    frame = pd.DataFrame(
        {
            "item": ["i1", "i1", "i2", "i1", "i2"],
            "annotator": ["bo", "al", "al", "bo", "al"],
            "field": ["ok", "ok", "ok", "ok", "difficulty"],
            "value": ["yes", "no", "yes", "no", "hard"],
        }
    )
    wide = ratings_matrix(frame, "ok")
    assert list(wide.index) == ["i1", "i2"] and list(wide.columns) == ["al", "bo"]
    assert wide.loc["i1", "bo"] == "no"
    assert pd.isna(wide.loc["i2", "bo"])
    assert ratings_matrix(frame, "missing").empty


def test_within_tolerance_agreement_on_earliest_error_labels():
    ratings = [[2, 3, -1], [0, 0, 0], [-1, 0, None]]
    # item 1: (2,3) agrees, (2,-1) and (3,-1) do not -> 1/3; item 2: 3/3; item 3: -1 vs 0 -> 0/1
    assert within_tolerance_agreement(ratings, tolerance=1) == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert within_tolerance_agreement(ratings, tolerance=0) == pytest.approx((0 + 1 + 0) / 3)
    assert within_tolerance_agreement([[1, 1]]) != within_tolerance_agreement([[1, 1]])  # one item: NaN


# --- the fast path equals the direct coefficients -----------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_point_estimates_equal_the_direct_coefficients(seed):
    ratings = noisy_ratings(400, 5, 4, seed)
    fast = point_estimates(ratings)
    assert fast["observed_agreement"] == pytest.approx(observed_agreement(ratings), abs=1e-12)
    assert fast["fleiss_kappa"] == pytest.approx(fleiss_kappa(ratings), abs=1e-12)
    assert fast["gwet_ac1"] == pytest.approx(gwet_ac1(ratings), abs=1e-12)
    assert fast["mean_cohen_kappa"] == pytest.approx(mean_pairwise(ratings, "kappa"), abs=1e-12)
    assert fast["pabak"] == pytest.approx(mean_pairwise(ratings, "pabak"), abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", [3, 4])
def test_alpha_from_summed_coincidences_equals_the_krippendorff_package(level, seed):
    ratings = noisy_ratings(300, 4, 5, seed, missing=0.4)
    expected = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
    fast = point_estimates(ratings, ["krippendorff_alpha"], level=level)["krippendorff_alpha"]
    assert abs(fast - expected) < 1e-9


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_fast_path_reproduces_krippendorff_2011(level):
    fast = point_estimates(KRIPPENDORFF_UNITS, ["krippendorff_alpha"], level=level)["krippendorff_alpha"]
    assert abs(fast - krippendorff_alpha(KRIPPENDORFF_UNITS, level)) < 1e-9


def test_sparse_and_dense_sums_agree(monkeypatch):
    # Many annotators or labels keep the per-item columns sparse; force that path on small data.
    ratings = noisy_ratings(200, 6, 7, seed=8, missing=0.5)
    dense = point_estimates(ratings, level="ordinal")
    monkeypatch.setattr(qc.report, "_DENSE_CELLS", 0)
    sparse = point_estimates(ratings, level="ordinal")
    for name in FAST_STATISTICS:
        assert sparse[name] == pytest.approx(dense[name], abs=1e-12)
    low_high = bootstrap_ci(ratings, "mean_cohen_kappa", n_boot=50)
    monkeypatch.setattr(qc.report, "_DENSE_CELLS", 8_000_000)
    assert bootstrap_ci(ratings, "mean_cohen_kappa", n_boot=50) == pytest.approx(low_high, abs=1e-12)


# --- bootstrap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAST_STATISTICS)
def test_interval_covers_the_point_estimate(name):
    ratings = noisy_ratings(300, 4, 3, seed=11)
    low, high = bootstrap_ci(ratings, name, n_boot=300)
    point = point_estimates(ratings, [name])[name]
    assert low <= point <= high
    assert high - low < 0.3


def test_same_seed_same_interval_and_another_seed_slightly_different():
    ratings = noisy_ratings(300, 4, 3, seed=12)
    first = bootstrap_ci(ratings, "gwet_ac1", n_boot=400, seed=7)
    assert bootstrap_ci(ratings, "gwet_ac1", n_boot=400, seed=7) == first
    other = bootstrap_ci(ratings, "gwet_ac1", n_boot=400, seed=8)
    assert other != first
    assert other == pytest.approx(first, abs=0.03)


@pytest.mark.parametrize(
    ("fast", "direct"),
    [
        ("fleiss_kappa", fleiss_kappa),
        (observed_agreement, observed_agreement),
        ("krippendorff_alpha", krippendorff_alpha),
        ("mean_cohen_kappa", lambda r: mean_pairwise(r, "kappa")),
    ],
)
def test_fast_bootstrap_equals_calling_the_coefficient_on_each_resample(fast, direct):
    ratings = noisy_ratings(120, 3, 3, seed=13, missing=0.1)
    expected = bootstrap_ci(ratings, lambda r: direct(r), n_boot=60, seed=3)
    assert bootstrap_ci(ratings, fast, n_boot=60, seed=3) == pytest.approx(expected, abs=1e-9)


def test_bootstrap_of_a_dataframe_passes_frames_to_a_custom_statistic():
    frame = pd.DataFrame(noisy_ratings(50, 3, 2, seed=14), columns=["a", "b", "c"])
    seen = []
    bootstrap_ci(frame, lambda r: seen.append(list(r.columns)) or 0.0, n_boot=3)
    assert seen == [["a", "b", "c"]] * 3


def test_bootstrap_rejects_bad_arguments():
    ratings = noisy_ratings(20, 3, 2, seed=15)
    with pytest.raises(ValueError, match="ci"):
        bootstrap_ci(ratings, "fleiss_kappa", ci=95)
    with pytest.raises(ValueError, match="fast path"):
        bootstrap_ci(ratings, "spearman")


def test_one_label_everywhere_gives_nan_intervals():
    low, high = bootstrap_ci(np.ones((30, 3)), "fleiss_kappa", n_boot=20)
    assert math.isnan(low) and math.isnan(high)


# --- agreement_report --------------------------------------------------------------------------


def test_report_has_one_row_per_field_with_intervals():
    step = noisy_ratings(200, 3, 4, seed=16)
    frame = pd.concat(
        [long_format(step, "earliest_error"), long_format(noisy_ratings(150, 3, 2, 17), "valid")]
    )
    report = agreement_report(frame, {"earliest_error": "interval", "valid": "nominal"}, n_boot=200)
    assert list(report["field"]) == ["earliest_error", "valid"]
    row = report.set_index("field").loc["earliest_error"]
    assert row["n_items"] == len(ratings_matrix(frame, "earliest_error"))
    assert row["n_annotators"] == 3
    wide = ratings_matrix(frame, "earliest_error")
    assert row["krippendorff_alpha"] == pytest.approx(krippendorff_alpha(wide, "interval"), abs=1e-9)
    assert row["fleiss_kappa"] == pytest.approx(fleiss_kappa(wide), abs=1e-12)
    for name in FAST_STATISTICS:
        assert row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]
    assert not row["kappa_paradox"]


def test_report_flags_the_kappa_paradox_and_uses_the_given_order():
    rng = np.random.default_rng(18)
    values = np.where(rng.random((300, 2)) < 0.95, "valid", "invalid").astype(object)
    frame = long_format(values, "modification")
    report = agreement_report(
        frame, {"modification": "ordinal"}, n_boot=100, order={"modification": ["invalid", "valid"]}
    )
    row = report.iloc[0]
    assert row["max_prevalence"] > 0.9
    assert row["observed_agreement"] > 0.85
    assert row["kappa_paradox"] == kappa_paradox(ratings_matrix(frame, "modification")) is True
    assert row["gwet_ac1"] > row["fleiss_kappa"]


@pytest.mark.slow
def test_full_report_on_100k_items_and_5_annotators_is_finite():
    ratings = np.random.default_rng(19).integers(0, 3, (100_000, 5)).astype(float)
    report = agreement_report(long_format(ratings, "label"), {"label": "nominal"}, n_boot=200)
    numbers = report.drop(columns=["field", "level", "kappa_paradox"]).to_numpy(dtype=float)
    assert np.isfinite(numbers).all()
    assert report.loc[0, "n_items"] == 100_000


def test_a_field_without_labels_gives_a_row_of_nan():
    frame = long_format(noisy_ratings(20, 2, 2, seed=20), "valid")
    row = agreement_report(frame, {"absent": "nominal"}, n_boot=20).iloc[0]
    assert row["n_items"] == 0 and math.isnan(row["fleiss_kappa"]) and math.isnan(row["fleiss_kappa_low"])
    assert not row["kappa_paradox"]
