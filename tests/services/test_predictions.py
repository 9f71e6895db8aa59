"""Model predictions on a real store: import (service, command line), refusal of bad files, scores."""

from __future__ import annotations

import json
import math
import uuid
from pathlib import Path

import pandas as pd
import pytest

from app import main
from qc.model_scores import with_chosen_threshold
from services import annotate, scores
from services.access import OPERATOR
from services.errors import InvalidInput, NotAllowed, NotFound
from services.leasing import leases_of
from store import Store, users, work
from store.datasets import get_dataset

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

DATASET = "qwq-earliest-error"


def _user(store: Store, name: str, role: str) -> users.Annotator:
    users.add_user(store, name, role, None)
    user = users.get_user(store, name)
    assert user is not None
    return user


def settle(store: Store, n: int = 6) -> dict[str, int]:
    """Three annotators agree on the first n items (odd ids: no error; even: step 1): external id -> label."""
    dataset = get_dataset(store, DATASET)
    for name in ("ann", "bea", "cid"):
        who = _user(store, name, "annotator")
        for _ in range(n):
            got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
            assert got is not None
            annotate.submit(
                store,
                annotator=who,
                item_id=got.item.item_id,
                version_id=got.item.version_id,
                payload={"earliest_error": -1 if got.item.item_id % 2 else 0},
                request_id=str(uuid.uuid4()),
                seconds_spent=5.0,
            )
    rows = store.fetchall(
        "SELECT i.external_id, i.id, v.final_answer_correct FROM item_state s JOIN items i ON i.id = s.item_id "
        "JOIN item_versions v ON v.id = i.current_version_id WHERE s.status = 'consensus' ORDER BY i.id"
    )
    # "No error" on a wrong final answer is ProcessBench's discard: such an item is not scored.
    return {str(e): (-1 if i % 2 else 0) for e, i, right in rows if not (i % 2 and right is False)}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def import_models(store: Store, tmp_path: Path, gold: dict[str, int]) -> users.Annotator:
    """Three models: one right everywhere, one that flags step 1 everywhere, one scalar PRM that
    never drops below its threshold (so it finds no error anywhere)."""
    admin = _user(store, "lead", "admin")
    perfect = [{"id": e, "earliest_error": g} for e, g in gold.items()]
    alarm = [{"id": e, "earliest_error": 0} for e in gold]
    steps = {
        e: n
        for e, n in store.fetchall(
            "SELECT i.external_id, count(*) FROM items i JOIN steps st ON st.version_id = i.current_version_id "
            "AND st.role = 'solution' GROUP BY 1"
        )
        if e in gold
    }
    scalar = [{"id": e, "step_scores": [0.9] * steps[e], "threshold": 0.5} for e in gold]
    for name, rows in (("perfect", perfect), ("alarm", alarm), ("scalar", scalar)):
        scores.import_predictions(
            store, admin, write_jsonl(tmp_path / f"{name}.jsonl", rows), model=name, dataset=DATASET
        )
    return admin


