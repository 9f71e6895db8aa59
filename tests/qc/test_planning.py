"""The study planner: Wilson sizes computed by hand, the seeds' studies, and the simulated coefficients."""

from __future__ import annotations

import math

import pytest

from qc.planning import (
    PRESETS,
    agreement_for,
    items_for_agreement,
    kappa_paradox_bound,
    plan_preset,
    plan_study,
    simulated_width,
    wilson_half_width,
    wilson_interval,
)

Z95 = 1.959963984540054


def _hand_half_width(p: float, n: int, z: float = Z95) -> float:
    # Wilson 1927: half-width z/(1 + z^2/n) * sqrt(p(1-p)/n + z^2/(4n^2))
    return z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))


def test_the_design_example_094_at_005_needs_95_items() -> None:
    assert items_for_agreement(0.94, 0.05) == 95
    assert _hand_half_width(0.94, 95) <= 0.05 < _hand_half_width(0.94, 94)


@pytest.mark.parametrize(
    ("expected", "target", "confidence", "z", "n"),
    [
        (0.5, 0.1, 0.95, Z95, 93),  # by hand: 1.96*sqrt(0.25*93+0.96)/96.84 = 0.0996; at 92: 0.1001
        (0.5, 0.05, 0.95, Z95, 381),
        (0.94, 0.05, 0.90, 1.6448536269514722, 67),
        (0.8, 0.05, 0.99, 2.5758293035489004, 422),
    ],
)
def test_items_are_the_smallest_size_reaching_the_width(expected, target, confidence, z, n) -> None:
    assert items_for_agreement(expected, target, confidence) == n
    assert _hand_half_width(expected, n, z) <= target < _hand_half_width(expected, n - 1, z)


def test_wilson_intervals_by_hand() -> None:
    low, high = wilson_interval(0.5, 100)
    assert low == pytest.approx(0.40383, abs=1e-5) and high == pytest.approx(0.59617, abs=1e-5)
    low, high = wilson_interval(0.0, 10)  # no successes: the lower end is 0, the upper z^2/(n+z^2)
    assert low == 0.0 and high == pytest.approx(Z95**2 / (10 + Z95**2))
    assert wilson_half_width(0.3, 40) == pytest.approx(_hand_half_width(0.3, 40))


def test_prmbench_v_study_had_an_interval_of_875_to_972() -> None:
    preset = PRESETS["prmbench_v"]
    plan = plan_preset("prmbench_v", n_sims=100)
    assert (preset.items, preset.raters) == (100, 2)
    assert round(plan.lower * 100, 1) == 87.5 and round(plan.upper * 100, 1) == 97.2
    assert plan.method == "wilson" and plan.items_needed == 95 and plan.sim_error == 0.0
    assert "0.875 to 0.972" in plan.summary()


def test_mpbench_300_items_3_raters_interval() -> None:
    plan = plan_preset("mpbench", n_sims=100)
    assert (plan.items, plan.raters) == (300, 3)
    assert round(plan.lower * 100, 1) == 92.3 and round(plan.upper * 100, 1) == 97.2
    assert list(plan.by_raters["raters"]) == [2, 3, 4, 5]


def test_half_width_falls_with_items_and_the_series_marks_the_size() -> None:
    plan = plan_study("observed_agreement", 0.9, 0.04, n_sims=50, shares=(0.8, 0.2))
    series = plan.by_items.sort_values("items")
    assert series["half_width"].is_monotonic_decreasing
    assert plan.items_needed in set(series["items"])


@pytest.mark.parametrize("statistic", ["cohen_kappa", "fleiss_kappa", "krippendorff_alpha"])
def test_coefficients_are_planned_by_seeded_simulation_with_its_error(statistic: str) -> None:
    raters = 2 if statistic == "cohen_kappa" else 3
    one = plan_study(statistic, 0.6, 0.1, shares=(0.7, 0.3), raters=raters, n_sims=200, seed=4)
    two = plan_study(statistic, 0.6, 0.1, shares=(0.7, 0.3), raters=raters, n_sims=200, seed=4)
    assert one.items_needed == two.items_needed and one.half_width == two.half_width
    assert one.method == "simulation" and 0 < one.sim_error < 0.02
    # the size found reaches the target within a few simulation errors
    assert abs(one.half_width - 0.1) < 4 * one.sim_error + 0.01
    assert one.lower < 0.6 < one.upper
    assert "by simulation" in one.summary() and "+/-" in one.summary()


def test_simulated_coefficients_centre_on_the_expected_value() -> None:
    agreement = agreement_for("fleiss_kappa", 0.5, (0.6, 0.4))
    width = simulated_width("fleiss_kappa", 400, 3, (0.6, 0.4), agreement, n_sims=200, seed=1)
    assert width.centre == pytest.approx(0.5, abs=0.03)
    alpha = simulated_width("krippendorff_alpha", 400, 3, (0.6, 0.4), agreement, n_sims=100, seed=1)
    assert alpha.centre == pytest.approx(0.5, abs=0.03)


def test_kappa_paradox_bound_matches_prmbench_v_worked_bounds() -> None:
    bound = kappa_paradox_bound((0.5, 0.5), 0.94)
    assert bound.lowest_kappa_any_shares == pytest.approx(
        -0.031, abs=5e-4
    )  # docs/PROTOCOLS.md A5: cells 94/3/3/0
    assert bound.pabak == pytest.approx(0.88)
    assert bound.lowest_kappa == pytest.approx(0.88)  # balanced shares: kappa = PABAK
    skewed = kappa_paradox_bound((0.95, 0.05), 0.94)
    assert skewed.lowest_kappa == pytest.approx((0.94 - 0.905) / (1 - 0.905))
    assert kappa_paradox_bound((0.99, 0.01), 0.94).lowest_kappa is None  # no such table


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: items_for_agreement(1.2, 0.05), "share between 0 and 1"),
        (lambda: items_for_agreement(0.9, 0.0), "half-width"),
        (lambda: items_for_agreement(0.9, 0.05, confidence=95), "confidence"),
        (lambda: plan_study("cohen_kappa", 0.5, 0.1, raters=3), "2 raters"),
        (lambda: plan_study("median", 0.5, 0.1), "statistic must be one of"),
        (lambda: plan_study("observed_agreement", 0.5, 0.1, shares=(0.9, 0.1)), "below chance"),
        (lambda: plan_study("fleiss_kappa", 0.5, 0.1, shares=(1.0,)), "two category shares"),
    ],
)
def test_bad_inputs_say_what_is_wrong(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
