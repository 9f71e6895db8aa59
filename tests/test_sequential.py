"""Sequential studies: they stop at the target width or the cap, say which, and their adjusted
interval covers the simulated truth at least at the stated rate (seeded simulations)."""

from __future__ import annotations

import pytest

from qc.planning import wilson_interval
from qc.sequential import SequentialRule, coverage_by_simulation, sequential_agreement


def test_a_study_stops_by_rule_at_the_target_width_and_says_so() -> None:
    rule = SequentialRule(target=0.05, batch=20, cap=400, adjust="none")
    agreed = ([True] * 47 + [False] * 3) * 8  # 94% agreement
    result = sequential_agreement(agreed, rule)
    assert result.stopped_by == "target" and result.n_items % 20 == 0 and result.half_width <= 0.05
    earlier = result.n_items - 20  # the look before did not reach the target
    low, high = wilson_interval(sum(agreed[:earlier]) / earlier, earlier)
    assert (high - low) / 2 > 0.05
    assert "stopped by rule: the interval reached the target" in result.note()
    assert "NOT adjusted for stopping" in result.note()


def test_the_cap_stops_a_study_that_cannot_reach_the_target() -> None:
    rule = SequentialRule(target=0.02, batch=25, cap=100)
    result = sequential_agreement([True, False] * 60, rule)
    assert result.stopped_by == "cap" and result.n_items == 100 and result.looks == 4
    assert "cap of 100 items" in result.note() and "valid under this stopping rule" in result.note()
    assert rule.look_confidence == pytest.approx(1 - 0.05 / 4)


def test_a_study_short_of_its_next_batch_is_running() -> None:
    result = sequential_agreement([True] * 30, SequentialRule(target=0.01, batch=20, cap=200))
    assert result.stopped_by == "running" and result.n_items == 20 and "next batch is due" in result.note()


@pytest.mark.parametrize(("truth", "seed"), [(0.94, 0), (0.85, 1), (0.7, 2)])
def test_the_adjusted_interval_covers_the_simulated_truth_at_the_stated_rate(truth: float, seed: int) -> None:
    rule = SequentialRule(target=0.06, batch=20, cap=300, confidence=0.95)
    result = coverage_by_simulation(truth, rule, runs=400, seed=seed)
    # 95% stated; 400 runs give a standard error of about 0.011: allow 2.5 of them
    assert result.covered >= 0.95 - 2.5 * 0.011, result
    assert result.mean_items <= 300


def test_the_unadjusted_interval_is_reported_with_its_real_coverage() -> None:
    rule = SequentialRule(target=0.05, batch=10, cap=300, adjust="none")
    result = coverage_by_simulation(0.9, rule, runs=400, seed=3)
    assert result.stopped_by_target > 0.9 and 0.85 < result.covered < 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": 0.0, "batch": 10, "cap": 100}, "target half-width"),
        ({"target": 0.05, "batch": 0, "cap": 100}, "batch"),
        ({"target": 0.05, "batch": 10, "cap": 100, "adjust": "pocock"}, "adjust"),
    ],
)
def test_bad_rules_say_what_is_wrong(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SequentialRule(**kwargs)


def test_a_drawn_study_is_judged_under_the_rule_from_its_labels(demo_store) -> None:
    from services import planning
    from services.errors import InvalidInput
    from services.studies import draw_study
    from store import users
    from tests.gold_support import label_items

    lead = users.add_user(demo_store, "lead", "admin")
    for name in ("ann", "bea"):
        users.add_user(demo_store, name, "annotator")
    draw_study(demo_store, lead, dataset="prmbench-step-review", name="iaa", n_items=60, raters=2, seed=3)
    for k, name in enumerate(("ann", "bea")):
        # they disagree on the original chain of one item in ten
        label_items(
            demo_store,
            name,
            60,
            lambda item, k=k: {
                "original": "incorrect" if (k and item % 10 == 0) else "correct",
                "modification": "reasonable",
                "difficulty": "easy",
            },
        )
    field, result = planning.sequential_study(
        demo_store, lead, "iaa", target=0.09, batch=20, field="original"
    )
    assert field == "original" and result.stopped_by in ("target", "cap") and result.n_items in (20, 40, 60)
    assert "stopped by rule" in result.note() and "valid under this stopping rule" in result.note()
    running = planning.sequential_study(demo_store, lead, "iaa", target=0.01, batch=20, cap=200)[1]
    assert running.stopped_by == "running" and running.n_items == 60
    with pytest.raises(InvalidInput, match="no labels"):
        planning.sequential_study(demo_store, lead, "iaa", target=0.05, batch=20, field="nope")