def test_models_side_by_side_and_their_failure_cases(demo_store: Store, tmp_path: Path) -> None:
    gold = settle(demo_store)
    errors = sum(1 for g in gold.values() if g == 0)
    corrects = len(gold) - errors
    assert errors and corrects
    admin = import_models(demo_store, tmp_path, gold)
    report = scores.score_report(demo_store, admin, DATASET)
    assert report.models == ["alarm", "perfect", "scalar"] and report.n_kept == len(gold)
    table = report.table.set_index("model")
    assert table.loc["perfect", "f1"] == 1.0 and table.loc["perfect", "average_f1"] == 1.0
    # "alarm": every erroneous item right (step 1), every correct item wrong -> F1 0.
    assert (table.loc["alarm", "error_acc"], table.loc["alarm", "correct_acc"], table.loc["alarm", "f1"]) == (
        1,
        0,
        0,
    )
    # "scalar": no score at or below 0.5 -> no error anywhere: correct items right, erroneous ones missed.
    assert (table.loc["scalar", "error_acc"], table.loc["scalar", "correct_acc"]) == (0, 1)
    alarms = scores.failure_cases(report, "alarm")
    assert set(alarms["outcome"]) == {"false alarm"} and len(alarms) == corrects
    assert (alarms["gold_step"] == 0).all() and (alarms["predicted_step"] == 1).all()
    missed = scores.failure_cases(report, "scalar")
    assert set(missed["outcome"]) == {"missed error"} and len(missed) == errors
    assert scores.failure_cases(report, "perfect").empty
    agreement = report.by_agreement.set_index(["model", "agreement"])
    assert agreement.loc[("perfect", "3/3"), "items"] == len(gold)
    with pytest.raises(NotFound, match="No predictions of a model named 'nobody'"):
        scores.failure_cases(report, "nobody")


def test_a_file_with_a_bad_line_is_refused_whole(demo_store: Store, tmp_path: Path) -> None:
    gold = settle(demo_store, 3)
    admin = _user(demo_store, "lead", "admin")
    first = next(iter(gold))
    rows = [
        {"id": first, "earliest_error": 0},
        {"id": "no-such-item", "earliest_error": 0},
        {"id": first, "earliest_error": 1},
        {"earliest_error": 0},
        {"id": list(gold)[1], "earliest_error": -4},
        {"id": list(gold)[2], "step_confidences": [1.5]},
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InvalidInput) as raised:
        scores.import_predictions(demo_store, admin, path, model="m", dataset=DATASET)
    message = str(raised.value)
    assert "bad.jsonl: nothing imported" in message
    for part in (
        "line 2: no item 'no-such-item'",
        "line 3: item",
        "appears twice",
        "line 4: no id",
        "line 5: earliest_error -4",
    ):
        assert part in message
    assert "line 6: step_confidences has 1 values" in message
    assert demo_store.scalar("SELECT count(*) FROM predictions") == 0


def test_a_model_imported_again_is_replaced_and_only_admins_import(demo_store: Store, tmp_path: Path) -> None:
    gold = settle(demo_store, 3)
    admin = _user(demo_store, "lead", "admin")
    annotator = users.get_user(demo_store, "ann")
    assert annotator is not None
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": e, "earliest_error": 0} for e in gold])
    with pytest.raises(NotAllowed):
        scores.import_predictions(demo_store, annotator, path, model="m", dataset=DATASET)
    with pytest.raises(NotAllowed):
        scores.score_report(demo_store, annotator, DATASET)
    first = scores.import_predictions(demo_store, admin, path, model="m", dataset=DATASET)
    assert first.items == len(gold) and not first.replaced
    one = write_jsonl(tmp_path / "one.jsonl", [{"id": next(iter(gold)), "earliest_error": -1}])
    again = scores.import_predictions(demo_store, admin, one, model="m", dataset=DATASET)
    assert again.replaced and again.items == 1
    assert demo_store.scalar("SELECT count(*) FROM predictions WHERE model = 'm'") == 1
    with pytest.raises(NotFound, match="no dataset named 'nope'"):
        scores.import_predictions(demo_store, admin, one, model="m", dataset="nope")


