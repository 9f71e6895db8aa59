"""Gold items: marked by admins, handed out as a share of each queue, scored, kept out of agreement."""

from __future__ import annotations

import json
import uuid

import pandas as pd
import pytest

from qc.gold import AlertRule, answer_correct, calibration_table
from services import annotate
from services import gold as gold_service
from services.errors import InvalidInput, NotAllowed
from services.leasing import leases_of
from store import Store, users, work
from store import gold as gold_store
from store.annotations import annotations_frame
from store.datasets import DatasetError, get_dataset, update_settings
from store.state import get_item_state
from tests.gold_support import DATASET, GOOD, WRONG, label_items

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _work(store: Store, who, n: int, payload_for) -> list[int]:
    """``who`` takes and labels ``n`` items; the ids they were handed, in order."""
    return [item_id for item_id, _ in label_items(store, who.name, n, payload_for)]


@pytest.fixture
def team(demo_store: Store):
    lead = users.add_user(demo_store, "lead", "admin")
    ann = users.add_user(demo_store, "ann", "annotator")
    first = _work(demo_store, ann, 8, lambda _: GOOD)  # 1 annotator per item: each settles
    refs = [demo_store.scalar("SELECT external_id FROM items WHERE id = ?", [i]) for i in first]
    outcome = gold_service.mark_items(demo_store, lead, DATASET, refs)
    assert outcome.marked == refs and outcome.skipped == []
    update_settings(demo_store, DATASET, {"gold_percent": 40, "gold_alert_min_items": 5})
    return demo_store, lead, set(first)


def test_gold_label_is_the_settled_items_accepted_label(team) -> None:
    store, _, gold_ids = team
    dataset = get_dataset(store, DATASET)
    marked = gold_store.gold_items(store, dataset.id)
    assert {g.item_id for g in marked} == gold_ids
    assert all(g.label == GOOD and g.source == "consensus" and g.marked_by == "lead" for g in marked)


def test_an_annotator_answering_gold_wrongly_is_flagged_and_a_careful_one_is_not(team) -> None:
    store, lead, gold_ids = team
    bad = users.add_user(store, "bad", "annotator")
    good = users.add_user(store, "good", "annotator")
    states = {i: get_item_state(store, i) for i in gold_ids}
    handed_bad = _work(store, bad, 30, lambda _: WRONG)
    handed_good = _work(store, good, 30, lambda _: GOOD)
    assert len(set(handed_bad) & gold_ids) >= 5 and len(set(handed_good) & gold_ids) >= 5
    assert len(set(handed_bad)) == 30  # never the same item twice

    result = gold_service.calibration(store, lead, DATASET)
    rows = result.table.set_index("annotator")
    assert rows.loc["bad", "flagged"] and rows.loc["bad", "accuracy"] == 0.0
    assert not rows.loc["good", "flagged"] and rows.loc["good", "accuracy"] == 1.0
    assert rows.loc["good", "lower"] < 1.0 == rows.loc["good", "upper"]  # Wilson: n answers cannot prove 100%
    assert [line.split(" ")[0] for line in result.alerts()] == ["bad"]
    assert {"consensus_agreement", "dawid_skene_accuracy", "median_seconds_all"} <= set(result.table.columns)
    assert gold_service.admin_alerts(store, lead) == result.alerts()
    assert result.figure("bad") is not None
    # answers on gold items are not votes: the gold items' states did not move
    assert {i: get_item_state(store, i) for i in gold_ids} == states


def test_gold_answers_stay_out_of_agreement_unless_included(team) -> None:
    store, _, gold_ids = team
    bad = users.add_user(store, "bad", "annotator")
    _work(store, bad, 20, lambda _: WRONG)
    dataset = get_dataset(store, DATASET)
    log = annotations_frame(store, dataset.id)
    kept = gold_service.for_agreement(store, dataset, log)
    dropped = log[~log["annotation_id"].isin(kept["annotation_id"])]
    assert len(dropped) > 0 and set(dropped["item_id"]) <= gold_ids and set(dropped["annotator"]) == {"bad"}
    included = update_settings(store, DATASET, {"gold_in_agreement": 1})
    assert len(gold_service.for_agreement(store, included, log)) == len(log)


def test_no_gold_is_handed_out_while_the_share_is_zero(team) -> None:
    store, _, gold_ids = team
    update_settings(store, DATASET, {"gold_percent": 0})
    other = users.add_user(store, "other", "annotator")
    assert not set(_work(store, other, 25, lambda _: GOOD)) & gold_ids


def test_own_gold_accuracy_only_where_allowed_and_late(team) -> None:
    store, _, _ = team
    bad = users.add_user(store, "bad", "annotator")
    _work(store, bad, 30, lambda _: WRONG)
    assert gold_service.my_gold_accuracy(store, bad, DATASET) is None
    update_settings(store, DATASET, {"gold_feedback": 1})
    text = gold_service.my_gold_accuracy(store, bad, DATASET)
    assert text is not None and "right" in text and "last 10 labels are not counted" in text
    assert json.dumps(GOOD) not in text


