"""Sequential studies: they stop at the target width or the cap, say which, and their adjusted
interval covers the simulated truth at least at the stated rate (seeded simulations)."""

from __future__ import annotations

import pytest

from qc.planning import wilson_interval
from qc.sequential import SequentialRule, coverage_by_simulation, sequential_agreement
from services.leasing import leases_of


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
    from tests.gold_support import GOOD, label, label_items

    lead = users.add_user(demo_store, "lead", "admin")
    for name in ("ann", "bea", "cid"):
        users.add_user(demo_store, name, "annotator")
    label(demo_store, "ann", 70, GOOD)  # the gate keeps 70 items
    draw_study(
        demo_store,
        lead,
        dataset="prmbench-step-review",
        name="iaa",
        n_items=60,
        raters=2,
        seed=3,
        rater_names=["bea", "cid"],
    )
    for k, name in enumerate(("bea", "cid")):
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


def _rate_all_pending(store, names, payload_for) -> int:
    """Each rater labels every study item the panel hands them, until none is pending: labels given."""
    import uuid

    from services import annotate
    from store import studies, users, work
    from store.datasets import get_dataset

    dataset = get_dataset(store, "prmbench-step-review")
    given = 0
    while True:
        before = given
        for name in names:
            who = users.get_user(store, name)
            # what is theirs as drawn now; a batch their labels let be drawn is met by the next round
            mine = {
                i
                for s in studies.list_studies(store)["study"]
                for i, raters in studies.assigned_raters(store, studies.get_study(store, s).id).items()
                if name in raters
            }
            labelled = {
                r[0]
                for r in store.fetchall("SELECT item_id FROM study_labels WHERE annotator_id = ?", [who.id])
            }
            while mine - labelled:
                got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
                assert got is not None and got.item.item_id in mine - labelled  # study items come first
                annotate.submit(
                    store,
                    annotator=who,
                    item_id=got.item.item_id,
                    version_id=got.item.version_id,
                    payload=payload_for(name, got.item.item_id),
                    request_id=uuid.uuid4().hex,
                    seconds_spent=4.0,
                )
                labelled.add(got.item.item_id)
                given += 1
        if given == before:
            return given


def _simulated_team(item_id: int, name: str, agreement: float) -> dict:
    """bea always finds the modification reasonable; cid agrees with her on a seeded share of items."""
    import hashlib

    draw = int.from_bytes(hashlib.sha256(f"team:{item_id}".encode()).digest()[:8], "big") / 2**64
    reasonable = name == "bea" or draw < agreement
    return {
        "original": "correct",
        "modification": "reasonable" if reasonable else "unreasonable",
        "difficulty": "easy",
    }


@pytest.mark.slow
def test_a_sequential_study_draws_batches_and_stops_at_the_target_width(demo_store) -> None:
    from services import studies as study_service
    from services.reports import build_study_report
    from store import studies, users
    from store.state import states_frame
    from tests.gold_support import GOOD, label

    lead = users.add_user(demo_store, "lead", "admin")
    for name in ("ann", "bea", "cid"):
        users.add_user(demo_store, name, "annotator")
    label(demo_store, "ann", 220, GOOD)  # the gate keeps 220 items
    gate = states_frame(demo_store).drop(columns=["settled_at"]).to_json()
    rule = study_service.Sequential(target=0.08, batch=20)
    study = study_service.draw_study(
        demo_store,
        lead,
        dataset="prmbench-step-review",
        name="seq",
        n_items=200,
        raters=2,
        rater_names=["bea", "cid"],
        sequential=rule,
        seed=5,
    )
    assert study.n_items == 20 and study.rule.field == "modification" and study.rule.cap == 200
    _rate_all_pending(demo_store, ["bea", "cid"], lambda name, item: _simulated_team(item, name, 0.9))

    done = studies.get_study(demo_store, "seq")
    status = study_service.status(demo_store, done)
    result = status.result
    assert done.rule.stopped_by == "target" and result.stopped_by == "target"
    assert done.batches > 1 and done.n_items == 20 * done.batches < 200
    assert list(status.batches["n_items"]) == [20] * done.batches
    assert list(status.batches["items_done"]) == [20] * done.batches
    assert result.half_width <= 0.08 and result.n_items == done.n_items
    # the look before did not reach the target: it stopped at the first batch that did
    agreed = study_service.outcomes(demo_store, done, "modification")[: done.n_items - 20]
    low, high = wilson_interval(sum(agreed) / len(agreed), len(agreed), result.rule.look_confidence)
    assert (high - low) / 2 > 0.08
    assert "stopped by rule: the interval reached the target half-width 0.08" in status.note
    assert "valid under this stopping rule" in status.note and "Bonferroni" in status.note
    assert f"batch {done.batches}: 20/20" in status.note
    tables, progress = build_study_report(demo_store, "seq", n_boot=50)
    assert progress["stopped_by"] == "target" and "stopped by rule" in progress["note"]
    from exports.report import report_markdown

    assert "stopped by rule: the interval reached the target" in report_markdown(
        tables
    )  # the downloaded report
    assert states_frame(demo_store).drop(columns=["settled_at"]).to_json() == gate  # the gate never moved
    assert study_service.advance(demo_store, done.id) is None  # stopped: nothing more is drawn


def test_a_sequential_study_that_runs_out_of_items_says_so(demo_store) -> None:
    from services import studies as study_service
    from store import studies, users
    from tests.gold_support import GOOD, label

    lead = users.add_user(demo_store, "lead", "admin")
    for name in ("ann", "bea", "cid"):
        users.add_user(demo_store, name, "annotator")
    label(demo_store, "ann", 30, GOOD)
    study_service.draw_study(
        demo_store,
        lead,
        dataset="prmbench-step-review",
        name="short",
        n_items=100,
        raters=2,
        sequential=study_service.Sequential(target=0.01, batch=20),
        rater_names=["bea", "cid"],
    )
    _rate_all_pending(demo_store, ["bea", "cid"], lambda name, item: _simulated_team(item, name, 0.8))
    done = studies.get_study(demo_store, "short")
    assert done.rule.stopped_by == "pool" and done.n_items == 20
    assert "no more items to draw after 20" in study_service.status(demo_store, done).note


def test_a_bad_stopping_rule_is_refused_before_anything_is_drawn(demo_store) -> None:
    from services import studies as study_service
    from services.errors import InvalidInput
    from store import users

    lead = users.add_user(demo_store, "lead", "admin")
    for name in ("bea", "cid"):
        users.add_user(demo_store, name, "annotator")
    for rule, message in [
        (study_service.Sequential(target=0.6, batch=20), "target half-width"),
        (study_service.Sequential(target=0.05, batch=500), "batch"),
        (study_service.Sequential(target=0.05, batch=20, field="nope"), "cannot stop on field 'nope'"),
    ]:
        with pytest.raises(InvalidInput, match=message):
            study_service.draw_study(
                demo_store,
                lead,
                dataset="prmbench-step-review",
                name="x",
                n_items=100,
                raters=2,
                kept_only=False,
                sequential=rule,
            )
    assert demo_store.scalar("SELECT count(*) FROM studies") == 0
