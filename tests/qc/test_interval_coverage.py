"""The coverage the report states beside the coefficients' intervals is the coverage they have.

A seeded simulation at the qc level (qc.coverage): interval-level alpha on 30 items, 2 raters, the
dashboard's own bootstrap. A 90% interval printed as 95%, or a change of interval method, moves the
measured rate away from the stated one and fails here.
"""

from __future__ import annotations

import pytest

from exports.report import interval_note
from qc.coverage import STATED, coverage_note, simulate
from qc.report import bootstrap_ci


@pytest.mark.slow
@pytest.mark.parametrize("case", STATED, ids=lambda c: c.name)
def test_the_stated_coverage_is_what_a_seeded_simulation_measures(case) -> None:
    measured = simulate(case, studies=500, n_boot=1000, seed=0)
    assert measured.rate == pytest.approx(case.rate, abs=0.005)
    if case.skewed:  # the shortfall is real, beyond the simulation's own error: it must be stated
        assert measured.upper < 0.95


def test_a_ninety_percent_interval_would_not_pass_for_ninety_five() -> None:
    case = next(c for c in STATED if c.skewed)
    from qc.coverage import interval_coverage

    ninety = interval_coverage(
        case.draw,
        case.truth,
        "krippendorff_alpha",
        level="interval",
        studies=300,
        n_boot=500,
        ci=0.90,
        seed=0,
    )
    assert ninety.upper < case.rate - 0.01


def test_at_perfect_agreement_the_percentile_interval_is_one_point_and_the_note_says_so() -> None:
    ratings = [[1, 1]] * 30 + [[2, 2]] * 30
    assert bootstrap_ci(ratings, "fleiss_kappa", n_boot=200) == (1.0, 1.0)
    note = coverage_note()
    assert "one point at perfect agreement" in note
    assert all(f"{c.rate:.1%}" in note for c in STATED)


def test_the_report_prints_the_coverage_beside_its_intervals() -> None:
    class Tables:
        n_boot = 1000
        interval_coverage = coverage_note()

    text = interval_note(Tables())
    assert "Wilson" in text and f"{STATED[1].rate:.1%}" in text
