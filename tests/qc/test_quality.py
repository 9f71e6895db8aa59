"""Annotator quality vs consensus, outlier rules, earliest-error tolerance and position, the dashboard tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from qc import quality
from qc.dashboard import build_dashboard, consensus_states, stored_consensus
from qc.report import ratings_matrix, within_tolerance_agreement

C, W = "correct", "incorrect"


def _long(labels: dict[str, list], field: str = "original") -> pd.DataFrame:
    rows = [
        {"item": n + 1, "annotator": who, "field": field, "value": v}
        for who, values in labels.items()
        for n, v in enumerate(values)
        if v is not None
    ]
    return pd.DataFrame(rows)


def _seconds(per_annotator: dict[str, float], n_items: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"annotator": a, "item": i, "seconds": s}
            for a, s in per_annotator.items()
            for i in range(1, n_items + 1)
        ]
    )


# a and b always agree; c agrees with them on items 1, 4 and 6 only.
TEAM = {"a": [C, C, C, C, W, W], "b": [C, C, C, C, W, W], "c": [C, W, W, C, C, W]}


def test_agreement_with_consensus_leaves_the_annotators_own_label_out() -> None:
    wides = quality.wide_by_field(_long(TEAM), ["original"])
    table = quality.annotator_quality(wides, _seconds({"a": 30, "b": 40, "c": 30}, 6), min_items=3)
    rows = table.set_index("annotator")
    # For a, the others (b, c) agree on items 1, 4, 6 only: 3 items compared, all equal to a's label.
    assert (
        rows.loc["a", "compared"] == 3 and rows.loc["a", "agreement"] == 1.0 and rows.loc["a", "kappa"] == 1.0
    )
    # For c, a and b always agree: 6 items compared, c matches 3; c's marginals equal chance -> kappa 0.
    assert rows.loc["c", "compared"] == 6 and rows.loc["c", "agreement"] == 0.5
    assert rows.loc["c", "kappa"] == pytest.approx(0.0)
    assert rows.loc["c", "items"] == 6 and rows.loc["b", "median_seconds"] == 40


def test_far_from_consensus_flags_the_annotator_below_the_team_median() -> None:
    wides = quality.wide_by_field(_long(TEAM), ["original"])
    table = quality.annotator_quality(wides, _seconds({"a": 30, "b": 40, "c": 30}, 6), min_items=3).set_index(
        "annotator"
    )
    assert table.loc["c", "flags"] == "far from consensus"
    assert table.loc["a", "flags"] == "" and table.loc["b", "flags"] == ""


def test_too_fast_is_below_half_the_team_median_and_needs_enough_items() -> None:
    wides = quality.wide_by_field(_long(TEAM), ["original"])
    seconds = _seconds({"a": 30, "b": 40, "c": 5}, 6)  # pooled team median 30 s: the line is 15 s
    table = quality.annotator_quality(wides, seconds, min_items=3).set_index("annotator")
    assert "too fast" in table.loc["c", "flags"]
    assert "too fast" not in table.loc["a", "flags"]
    # The same speed over fewer timed items than min_items raises nothing.
    few = quality.annotator_quality(wides, seconds, min_items=7).set_index("annotator")
    assert few.loc["c", "flags"] == ""


def test_two_annotators_who_disagree_are_never_called_far_from_consensus() -> None:
    wides = quality.wide_by_field(_long({"a": [C] * 8, "b": [W] * 8}), ["original"])
    table = quality.annotator_quality(wides, _seconds({"a": 10, "b": 10}, 8), min_items=3)
    assert (table["agreement"] == 0.0).all()
    assert (table["flags"] == "").all()


def test_the_stored_earliest_error_consensus_is_the_reference_where_it_exists() -> None:
    long = _long({"a": [2, 3, -1, 0], "b": [2, 3, 1, 0], "c": [2, 4, -1, 5]}, field="earliest_error")
    stored = pd.Series({1: 2, 2: 3, 4: 0})  # item 3 has no stored consensus
    wides = quality.wide_by_field(long, ["earliest_error"])
    table = quality.annotator_quality(wides, _seconds({"a": 9, "b": 9, "c": 9}, 4), stored).set_index(
        "annotator"
    )
    assert table.loc["a", "compared"] == 3 and table.loc["a", "agreement"] == 1.0
    assert table.loc["c", "agreement"] == pytest.approx(1 / 3)
    # Item 3 has no stored consensus: b is compared with a and c, who both said -1 (the others tie for a, c).
    assert table.loc["b", "compared"] == 4 and table.loc["b", "agreement"] == 0.75


def test_settled_and_discarded_items_are_counted_apart_per_annotator() -> None:
    long = _long({"a": [2, 3, -1, 0], "b": [2, 3, 1, None], "c": [2, 4, -1, 5]}, field="earliest_error")
    wides = quality.wide_by_field(long, ["earliest_error"])
    status = pd.Series({1: "consensus", 2: "discarded", 3: "open", 4: "consensus"})
    table = quality.annotator_quality(
        wides, _seconds({"a": 9, "b": 9, "c": 9}, 4), None, item_status=status
    ).set_index("annotator")
    assert (table.loc["a", "items"], table.loc["a", "settled"], table.loc["a", "discarded"]) == (4, 2, 1)
    assert (table.loc["b", "items"], table.loc["b", "settled"], table.loc["b", "discarded"]) == (3, 1, 1)
    plain = quality.annotator_quality(wides, _seconds({"a": 9, "b": 9, "c": 9}, 4))
    assert plain["settled"].eq(0).all() and plain["discarded"].eq(0).all()  # no states given: none counted


def test_stored_consensus_reads_the_label_of_each_decision() -> None:
    states = pd.DataFrame(
        {
            "item_id": [1, 2, 3],
            "decision": [
                json.dumps({"label": 4, "labels": 3}),
                json.dumps({"label": None, "labels": 2}),
                None,
            ],
        }
    )
    assert stored_consensus(states).to_dict() == {1: 4}


def test_within_one_step_has_the_reports_point_and_a_seeded_interval() -> None:
    wide = pd.DataFrame([[2, 3], [-1, 0], [4, 4], [1, 5], [6, 7], [np.nan, 2]], columns=["a", "b"])
    point, low, high = quality.within_tolerance_ci(wide, 1, n_boot=500, seed=1)
    # pairs within a step: yes, no (-1 agrees only with -1), yes, no, yes -> 3/5; the last item has one label
    assert point == pytest.approx(0.6) == pytest.approx(within_tolerance_agreement(wide, 1))
    assert 0.0 <= low <= point <= high <= 1.0
    assert quality.within_tolerance_ci(wide, 1, n_boot=500, seed=1) == (point, low, high)


def test_agreement_by_position_groups_items_by_their_most_chosen_step() -> None:
    wide = pd.DataFrame(
        [[-1, -1], [0, 0], [0, 1], [5, 9], [3, np.nan], [9, 9]], columns=["a", "b"], dtype=float
    )
    table = quality.earliest_error_by_position(wide).set_index("position")
    assert table.loc["all steps correct", "n_items"] == 1
    assert table.loc["Step 1", "n_items"] == 2  # [0, 0] and the tie [0, 1] (a tie goes to the earlier step)
    assert table.loc["Step 1", "observed_agreement"] == 0.5 and table.loc["Step 1", "within_1_step"] == 1.0
    assert table.loc["Steps 6-8", "n_items"] == 1 and table.loc["Step 9 or later", "n_items"] == 1
    assert table["n_items"].sum() == 5  # the single-label item is not behind any figure
    assert math.isnan(table.loc["all steps correct", "observed_agreement"])  # one item is too few


def test_skewed_prevalence_makes_observed_agreement_lead() -> None:
    labels = {"a": [C] * 18 + [C, W], "b": [C] * 18 + [W, C]}
    table = quality.agreement_table(_long(labels), {"original": "nominal"}, n_boot=200).set_index("field")
    assert bool(table.loc["original", "kappa_paradox"]) is True
    assert table.loc["original", "lead"] == "observed_agreement"
    assert table.loc["original", "observed_agreement"] == pytest.approx(0.9)
    assert table.loc["original", "n_pairable"] == 20


def test_lead_coefficient_follows_the_level() -> None:
    assert quality.lead_coefficient("ordinal", False, 2, 3) == "krippendorff_alpha"
    assert quality.lead_coefficient("nominal", False, 2, 2) == "mean_cohen_kappa"
    assert quality.lead_coefficient("nominal", False, 3, 5) == "fleiss_kappa"
    assert quality.lead_coefficient("ordinal", True, 2, 3) == "observed_agreement"


def test_agreement_by_error_type_counts_the_items_behind_each_figure() -> None:
    long = _long(TEAM)
    groups = pd.Series({1: "circular", 2: "circular", 3: "circular", 4: "deception", 5: "deception", 6: None})
    table = quality.agreement_by_group(
        quality.wide_by_field(long, ["original"]), {"original": "nominal"}, groups
    )
    rows = table.set_index("group")
    assert rows.loc["circular", "n_items"] == 3 and rows.loc["deception", "n_items"] == 2
    assert rows.loc["(none)", "n_items"] == 1 and math.isnan(rows.loc["(none)", "observed_agreement"])
    # circular: items 1-3, pairs agreeing 3/3, 1/3, 1/3
    assert rows.loc["circular", "observed_agreement"] == pytest.approx(5 / 9)


def test_consensus_states_show_every_state_with_zeros() -> None:
    states = pd.DataFrame(
        {
            "dataset": ["qwq"] * 5 + ["prm"] * 2,
            "status": ["consensus", "consensus", "discarded", "open", "consensus", "complete", "open"],
            "settled_at": [3, 4, 5, None, 3, 1, None],
            "final_answer_correct": [True, False, True, None, True, None, None],
        }
    )
    by_dataset = consensus_states(states, "dataset").set_index("dataset")
    assert by_dataset.loc["qwq", ["3/3", "3/4", "3/5", "discarded", "open"]].tolist() == [2, 1, 0, 1, 1]
    assert by_dataset.loc["prm", "complete"] == 1 and by_dataset.loc["prm", "rejected"] == 0
    assert by_dataset.loc["qwq", "settled"] == 4
    by_answer = consensus_states(states, "final_answer_correct", labels={True: "right", False: "wrong"})
    assert set(by_answer["final_answer_correct"]) == {"right", "wrong", "unknown"}


def test_build_dashboard_on_no_labels_gives_empty_tables_not_errors() -> None:
    empty = pd.DataFrame(columns=["annotation_id", "item_id", "annotator", "payload", "seconds_spent"])
    states = pd.DataFrame(
        {
            "item_id": [1],
            "dataset": ["d"],
            "status": ["open"],
            "settled_at": [None],
            "final_answer_correct": [None],
            "error_type": ["x"],
            "decision": [None],
        }
    )
    report = build_dashboard(
        empty, states, states, {"rejected items": 0}, dataset="d", task="step_review", n_boot=50
    )
    assert report.agreement.empty and report.quality.empty and report.pairwise == {}
    assert report.paradox_fields == [] and report.states_by_dataset["open"].tolist() == [1]


def test_wide_by_field_is_the_reports_ratings_matrix() -> None:
    long = pd.concat(
        [
            _long(TEAM),
            _long({"a": [2, None, 5], "c": [2, 3, None]}, field="earliest_error"),
            pd.DataFrame([{"item": 1, "annotator": "a", "field": "original", "value": W}]),
        ]
    )  # a correction
    wides = quality.wide_by_field(long, ["original", "earliest_error", "difficulty"])
    assert set(wides) == {"original", "earliest_error"}
    for field, wide in wides.items():
        expected = ratings_matrix(long, field)
        assert wide.index.tolist() == expected.index.tolist()
        assert wide.columns.tolist() == expected.columns.tolist()
        assert wide.isna().equals(expected.isna())
        assert (wide.fillna("-").astype(str) == expected.fillna("-").astype(str)).all().all()
    assert wides["original"].loc[1, "a"] == W


def test_a_fast_clicker_who_did_many_items_is_caught_item_by_item() -> None:
    """a and b take 30 s on items 1-10; c takes 5 s on those and on 40 more of 6 steps that only c did.
    Pooled, c's 5 s is the team's median and nothing looks fast; item by item c is at a sixth of the others."""
    rows = [
        {"annotator": who, "item": i, "seconds": 30.0, "n_steps": 6} for who in "ab" for i in range(1, 11)
    ]
    rows += [{"annotator": "c", "item": i, "seconds": 5.0, "n_steps": 6} for i in range(1, 51)]
    seconds = pd.DataFrame(rows)
    assert seconds["seconds"].median() == 5.0  # the pooled median the old rule compared with
    speed = quality.relative_speed(seconds)
    assert speed["c"] == (pytest.approx(5 / 30), 50)  # items 11-50 compared by length: 6 steps at 5 s/step
    assert speed["a"][0] == pytest.approx(30 / 17.5)  # the others on items 1-10: b at 30, c at 5
    wides = {"f": pd.DataFrame({w: [0] * 50 for w in "abc"}, index=range(1, 51))}
    table = quality.annotator_quality(wides, seconds, min_items=5).set_index("annotator")
    assert table.loc["c", "flags"] == "too fast" and table.loc["a", "flags"] == ""


def test_the_gates_agreement_is_on_its_verdict_never_on_the_free_text_reason() -> None:
    from qc.quality import label_fields

    assert label_fields("quality_gate", pd.DataFrame()) == {"verdict": "nominal"}
    assert label_fields("perturbation_check", pd.DataFrame()) == {"verdict": "nominal"}