def test_marking_is_for_admins_and_says_what_it_skipped(team) -> None:
    store, lead, _ = team
    ann = users.get_user(store, "ann")
    with pytest.raises(NotAllowed):
        gold_service.mark_items(store, ann, DATASET, ["x"])
    open_ref = store.scalar(
        "SELECT i.external_id FROM items i JOIN item_state s ON s.item_id = i.id "
        "JOIN datasets d ON d.id = i.dataset_id WHERE d.name = ? AND s.status = 'open' LIMIT 1",
        [DATASET],
    )
    outcome = gold_service.mark_items(store, lead, DATASET, [open_ref, "no-such-item"])
    assert outcome.marked == [] and len(outcome.skipped) == 2
    assert "no accepted label yet" in outcome.summary() and "no such item" in outcome.summary()
    with pytest.raises(InvalidInput, match="JSON object"):
        gold_service.mark_items(store, lead, DATASET, [open_ref], label="[1]")
    manual = gold_service.mark_items(store, lead, DATASET, [open_ref], label='{"original": "correct"}')
    assert manual.marked == [open_ref]
    with pytest.raises(DatasetError, match="from 0 to 100"):
        update_settings(store, DATASET, {"gold_percent": 101})


def test_answers_are_scored_field_by_field() -> None:
    assert answer_correct({"earliest_error": 3, "note": "x"}, {"earliest_error": 3})
    assert not answer_correct({"earliest_error": 2}, '{"earliest_error": 3}')
    assert not answer_correct({}, {})

    answers = pd.DataFrame(
        {
            "annotator": ["a"] * 12,
            "payload": [{"x": 1}] * 6 + [{"x": 0}] * 6,
            "gold_label": [{"x": 1}] * 12,
            "seconds_spent": [3.0] * 12,
        }
    )
    row = calibration_table(answers, AlertRule(threshold=0.7, min_items=5, window=6)).iloc[0]
    assert row["accuracy"] == 0.5 and row["recent_accuracy"] == 0.0 and row["flagged"]
    few = calibration_table(answers.head(8), AlertRule(threshold=0.9, min_items=10, window=20)).iloc[0]
    assert not few["flagged"]  # 8 answers are too few to say


def test_exports_say_which_items_were_gold_but_never_to_an_annotator(team, tmp_path) -> None:
    from services.exports import export

    store, _, gold_ids = team
    bad = users.add_user(store, "bad", "annotator")
    _work(store, bad, 20, lambda _: WRONG)
    log = export(store, "log-jsonl", tmp_path / "log.jsonl", dataset=DATASET)
    rows = [json.loads(line) for line in log.path.read_text().splitlines()]
    answers = [r for r in rows if r["gold_answer"]]
    assert (
        answers
        and {r["item_id"] for r in answers} <= gold_ids
        and {r["annotator"] for r in answers} == {"bad"}
    )
    manifest = json.loads(log.manifest.read_text())
    assert len(manifest["gold_items"]) == len(gold_ids)
    items = export(store, "items-jsonl", tmp_path / "items.jsonl", dataset=DATASET)
    flagged = [json.loads(line) for line in items.path.read_text().splitlines() if json.loads(line)["gold"]]
    assert len(flagged) == len(gold_ids)
    own = export(store, "log-jsonl", tmp_path / "own.jsonl", dataset=DATASET, annotator="bad")
    text = own.path.read_text() + own.manifest.read_text()
    assert "gold" not in text


def test_the_share_decides_and_gold_never_outlasts_other_work(team) -> None:
    store, _, gold_ids = team
    update_settings(store, DATASET, {"gold_percent": 100})
    eager = users.add_user(store, "eager", "annotator")
    assert set(_work(store, eager, len(gold_ids), lambda _: GOOD)) == gold_ids  # every claim gold, none twice
    assert not set(_work(store, eager, 5, lambda _: GOOD)) & gold_ids  # then no gold is left for them
    update_settings(store, DATASET, {"gold_percent": 1})
    late = users.add_user(store, "late", "annotator")
    dataset = get_dataset(store, DATASET)
    handed = []
    while (got := work.next_item(store, leases_of(store), late, dataset, annotate.now_utc())) is not None:
        handed.append(got.item.item_id)
        annotate.submit(
            store,
            annotator=late,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=GOOD,
            request_id=uuid.uuid4().hex,
        )
    assert len(set(handed) & gold_ids) < len(gold_ids)  # gold was left when the other work ran out...
    assert len(handed) == len(set(handed))  # ...and none was handed out after it


