"""qc.agreement against published worked examples, hand derivations and an independent AC1."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qc.agreement import (
    cohen_kappa,
    encode_labels,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    gwet_ac1,
    kappa_paradox,
    krippendorff_alpha,
    observed_agreement,
    pabak,
    pairwise_matrix,
    prevalence_skew,
    scott_pi,
)

N = None

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with missing values:
# 4 observers x 12 units, values 1-5. Rows here are units (items), columns observers.
KRIPPENDORFF_OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
KRIPPENDORFF_UNITS = [list(unit) for unit in zip(*KRIPPENDORFF_OBSERVERS, strict=True)]

# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, categories depression, personality
# disorder, schizophrenia, neurosis, other. Published kappa 0.430.
FLEISS_1971 = [
    [0, 0, 0, 6, 0],
    [0, 3, 0, 0, 3],
    [0, 1, 4, 0, 1],
    [0, 0, 0, 0, 6],
    [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2],
    [2, 0, 3, 1, 0],
    [2, 0, 0, 4, 0],
    [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0],
    [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0],
    [1, 0, 0, 5, 0],
    [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1],
    [3, 0, 0, 1, 2],
    [5, 1, 0, 0, 0],
    [0, 2, 0, 4, 0],
    [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6],
    [0, 1, 0, 5, 0],
    [0, 2, 0, 1, 3],
    [2, 0, 0, 4, 0],
    [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0],
    [4, 0, 0, 0, 2],
    [0, 2, 0, 4, 0],
    [1, 0, 5, 0, 0],
    [0, 0, 0, 0, 6],
]

# Wikipedia, "Fleiss' kappa", worked example: 10 items, 14 raters, 5 categories, kappa 0.210.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def two_by_two(a: int, b: int, c: int, d: int) -> tuple[list[str], list[str]]:
    """Rater sequences from a 2x2 table: a both yes, b A yes/B no, c A no/B yes, d both no."""
    first = ["yes"] * (a + b) + ["no"] * (c + d)
    second = ["yes"] * a + ["no"] * b + ["yes"] * c + ["no"] * d
    return first, second


def counts_to_ratings(counts: list[list[int]]) -> list[list[int]]:
    return [[j for j, n in enumerate(row) for _ in range(n)] for row in counts]


# --- published worked examples ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_alpha_matches_krippendorff_2011_example(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_UNITS, level), 3) == published


def test_krippendorff_alpha_on_string_labels_uses_the_given_order():
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    units = [[names.get(v) for v in unit] for unit in KRIPPENDORFF_UNITS]
    order = list(names.values())
    assert round(krippendorff_alpha(units, "ordinal", order=order), 3) == 0.815
    assert round(krippendorff_alpha(units, "nominal"), 3) == 0.743
    with pytest.raises(ValueError, match="order"):
        krippendorff_alpha(units, "ordinal")
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(units, "cardinal")


def test_gwet_ac1_matches_gwet_handbook_example():
    # Gwet (2014) Handbook, 4th ed., the same 4 raters x 12 units (irrCAC's cac.raw4raters): AC1 0.77544.
    assert round(gwet_ac1(KRIPPENDORFF_UNITS), 5) == 0.77544


def test_observed_agreement_of_krippendorff_example_is_nine_elevenths():
    # 11 units have >= 2 ratings; per unit shares of agreeing pairs sum to 9 (two units at 1/2, one at 0).
    assert observed_agreement(KRIPPENDORFF_UNITS) == pytest.approx(9 / 11, abs=1e-12)


def test_fleiss_kappa_matches_fleiss_1971_table():
    assert round(fleiss_kappa_from_counts(FLEISS_1971), 3) == 0.430
    assert fleiss_kappa(counts_to_ratings(FLEISS_1971)) == pytest.approx(
        fleiss_kappa_from_counts(FLEISS_1971)
    )


def test_fleiss_kappa_matches_wikipedia_example():
    assert round(fleiss_kappa_from_counts(WIKIPEDIA_FLEISS), 3) == 0.210
    assert fleiss_kappa(counts_to_ratings(WIKIPEDIA_FLEISS)) == pytest.approx(0.2099, abs=1e-4)


def test_cohen_kappa_matches_wikipedia_example():
    # 50 proposals, both yes 20, A yes/B no 5, A no/B yes 10, both no 15: Po 0.7, Pe 0.5, kappa 0.4.
    a, b = two_by_two(20, 5, 10, 15)
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert pabak(a, b) == pytest.approx(2 * 0.7 - 1, abs=1e-12)
    # Scott: pooled yes share (25 + 30) / 100 = 0.55, Pe = 0.55^2 + 0.45^2 = 0.505, pi = 0.195 / 0.495.
    assert scott_pi(a, b) == pytest.approx(13 / 33, abs=1e-12)


# --- the kappa paradox, derived by hand ------------------------------------------------------


def test_feinstein_cicchetti_table_by_hand():
    # Table a=40, b=9, c=6, d=5 (n = 60). Po = 45/60. Marginals: A yes 49, B yes 46.
    a, b = two_by_two(40, 9, 6, 5)
    n = 60
    po = Fraction(45, n)
    pe_cohen = Fraction(49 * 46 + 11 * 14, n * n)  # 2408/3600
    assert cohen_kappa(a, b) == pytest.approx(float((po - pe_cohen) / (1 - pe_cohen)), abs=1e-12)
    assert cohen_kappa(a, b) == pytest.approx(292 / 1192, abs=1e-12)  # 0.2450 although Po = 0.75
    yes = Fraction(49 + 46, 2 * n)  # pooled: 95/120
    pe_scott = yes**2 + (1 - yes) ** 2
    assert scott_pi(a, b) == pytest.approx(float((po - pe_scott) / (1 - pe_scott)), abs=1e-12)  # 23/95
    pe_gwet = 2 * yes * (1 - yes)  # AC1 chance for 2 categories: 2 pi (1 - pi)
    assert gwet_ac1(np.column_stack([a, b])) == pytest.approx(
        float((po - pe_gwet) / (1 - pe_gwet)), abs=1e-12
    )
    assert pabak(a, b) == pytest.approx(0.5, abs=1e-12)


def test_skewed_table_has_high_agreement_and_kappa_below_zero():
    # a=118, b=5, c=2, d=0 (n = 125): Po = 118/125 = 0.944; A yes 123, B yes 120.
    a, b = two_by_two(118, 5, 2, 0)
    pe = Fraction(123 * 120 + 2 * 5, 125**2)  # 14770/15625
    po = Fraction(118, 125)
    kappa = (po - pe) / (1 - pe)
    assert kappa == Fraction(-4, 171)
    assert cohen_kappa(a, b) == pytest.approx(-4 / 171, abs=1e-12)
    yes = Fraction(243, 250)
    ac1 = (po - 2 * yes * (1 - yes)) / (1 - 2 * yes * (1 - yes))  # 55598/59098
    ratings = np.column_stack([a, b])
    assert gwet_ac1(ratings) == pytest.approx(float(ac1), abs=1e-12)
    assert gwet_ac1(ratings) > 0.94
    assert observed_agreement(ratings) > 0.9
    assert prevalence_skew(ratings) == pytest.approx(243 / 250)
    assert kappa_paradox(ratings)


def test_balanced_data_is_not_a_kappa_paradox():
    a, b = two_by_two(20, 5, 10, 15)
    assert not kappa_paradox(np.column_stack([a, b]))


# --- AC1 against an independent, loop-by-loop implementation ---------------------------------


def gwet_ac1_by_loops(rows: list[list[object]]) -> float:
    """Gwet's handbook formulas item by item, with plain Python, for cross-checking."""
    labels = sorted({v for row in rows for v in row if v is not None})
    q = len(labels)
    pa_terms, pi_sums, rated = [], dict.fromkeys(labels, 0.0), 0
    for row in rows:
        given = [v for v in row if v is not None]
        r = len(given)
        if r >= 1:
            rated += 1
            for k in labels:
                pi_sums[k] += given.count(k) / r
        if r >= 2:
            pa_terms.append(sum(given.count(k) * (given.count(k) - 1) for k in labels) / (r * (r - 1)))
    pa = sum(pa_terms) / len(pa_terms)
    pe = sum((pi_sums[k] / rated) * (1 - pi_sums[k] / rated) for k in labels) / (q - 1)
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gwet_ac1_matches_loop_implementation_with_missing_ratings(seed):
    rng = np.random.default_rng(seed)
    rows = [[str(v) if rng.random() > 0.3 else None for v in rng.integers(0, 4, 6)] for _ in range(80)]
    assert gwet_ac1(rows) == pytest.approx(gwet_ac1_by_loops(rows), abs=1e-12)