def test_error_steps_and_scalar_scores_give_prmbench_v_scores(demo_store: Store, tmp_path: Path) -> None:
    admin = _user(demo_store, "lead", "admin")
    dataset = get_dataset(demo_store, "prmbench-step-review")
    assert dataset is not None
    # Mark three items kept, as a completed review would, and read their gold error steps.
    demo_store.execute(
        "UPDATE item_state SET status = 'complete' WHERE item_id IN "
        "(SELECT id FROM items WHERE dataset_id = ? ORDER BY id LIMIT 3)",
        [dataset.id],
    )
    rows = demo_store.fetchall(
        "SELECT i.external_id, v.error_steps FROM items i JOIN item_versions v ON v.id = i.current_version_id "
        "WHERE i.dataset_id = ? ORDER BY i.id LIMIT 3",
        [dataset.id],
    )
    # The store's positions are 0-based; a predictions file names PRMBench-V's 1-based step numbers.
    gold = {str(e): [p + 1 for p in json.loads(s)] for e, s in rows}
    assert all(gold.values())
    exact = [{"id": e, "error_steps": s} for e, s in gold.items()]
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "x.jsonl", exact), model="exact", dataset=dataset.name
    )
    report = scores.score_report(demo_store, admin, dataset.name)
    row = report.table.set_index("model").loc["exact"]
    assert (row["strict_accuracy"], row["precision"], row["recall"]) == (1.0, 1.0, 1.0)
    assert report.n_kept == 3 and math.isnan(row["css"])
    # PRMBench-V's Tables 1 and 5: per error type, then Overall over the three items
    by_type = report.prmbench_v.set_index(["model", "error_type"])
    assert (
        by_type.loc[("exact", "Overall"), "n_items"] == 3
        and by_type.loc[("exact", "Overall"), "accuracy"] == 1.0
    )
    assert by_type.drop(("exact", "Overall"))["n_items"].sum() == 3


def test_the_command_line_imports_predictions(tmp_path: Path, capsys) -> None:
    db = tmp_path / "cli.duckdb"
    assert main(["import", "demo_data/qwq_solutions_demo.jsonl", "--dataset", DATASET, "--db", str(db)]) == 0
    with Store(db) as opened:
        external = opened.scalar("SELECT external_id FROM items ORDER BY id LIMIT 1")
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": external, "earliest_error": 2}])
    capsys.readouterr()
    assert (
        main(["predictions", "import", str(path), "--model", "m1", "--dataset", DATASET, "--db", str(db)])
        == 0
    )
    assert "m1 on qwq-earliest-error: 1 predictions stored." in capsys.readouterr().out
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "nope", "earliest_error": 2}])
    assert (
        main(["predictions", "import", str(bad), "--model", "m1", "--dataset", DATASET, "--db", str(db)]) == 1
    )
    assert "line 1: no item 'nope'" in capsys.readouterr().err


def test_a_dataset_without_predictions_scores_nothing(demo_store: Store) -> None:
    admin = _user(demo_store, "lead", "admin")
    report = scores.score_report(demo_store, admin, "mathvista-quality-gate")
    assert report.models == [] and report.table.empty and report.subsets.empty and report.by_difficulty.empty


def test_confidences_give_css_ccs_and_a_reliability_diagram(demo_store: Store, tmp_path: Path) -> None:
    admin = _user(demo_store, "lead", "admin")
    dataset = get_dataset(demo_store, "prmbench-step-review")
    assert dataset is not None
    demo_store.execute(
        "UPDATE item_state SET status = 'complete' WHERE item_id IN "
        "(SELECT id FROM items WHERE dataset_id = ? ORDER BY id LIMIT 4)",
        [dataset.id],
    )
    rows = demo_store.fetchall(
        "SELECT i.external_id, v.error_steps, (SELECT count(*) FROM steps st WHERE st.version_id = v.id "
        "AND st.role = 'modified') FROM items i JOIN item_versions v ON v.id = i.current_version_id "
        "WHERE i.dataset_id = ? ORDER BY i.id LIMIT 4",
        [dataset.id],
    )
    # A judge sure of every correct step (0.9) and half-sure of every wrong one (0.4); the store's
    # error positions are 0-based.
    judged = [
        {"id": e, "step_confidences": [0.4 if n in json.loads(s) else 0.9 for n in range(k)]}
        for e, s, k in rows
    ]
    path = write_jsonl(tmp_path / "conf.jsonl", judged)
    scores.import_predictions(demo_store, admin, path, model="judge", dataset=dataset.name)
    report = scores.score_report(demo_store, admin, dataset.name)
    row = report.table.set_index("model").loc["judge"]
    types = {
        t
        for (t,) in demo_store.fetchall(
            "SELECT DISTINCT v.error_type FROM items i JOIN item_versions v ON v.id = i.current_version_id "
            "WHERE i.dataset_id = ? AND i.id IN (SELECT id FROM items WHERE dataset_id = ? ORDER BY id LIMIT 4)",
            [dataset.id, dataset.id],
        )
    }
    assert types and row["css"] == pytest.approx(0.5)  # p-bar correct 0.9 minus p-bar of each type 0.4
    bars, reliability = scores.figures(report)
    assert len(reliability.axes[0].lines) == 2  # the judge's curve and the diagonal
    assert bars.axes  # the bars of the models' scores