def test_calibration_shows_agreement_with_consensus_and_time_per_item(team) -> None:
    store, lead, gold_ids = team
    update_settings(store, DATASET, {"annotators_per_item": 3, "gold_percent": 0})
    people = {name: users.add_user(store, name, "annotator") for name in ("xa", "yb", "zc")}
    payloads = {"xa": GOOD, "yb": GOOD, "zc": WRONG}
    handed = {name: _work(store, who, 6, lambda _, n=name: payloads[n]) for name, who in people.items()}
    assert handed["xa"] == handed["yb"] == handed["zc"] and not set(handed["xa"]) & gold_ids
    rows = gold_service.calibration(store, lead, DATASET).table.set_index("annotator")
    # two of three agree on every item: they match the consensus on every field, the third on none
    assert rows.loc["xa", "consensus_agreement"] == rows.loc["yb", "consensus_agreement"] == 1.0
    assert rows.loc["zc", "consensus_agreement"] == 0.0
    assert rows.loc["xa", "median_seconds_all"] == 5.0  # every label took 5 s (tests.gold_support)
    assert rows.loc["zc", "dawid_skene_accuracy"] < rows.loc["xa", "dawid_skene_accuracy"]


def test_an_adjudicated_item_is_gold_with_the_label_of_the_side_the_ruling_took(demo_store: Store) -> None:
    """A ruling stores the word (keep); the gold label is the label of those it sided with."""
    from services import adjudicate

    lead = users.add_user(demo_store, "lead", "admin")
    update_settings(demo_store, DATASET, {"annotators_per_item": 2})
    first, second = (users.add_user(demo_store, n, "annotator") for n in ("ann", "bea"))
    item = _work(demo_store, first, 1, lambda _: GOOD)[0]
    assert _work(demo_store, second, 1, lambda _: WRONG) == [item]
    assert get_item_state(demo_store, item).status == "disputed"
    assert adjudicate.rule(demo_store, lead, item, "keep") == "complete"
    ref = demo_store.scalar("SELECT external_id FROM items WHERE id = ?", [item])
    assert gold_service.mark_items(demo_store, lead, DATASET, [ref]).marked == [ref]
    (gold,) = gold_store.gold_items(demo_store, get_dataset(demo_store, DATASET).id)
    # the ruling kept the item: its gold label is the keeping side's label, which an answer can match
    assert gold.source == "adjudicated" and gold.label == GOOD
    assert answer_correct(GOOD, gold.label) and not answer_correct(WRONG, gold.label)


def test_a_finished_studys_items_its_raters_agreed_on_become_gold_and_say_so(demo_store: Store) -> None:
    from services import studies

    lead = users.add_user(demo_store, "lead", "admin")
    raters = [users.add_user(demo_store, name, "annotator") for name in ("ann", "bea")]
    studies.draw_study(
        demo_store,
        lead,
        dataset=DATASET,
        name="pilot",
        n_items=4,
        raters=2,
        stratify_by=None,
        seed=1,
        kept_only=False,
        rater_names=["ann", "bea"],
    )
    before = gold_service.mark_study(demo_store, lead, "pilot")
    assert before.marked == [] and all("0 of the study's 2 raters" in s for s in before.skipped)
    for rater in raters:  # study items are handed out first
        _work(demo_store, rater, 4, lambda _: GOOD)
    outcome = gold_service.mark_study(demo_store, lead, "pilot")
    assert len(outcome.marked) == 4 and outcome.skipped == []
    marked = gold_store.gold_items(demo_store, get_dataset(demo_store, DATASET).id)
    assert {g.source for g in marked} == {"study"} and all(g.label == GOOD for g in marked)


def test_a_study_item_its_raters_disagreed_on_does_not_become_gold(demo_store: Store) -> None:
    from services import studies

    lead = users.add_user(demo_store, "lead", "admin")
    ann, bea = (users.add_user(demo_store, name, "annotator") for name in ("ann", "bea"))
    studies.draw_study(
        demo_store,
        lead,
        dataset=DATASET,
        name="split",
        n_items=3,
        raters=2,
        stratify_by=None,
        seed=2,
        kept_only=False,
        rater_names=["ann", "bea"],
    )
    _work(demo_store, ann, 3, lambda _: GOOD)
    _work(demo_store, bea, 3, lambda _: WRONG)
    outcome = gold_service.mark_study(demo_store, lead, "split")
    assert outcome.marked == [] and len(outcome.skipped) == 3
    assert all("disagreed" in why for why in outcome.skipped)
    assert gold_store.gold_items(demo_store, get_dataset(demo_store, DATASET).id) == []


def test_the_dashboard_counts_no_answer_on_a_gold_item_unless_the_admin_includes_them(team) -> None:
    from services.reports import build_dataset_report

    store, _, gold_ids = team
    bad = users.add_user(store, "bad", "annotator")
    handed = _work(store, bad, 20, lambda _: WRONG)
    answers = len(set(handed) & gold_ids)
    assert answers > 0
    total = len(annotations_frame(store, get_dataset(store, DATASET).id))
    assert build_dataset_report(store, DATASET, n_boot=50).n_labels == total - answers
    update_settings(store, DATASET, {"gold_in_agreement": 1})
    assert build_dataset_report(store, DATASET, n_boot=50).n_labels == total