def test_cohen_kappa_matches_hand_computation_on_random_labels():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    po = np.mean(a == b)
    pe = sum(np.mean(a == k) * np.mean(b == k) for k in range(3))
    assert cohen_kappa(a.tolist(), b.tolist()) == pytest.approx((po - pe) / (1 - pe), abs=1e-12)


def test_pabak_uses_k_categories():
    a, b = [0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 1]
    assert pabak(a, b) == pytest.approx((3 * 5 / 6 - 1) / 2)
    assert pabak(a, b, n_categories=4) == pytest.approx((4 * 5 / 6 - 1) / 3)


def test_two_rater_fleiss_kappa_is_scotts_pi():
    a, b = two_by_two(40, 9, 6, 5)
    assert fleiss_kappa(np.column_stack([a, b])) == pytest.approx(scott_pi(a, b), abs=1e-12)


# --- missing values, labels and degenerate cases ---------------------------------------------


def test_pairs_with_a_missing_value_are_dropped():
    a, b = [1, 2, None, 1, 2, 1], [1, 2, 2, float("nan"), 1, 1]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa([1, 2, 2, 1], [1, 2, 1, 1]))


def test_one_label_everywhere_is_undefined_for_chance_corrected_coefficients():
    ratings = [["ok"] * 3 for _ in range(10)]
    a, b = ["ok"] * 10, ["ok"] * 10
    assert all(math.isnan(x) for x in (cohen_kappa(a, b), scott_pi(a, b), fleiss_kappa(ratings)))
    assert math.isnan(gwet_ac1(ratings))
    assert math.isnan(krippendorff_alpha(ratings))
    assert observed_agreement(ratings) == 1.0
    assert pabak(a, b) == 1.0
    assert kappa_paradox(ratings)