def test_a_scalar_prm_without_a_threshold_gets_the_f1_optimal_one(demo_store: Store, tmp_path: Path) -> None:
    gold = settle(demo_store)
    admin = _user(demo_store, "lead", "admin")
    steps = dict(
        demo_store.fetchall(
            "SELECT i.external_id, count(*) FROM items i JOIN steps st ON st.version_id = i.current_version_id "
            "AND st.role = 'solution' GROUP BY 1"
        )
    )
    # Erroneous items (gold step 1) score 0.1 on their first step; correct items 0.9 everywhere.
    rows = [
        {"id": e, "step_scores": [0.1 if g == 0 and n == 0 else 0.9 for n in range(steps[e])]}
        for e, g in gold.items()
    ]
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "s.jsonl", rows), model="prm", dataset=DATASET
    )
    row = scores.score_report(demo_store, admin, DATASET).table.set_index("model").loc["prm"]
    # The demo items have no source (no GSM8K subset): tau is chosen on all kept items, at the midpoint 0.5.
    assert row["threshold"] == pytest.approx(0.5) and row["threshold_on"] == "all kept items"
    assert row["f1"] == 1.0


def test_the_threshold_is_chosen_on_gsm8k_as_processbench_did() -> None:
    items = pd.DataFrame(
        {
            "item_id": [1, 2, 3, 4],
            "subset": ["GSM8K", "gsm8k", "math", "math"],
            "gold_earliest": [0.0, -1.0, 0.0, -1.0],
        }
    )
    predictions = pd.DataFrame(
        {
            "model": "m",
            "item_id": [1, 2, 3, 4],
            "earliest_error": [None] * 4,
            "step_scores": [[0.3, 0.9], [0.7, 0.8], [0.6], [0.95]],
            "threshold": [float("nan")] * 4,
        }
    )
    chosen = with_chosen_threshold(predictions, items)
    # On GSM8K alone the first candidate splitting 0.3 from 0.7 is 0.5 (on all items it would be 0.65).
    assert chosen["threshold"].tolist() == [0.5] * 4 and set(chosen["threshold_on"]) == {"gsm8k"}
    everywhere = with_chosen_threshold(predictions, items.assign(subset="math"))
    assert (
        everywhere["threshold"].iloc[0] == pytest.approx(0.65)
        and everywhere["threshold_on"].iloc[0] == "all kept items"
    )


