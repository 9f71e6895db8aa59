"""The statistics' conventions where definitions differ: each test fails if the convention changes.

Every expected value is computed by hand in the test (fractions written out), not by the code.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from exports.report import report_csv, report_json, report_markdown
from qc.agreement import fleiss_kappa, gwet_ac1, krippendorff_alpha, pabak
from qc.bootstrap import wilson_interval
from qc.dashboard import build_dashboard
from qc.quality import agreement_by_group, agreement_table, earliest_error_by_position, within_tolerance_ci
from qc.report import agreement_report, bootstrap_ci, point_estimates

# Items with 3, 2 and 2 ratings: per-item agreement 1, 1, 0 -> P-bar = 2/3.
UNEVEN = [[0, 0, 0], [1, 1, None], [0, 1, None]]


def test_pabak_counts_only_the_labels_of_compared_pairs():
    # The 2 appears only beside a missing partner: k = 2 (labels 0, 1), Po = 2/4 -> 2*0.5 - 1 = 0.
    assert pabak([0, 1, 0, 1, 2], [0, 1, 1, 0, None]) == pytest.approx(0.0)
    # The scale's size can still be given: k = 3 -> (3*0.5 - 1)/2 = 0.25.
    assert pabak([0, 1, 0, 1, 2], [0, 1, 1, 0, None], n_categories=3) == pytest.approx(0.25)


@pytest.mark.parametrize("data", [[[-1, 1], [1, -1], [-1, -1]], [[-1.0, 2.0], [3.0, -1.0], [2.0, 2.0]]])
def test_ratio_alpha_refuses_negative_values(data):
    with pytest.raises(ValueError, match=r"ratio alpha needs values >= 0.*-1"):
        krippendorff_alpha(data, level="ratio")
    with pytest.raises(ValueError, match="ratio alpha needs values >= 0"):
        point_estimates(data, ["krippendorff_alpha"], "ratio")
    long = pd.DataFrame(
        [(i, a, "f", v) for i, row in enumerate(data) for a, v in enumerate(row)],
        columns=["item", "annotator", "field", "value"],
    )
    with pytest.raises(ValueError, match="ratio alpha needs values >= 0"):
        agreement_report(long, {"f": "ratio"}, n_boot=10)


def test_ratio_alpha_still_works_on_non_negative_values():
    assert krippendorff_alpha([[1, 1], [2, 2], [3, 3]], level="ratio") == pytest.approx(1.0)


def test_fleiss_kappa_pools_category_shares_over_ratings_not_items():
    # Pooled over the 7 ratings: p0 = 4/7, p1 = 3/7, Pe = 25/49 -> (2/3 - 25/49)/(24/49) = 23/72.
    # irrCAC's per-item mean would give shares (1/2, 1/2), Pe = 1/2 and kappa 1/3.
    assert fleiss_kappa(UNEVEN) == pytest.approx(23 / 72)
    assert fleiss_kappa(UNEVEN) != pytest.approx(1 / 3)
    assert point_estimates(UNEVEN, ["fleiss_kappa"])["fleiss_kappa"] == pytest.approx(23 / 72)


def test_gwet_ac1_uses_single_rated_items_in_its_chance_term():
    # Without the single-rated item: pi = (1/2, 1/2), Pe = 2 * 1/4 / 1 = 1/2, AC1 = (2/3 - 1/2)/(1/2) = 1/3.
    assert gwet_ac1(UNEVEN) == pytest.approx(1 / 3)
    # A fourth item rated once (0): pi = ((1 + 0 + 1/2 + 1)/4, ...) = (5/8, 3/8), Pe = 2 * 15/64 = 15/32;
    # Pa stays 2/3 (the item is not pairable): AC1 = (2/3 - 15/32)/(17/32) = 19/51.
    with_single = [*UNEVEN, [0, None, None]]
    assert gwet_ac1(with_single) == pytest.approx(19 / 51)
    assert point_estimates(with_single, ["gwet_ac1"])["gwet_ac1"] == pytest.approx(19 / 51)
    # Fleiss' kappa leaves the single-rated item out entirely.
    assert fleiss_kappa(with_single) == pytest.approx(23 / 72)


def test_the_reports_ac1_counts_every_choice_of_the_field_not_only_those_used():
    # Difficulty has three choices; the annotators used two. q = 3 for AC1.
    values = [("easy", "easy"), ("easy", "medium"), ("medium", "medium"), ("easy", "easy")]
    long = pd.DataFrame(
        [
            (i, who, "difficulty", v)
            for i, pair in enumerate(values)
            for who, v in zip("ab", pair, strict=True)
        ],
        columns=["item", "annotator", "field", "value"],
    )
    table = agreement_table(long, {"difficulty": "ordinal"}, n_boot=20)
    wide = [list(p) for p in values]
    # Pa = 3/4; pi = (5/8, 3/8, 0); Pe = (5/8*3/8 + 3/8*5/8 + 0)/(3 - 1) = 15/64; AC1 = (3/4 - 15/64)/(49/64).
    expected = (3 / 4 - 15 / 64) / (49 / 64)
    assert gwet_ac1(wide, categories=["easy", "medium", "hard"]) == pytest.approx(expected)
    assert table.loc[0, "gwet_ac1"] == pytest.approx(expected)
    assert table.loc[0, "gwet_ac1"] != pytest.approx(gwet_ac1(wide))  # q = 2 would be wrong


def test_agreement_by_group_keeps_the_fields_label_set_for_interval_fields():
    wide = pd.DataFrame(
        [[1, 1], [1, 2], [2, 2], [3, 3], [3, 3]],
        index=pd.Index([10, 11, 12, 13, 14], name="item"),
        columns=["a", "b"],
        dtype=object,
    )
    groups = pd.Series({10: "A", 11: "A", 12: "A", 13: "B", 14: "B"})
    table = agreement_by_group({"score": wide}, {"score": "interval"}, groups).set_index("group")
    part = wide.loc[[10, 11, 12]].to_numpy().tolist()
    # Group A uses 1 and 2, the field 1, 2, 3: Pa = 2/3, pi = (1/2, 1/2, 0), Pe = (1/4 + 1/4)/2 = 1/4.
    assert table.loc["A", "gwet_ac1"] == pytest.approx((2 / 3 - 1 / 4) / (3 / 4))
    assert table.loc["A", "gwet_ac1"] == pytest.approx(gwet_ac1(part, categories=[1, 2, 3]))
    assert table.loc["A", "krippendorff_alpha"] == pytest.approx(krippendorff_alpha(part, level="interval"))


def test_bootstrap_ci_ignores_rows_without_any_rating():
    rng = np.random.default_rng(3)
    rated = rng.integers(0, 2, size=(40, 3)).astype(float)
    padded = np.vstack([rated, np.full((40, 3), np.nan)])
    for statistic in ("observed_agreement", gwet_ac1):
        assert bootstrap_ci(padded, statistic, n_boot=200, seed=1) == bootstrap_ci(
            rated, statistic, n_boot=200, seed=1
        )
    frame = pd.DataFrame(padded)
    assert bootstrap_ci(frame, "fleiss_kappa", n_boot=100) == bootstrap_ci(rated, "fleiss_kappa", n_boot=100)


@pytest.mark.parametrize("n_boot", [0, -3, 2.5])
def test_bootstrap_ci_refuses_a_replicate_count_that_is_not_positive(n_boot):
    for statistic in ("gwet_ac1", lambda r: 0.5):
        with pytest.raises(ValueError, match="n_boot must be a positive number"):
            bootstrap_ci([[0, 0], [1, 1], [0, 1]], statistic, n_boot=n_boot)


def test_a_percentage_is_not_taken_for_a_confidence_level():
    with pytest.raises(ValueError, match=r"ci must be a confidence level in \(0, 1\)"):
        bootstrap_ci([[0, 0], [1, 1], [0, 1]], "gwet_ac1", n_boot=10, ci=95)
    with pytest.raises(ValueError, match="ci must be"):
        wilson_interval(0.9, 10, ci=95)


def test_wilson_interval_matches_the_published_and_textbook_values():
    # docs/PROTOCOLS.md C1a: 96/100 -> [90.2, 98.4]; 286/300 -> [92.3, 97.2] at 95%.
    assert [round(100 * v, 1) for v in wilson_interval(0.96, 100)] == [90.2, 98.4]
    assert [round(100 * v, 1) for v in wilson_interval(286 / 300, 300)] == [92.3, 97.2]
    # Perfect agreement on 30 items: z^2/(n + z^2) below 1, with z = 1.959964 -> lower = 30/(30 + z^2).
    z2 = 1.959963984540054**2
    assert wilson_interval(1.0, 30) == pytest.approx((30 / (30 + z2), 1.0))
    # A 90% interval is narrower: z = 1.644854.
    low90, _ = wilson_interval(1.0, 30, ci=0.90)
    assert low90 == pytest.approx(30 / (30 + 1.6448536269514722**2))
    assert math.isnan(wilson_interval(float("nan"), 30)[0]) and math.isnan(wilson_interval(0.5, 0)[0])


def _perfect_long(n_items: int) -> pd.DataFrame:
    return pd.DataFrame(
        [(i, who, "original", "correct" if i % 4 else "incorrect") for i in range(n_items) for who in "ab"],
        columns=["item", "annotator", "field", "value"],
    )


def test_observed_agreement_interval_keeps_its_width_at_perfect_agreement():
    row = agreement_report(_perfect_long(30), {"original": "nominal"}, n_boot=200).iloc[0]
    assert row["observed_agreement"] == 1.0
    assert (row["observed_agreement_low"], row["observed_agreement_high"]) == pytest.approx(
        wilson_interval(1.0, 30)
    )
    assert row["observed_agreement_low"] < 0.9 and row["ci"] == 0.95


def test_agreement_within_one_step_has_a_wilson_interval():
    wide = pd.DataFrame([[2, 2], [3, 4], [-1, -1], [5, 5]], dtype=float)
    point, low, high = within_tolerance_ci(wide, n_boot=50)
    assert point == 1.0 and (low, high) == pytest.approx(wilson_interval(1.0, 4))


def _annotations(n_items: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        {
            "annotation_id": 2 * i + k,
            "item_id": i,
            "annotator": who,
            "payload": json.dumps({"original": "correct" if (i + k * (i % 5 == 0)) % 3 else "incorrect"}),
            "seconds_spent": 10.0,
        }
        for i in range(n_items)
        for k, who in enumerate(("ann", "bea"))
    ]
    states = pd.DataFrame(
        {
            "item_id": range(n_items),
            "dataset": "d",
            "status": "complete",
            "settled_at": 2,
            "final_answer_correct": None,
            "decision": None,
        }
    )
    return pd.DataFrame(rows), states


@pytest.mark.parametrize("ci", [0.90, 0.95])
def test_the_report_prints_the_level_its_intervals_were_computed_at(ci):
    annotations, states = _annotations(30)
    report = build_dashboard(
        annotations, states, states, {}, dataset="d", task="step_review", n_boot=100, ci=ci
    )
    label, other = ("90%", "95%") if ci == 0.90 else ("95%", "90%")
    text = report_markdown(report)
    assert f"{label} intervals" in text and f"Lead value [{label} CI]" in text
    assert other not in text
    row = report.agreement.set_index("field").loc["original"]
    n = int(row["n_pairable"])
    assert (row["observed_agreement_low"], row["observed_agreement_high"]) == pytest.approx(
        wilson_interval(row["observed_agreement"], n, ci)
    )
    assert json.loads(report_json(report))["ci"] == ci
    assert f",{ci}" in report_csv(report)
    assert "Fleiss' kappa with missing ratings" in text and "single-rated items included" in text


def test_a_tie_between_no_error_and_a_step_goes_to_the_step():
    # One annotator says "no error", one says step 2: the item belongs to "Step 3" (0-based 2).
    wide = pd.DataFrame([[-1, 2], [-1, 2], [-1, -1], [-1, -1]], dtype=float)
    table = earliest_error_by_position(wide).set_index("position")
    assert table.loc["Step 3", "n_items"] == 2
    assert table.loc["all steps correct", "n_items"] == 2
    # A tie between two steps goes to the earlier one.
    tie = earliest_error_by_position(pd.DataFrame([[1, 4], [1, 4]], dtype=float)).set_index("position")
    assert tie.loc["Step 2", "n_items"] == 2