@pytest.mark.parametrize("ratings", [[[1, 2]], [[1, 1], [2, None]], [], [[None, None], [None, 1]]])
def test_fewer_than_two_pairable_items_give_nan(ratings):
    ratings = np.array(ratings, dtype=object).reshape(len(ratings), -1 if ratings else 2)
    for fn in (observed_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha):
        assert math.isnan(fn(ratings))
    assert math.isnan(cohen_kappa([1], [1]))
    assert math.isnan(pabak([], []))


def test_unequal_sequences_raise():
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([1, 2], [1])


def test_encode_labels_accepts_lists_arrays_and_frames():
    codes, cats = encode_labels([["b", None], ["a", "b"], [float("nan"), "c"]])
    assert cats == ["a", "b", "c"]
    np.testing.assert_array_equal(codes, [[1, np.nan], [0, 1], [np.nan, 2]])
    codes, cats = encode_labels(np.array([[2.0, np.nan], [-1.0, 2.0]]))
    assert cats == [-1, 2] and all(isinstance(c, int) for c in cats)
    frame = pd.DataFrame({"x": ["low", "high"], "y": ["mid", None]})
    codes, cats = encode_labels(frame, order=["low", "mid", "high"])
    np.testing.assert_array_equal(codes, [[0, 1], [2, np.nan]])
    with pytest.raises(ValueError, match="not in order"):
        encode_labels(frame, order=["low", "high"])
    with pytest.raises(ValueError, match="2-D"):
        encode_labels([1, 2, 3])


def test_pairwise_matrix_is_symmetric_with_nan_below_two_shared_items():
    frame = pd.DataFrame({"ann": [1, 2, 1, 2], "bob": [1, 2, 2, 2], "cy": [None, None, None, 1]})
    agreement = pairwise_matrix(frame)
    assert list(agreement.columns) == ["ann", "bob", "cy"]
    assert agreement.loc["ann", "bob"] == agreement.loc["bob", "ann"] == 0.75
    assert math.isnan(agreement.loc["ann", "cy"])
    kappa = pairwise_matrix(frame, metric="kappa")
    assert kappa.loc["ann", "bob"] == pytest.approx(cohen_kappa(frame["ann"], frame["bob"]))
    with pytest.raises(ValueError, match="metric"):
        pairwise_matrix(frame, metric="spearman")


# --- properties --------------------------------------------------------------------------------

label_matrix = st.lists(
    st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=3, max_size=3), min_size=2, max_size=30
)


@settings(max_examples=60, deadline=None)
@given(label_matrix)
def test_coefficients_ignore_label_names(rows):
    renamed = [[None if v is None else f"label-{v}" for v in row] for row in rows]
    for fn in (observed_agreement, fleiss_kappa, gwet_ac1, krippendorff_alpha):
        x, y = fn(rows), fn(renamed)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(label_matrix)
def test_coefficients_stay_in_range(rows):
    oa = observed_agreement(rows)
    assert math.isnan(oa) or 0.0 <= oa <= 1.0
    for fn in (fleiss_kappa, gwet_ac1, krippendorff_alpha):
        value = fn(rows)
        assert math.isnan(value) or value <= 1.0 + 1e-9