def test_scores_by_human_difficulty_and_agreement_show_where_models_fail_what_humans_found_hard(
    demo_store: Store, tmp_path: Path
) -> None:
    # Earliest error: three annotators agree at once on every item but one, where a fourth settles it.
    people = [_user(demo_store, n, "annotator") for n in ("ann", "bea", "cid", "dan")]
    dataset = get_dataset(demo_store, DATASET)
    hard: int | None = None
    for who in people[:3]:
        for _ in range(4):
            got = work.next_item(demo_store, leases_of(demo_store), who, dataset, annotate.now_utc())
            assert got is not None
            hard = hard or got.item.item_id
            label = 1 if (who.name == "bea" and got.item.item_id == hard) else 0
            annotate.submit(
                demo_store,
                annotator=who,
                item_id=got.item.item_id,
                version_id=got.item.version_id,
                payload={"earliest_error": label},
                request_id=str(uuid.uuid4()),
            )
    while (
        got := work.next_item(demo_store, leases_of(demo_store), people[3], dataset, annotate.now_utc())
    ) is not None:
        annotate.submit(
            demo_store,
            annotator=people[3],
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload={"earliest_error": 0},
            request_id=str(uuid.uuid4()),
        )
        if got.item.item_id == hard:
            break
    settled = dict(
        demo_store.fetchall("SELECT item_id, settled_at FROM item_state WHERE status = 'consensus'")
    )
    assert settled[hard] == 4 and set(settled.values()) == {3, 4}
    refs = dict(
        demo_store.fetchall(
            "SELECT id, external_id FROM items WHERE id IN (SELECT item_id FROM item_state WHERE status = 'consensus')"
        )
    )
    admin = _user(demo_store, "lead", "admin")
    # The model is right where the humans agreed at once, and wrong on the item that took four.
    rows = [{"id": refs[i], "earliest_error": -1 if i == hard else 0} for i in refs]
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "m.jsonl", rows), model="m", dataset=DATASET
    )
    by = scores.score_report(demo_store, admin, DATASET).by_agreement.set_index(["model", "agreement"])
    assert by.loc[("m", "3/3"), "accuracy"] == 1.0 and by.loc[("m", "3/3"), "items"] == len(refs) - 1
    assert by.loc[("m", "3/4"), "accuracy"] == 0.0 and by.loc[("m", "3/4"), "items"] == 1


def test_scores_by_the_reviewers_difficulty(demo_store: Store, tmp_path: Path) -> None:
    from tests.gold_support import label_items

    name = "prmbench-step-review"
    _user(demo_store, "ann", "annotator")
    easy = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
    hard = {**easy, "difficulty": "hard"}
    handed = label_items(demo_store, "ann", 6, lambda item_id: easy if item_id % 2 else hard)
    admin = _user(demo_store, "lead", "admin")
    earliest = dict(
        demo_store.fetchall(
            "SELECT i.external_id, v.earliest_error FROM items i JOIN item_versions v ON v.id = i.current_version_id"
        )
    )
    # right (the stored earliest error) on easy items, a missed error on hard ones
    rows = [{"id": ref, "earliest_error": earliest[ref] if item_id % 2 else -1} for item_id, ref in handed]
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "d.jsonl", rows), model="m", dataset=name
    )
    by = scores.score_report(demo_store, admin, name).by_difficulty.set_index(["model", "difficulty"])
    n_easy = sum(1 for item_id, _ in handed if item_id % 2)
    assert by.loc[("m", "easy"), "accuracy"] == 1.0 and by.loc[("m", "easy"), "items"] == n_easy
    assert by.loc[("m", "hard"), "accuracy"] == 0.0 and by.loc[("m", "hard"), "items"] == 6 - n_easy


def test_crs_counts_only_steps_whose_perturbed_variant_passed_its_check(
    demo_store: Store, tmp_path: Path
) -> None:
    import sys

    from qc.confidence import confidence_scores
    from services import generator_settings, jobs, perturbation
    from tests.gold_support import label_items
    from tests.services.test_perturbation_check import _check

    name = "prmbench-step-review"
    _user(demo_store, "ann", "annotator")
    ((item_id, ref),) = label_items(
        demo_store,
        "ann",
        1,
        lambda _: {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    admin = _user(demo_store, "lead", "admin")
    n, wrong = demo_store.fetchone(
        "SELECT (SELECT count(*) FROM steps st WHERE st.version_id = v.id AND st.role = 'modified'), v.error_steps "
        "FROM items i JOIN item_versions v ON v.id = i.current_version_id WHERE i.id = ?",
        [item_id],
    )
    # The check dataset's first units are the first steps of the first item (the one scored here).
    fake = [sys.executable, str(Path(__file__).parents[1] / "fake_generator.py")]
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": fake})
    perturbation.create_check_dataset(demo_store, OPERATOR, name, "syn", "synonym", role="modified", limit=2)
    jobs.run_pending(demo_store)
    first = _check(demo_store, "cleo", "syn", "synonym", passes=True)
    second = _check(demo_store, "cleo", "syn", "synonym", passes=False)  # re-queued: not passed
    assert {first.meta["perturbation"]["step"], second.meta["perturbation"]["step"]} == {1, 2}
    assert first.meta["perturbation"]["source_item"] == ref
    passed = first.meta["perturbation"]["step"]

    p = [0.9] * n
    after = [0.1] * n  # the judge flips on every perturbed step but the passed one, which barely moves
    after[passed - 1] = 0.88
    row = {"id": ref, "step_confidences": p, "perturbed_confidences": after}
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "c.jsonl", [row]), model="judge", dataset=name
    )
    crs = scores.score_report(demo_store, admin, name).table.set_index("model").loc["judge", "crs"]
    gold = [0 if k in json.loads(wrong) else 1 for k in range(n)]
    expected = confidence_scores(
        p, gold, [None] * n, p_perturbed=[after[k] if k + 1 == passed else None for k in range(n)]
    )["crs"]
    everything = confidence_scores(p, gold, [None] * n, p_perturbed=after)["crs"]
    assert crs == pytest.approx(expected) and not math.isnan(crs)
    assert not math.isclose(expected, everything)  # the failed variant would have changed it

    no_pair = {"id": ref, "step_confidences": p, "perturbed_confidences": [0.5] * (n + 1)}
    with pytest.raises(InvalidInput, match="one entry per step"):
        scores.import_predictions(
            demo_store, admin, write_jsonl(tmp_path / "x.jsonl", [no_pair]), model="x", dataset=name
        )


def test_scores_by_agreement_on_a_review_split_unanimous_or_adjudicated(
    demo_store: Store, tmp_path: Path
) -> None:
    from services import adjudicate
    from store.datasets import update_settings
    from tests.gold_support import label_items

    name = "prmbench-step-review"
    update_settings(demo_store, name, {"annotators_per_item": 2})
    easy = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
    reject = {"original": "incorrect", "modification": "unreasonable"}
    for who in ("ann", "bea"):
        _user(demo_store, who, "annotator")
    first = label_items(demo_store, "ann", 3, lambda _: easy)
    # bea: the same on the first item, another difficulty on the second, a reject on the third
    second = label_items(
        demo_store,
        "bea",
        3,
        lambda i: {first[0][0]: easy, first[1][0]: {**easy, "difficulty": "hard"}}.get(i, reject),
    )
    assert [i for i, _ in second] == [i for i, _ in first]
    admin = _user(demo_store, "lead", "admin")
    adjudicate.rule(demo_store, admin, first[2][0], "keep")
    earliest = dict(
        demo_store.fetchall(
            "SELECT i.external_id, v.earliest_error FROM items i JOIN item_versions v ON v.id = i.current_version_id"
        )
    )
    # right on the unanimous item, wrong (a missed error) on the split and the adjudicated one
    rows = [
        {"id": ref, "earliest_error": earliest[ref] if k == 0 else -1} for k, (_, ref) in enumerate(first)
    ]
    scores.import_predictions(
        demo_store, admin, write_jsonl(tmp_path / "a.jsonl", rows), model="m", dataset=name
    )
    by = scores.score_report(demo_store, admin, name).by_agreement.set_index(["model", "agreement"])[
        "accuracy"
    ]
    assert by.to_dict() == {("m", "unanimous (2)"): 1.0, ("m", "split (2)"): 0.0, ("m", "adjudicated"): 0.0}
