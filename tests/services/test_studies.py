"""Agreement studies on a real store: drawn from kept items, labelled by their own raters in the normal
panel's calls, stored apart from the gate, reported from their own labels."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from qc.sampling import allocate, study_pool
from services import annotate
from services.access import OPERATOR
from services.errors import AlreadyLabelled, Conflict, NotAllowed, ServiceError
from services.exports import export
from services.leasing import leases_of
from services.reports import build_dataset_report, build_study_report
from services.studies import draw_study, export_labels
from store import Store, jobs_read, studies, users, work
from store.datasets import get_dataset, update_settings
from store.state import states_frame
from tests.gold_support import GOOD, label

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

DATASET = "prmbench-step-review"
LABEL = {"original": "incorrect", "modification": "reasonable", "difficulty": "medium"}


def _annotator(store: Store, name: str, role: str = "annotator") -> users.Annotator:
    users.add_user(store, name, role, None)
    user = users.get_user(store, name)
    assert user is not None
    return user


def _draw(store: Store, **request) -> studies.Study:
    """An admin draws the study through the service (the dashboard's path)."""
    admin = users.get_user(store, "lead") or _annotator(store, "lead", "admin")
    return draw_study(store, admin, **{"dataset": DATASET, "seed": 0, **request})


def _take_and_label(store: Store, who: users.Annotator, n: int, payload: dict | None = None) -> list[int]:
    """Take n items through next_item (the panel's call) and submit a label on each; the item ids."""
    dataset = get_dataset(store, DATASET)
    done = []
    for _ in range(n):
        got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
        assert got is not None
        assert got.state == "new" and got.my_label is None
        annotate.submit(
            store,
            annotator=who,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=payload or LABEL,
            request_id=str(uuid.uuid4()),
            seconds_spent=12.0,
            first_label=True,
        )
        done.append(got.item.item_id)
    return done


def _gate(store: Store) -> list[tuple]:
    """Every item's gate state and the whole annotation log: what a study must never change."""
    states = states_frame(store).drop(columns=["settled_at"]).astype(str)
    log = store.fetchall("SELECT id, item_id, annotator_id, payload FROM annotations ORDER BY id")
    return [tuple(r) for r in states.itertuples(index=False)] + log


def _kept(store: Store, n: int) -> set[int]:
    """ann settles n items (one annotator per item, the dataset's default): kept, in the benchmark."""
    _annotator(store, "ann")
    label(store, "ann", n, GOOD)
    dataset = get_dataset(store, DATASET)
    return set(study_pool(studies.study_candidates(store, dataset.id))["item_id"])


def test_a_study_never_changes_an_items_gate_state_consensus_or_export(
    demo_store: Store, tmp_path: Path
) -> None:
    kept = _kept(demo_store, 30)
    assert len(kept) == 30
    bea, cid, dan = (_annotator(demo_store, n) for n in ("bea", "cid", "dan"))
    before = _gate(demo_store)
    export(demo_store, "prmbench", tmp_path / "before.jsonl", dataset=DATASET, manifest=False)
    report_before = build_dataset_report(demo_store, DATASET, n_boot=50).agreement.to_json()

    study = _draw(demo_store, name="PRMBench-V IAA", n_items=20, raters=2, rater_names=["bea", "cid", "dan"])
    assert study.kept_only and study.own_labels and study.n_items == 20
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    assert items <= kept
    assert _gate(demo_store) == before  # drawing wrote nothing of the gate

    # Each rater meets exactly their own study items first, in the panel's next_item.
    assigned = studies.assigned_raters(demo_store, study.id)
    assert all(len(names) == 2 and "ann" not in names for names in assigned.values())
    for who in (bea, cid, dan):
        mine = {i for i, names in assigned.items() if who.name in names}
        got = _take_and_label(demo_store, who, len(mine), {**LABEL, "original": "correct"})
        assert set(got) == mine
    assert _gate(demo_store) == before  # nor did labelling it: state, consensus, log
    export(demo_store, "prmbench", tmp_path / "after.jsonl", dataset=DATASET, manifest=False)
    assert (tmp_path / "before.jsonl").read_bytes() == (tmp_path / "after.jsonl").read_bytes()
    assert build_dataset_report(demo_store, DATASET, n_boot=50).agreement.to_json() == report_before
    assert demo_store.scalar("SELECT count(*) FROM study_labels") == 40
    assert export_labels(demo_store, OPERATOR, "PRMBench-V IAA", tmp_path / "labels.csv") == 40
    written = pd.read_csv(tmp_path / "labels.csv")
    assert set(written["annotator"]) == {"bea", "cid", "dan"} and set(written["label_original"]) == {
        "correct"
    }

    listed = studies.list_studies(demo_store).set_index("study")
    assert (
        listed.loc["PRMBench-V IAA", "progress"] == 1.0
        and listed.loc["PRMBench-V IAA", "created_by"] == "lead"
    )
    report, progress = build_study_report(demo_store, "PRMBench-V IAA", n_boot=200)
    assert progress["items_done"] == 20 and "20 of 20 items" in progress["note"]
    assert set(report.agreement["n_items"]) == {20} and set(report.agreement["n_pairable"]) == {20}
    assert report.annotators == ["bea", "cid", "dan"]  # the study's raters only: never ann's gate labels
    assert report.agreement.set_index("field").loc["original", "observed_agreement"] == 1.0


def test_study_items_come_before_regular_work_and_only_to_their_raters(demo_store: Store) -> None:
    _kept(demo_store, 10)
    bea, cid, eve = (_annotator(demo_store, n) for n in ("bea", "cid", "eve"))
    study = _draw(demo_store, name="s", n_items=6, raters=2, rater_names=["bea", "cid"])
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    assert set(_take_and_label(demo_store, bea, 6, GOOD)) == items  # before any open item
    got = _take_and_label(demo_store, bea, 2, GOOD)  # then the gate's open items, as usual
    assert not set(got) & items
    assert not set(_take_and_label(demo_store, eve, 3, GOOD)) & items  # not a rater: never a study item
    assert set(_take_and_label(demo_store, cid, 6, GOOD)) == items


def test_a_study_label_is_stored_once_and_refused_where_it_does_not_belong(demo_store: Store) -> None:
    _kept(demo_store, 5)
    bea, cid, eve = (_annotator(demo_store, n) for n in ("bea", "cid", "eve"))
    _draw(demo_store, name="s", n_items=2, raters=2, rater_names=["bea", "cid"])
    dataset = get_dataset(demo_store, DATASET)
    got = work.next_item(demo_store, leases_of(demo_store), bea, dataset, annotate.now_utc())
    submit = {
        "item_id": got.item.item_id,
        "version_id": got.item.version_id,
        "payload": GOOD,
        "request_id": "r-1",
        "seconds_spent": 3.0,
    }
    first = annotate.submit(demo_store, annotator=bea, first_label=True, **submit)
    again = annotate.submit(demo_store, annotator=bea, first_label=True, **submit)
    assert again.duplicate and again.annotation_id == first.annotation_id
    assert demo_store.scalar("SELECT count(*) FROM study_labels") == 1
    with pytest.raises(Conflict, match="already used"):
        annotate.submit(demo_store, annotator=cid, **submit)
    with pytest.raises(AlreadyLabelled):
        annotate.submit(demo_store, annotator=bea, first_label=True, **{**submit, "request_id": "r-2"})
    update_settings(demo_store, DATASET, {"allow_corrections": 0})
    with pytest.raises(NotAllowed, match="does not allow corrections"):
        annotate.submit(demo_store, annotator=bea, **{**submit, "request_id": "r-3"})
    with pytest.raises(NotAllowed, match="not given to you"):  # eve rates nothing: a settled item is closed
        annotate.submit(demo_store, annotator=eve, **{**submit, "request_id": "r-4"})
    assert demo_store.scalar("SELECT count(*) FROM study_labels") == 1
    assert annotate.saved_attempt(demo_store, bea, "r-1") and not annotate.saved_attempt(
        demo_store, cid, "r-1"
    )


def test_a_pilot_study_over_open_items_leaves_their_targets_and_gate_alone(demo_store: Store) -> None:
    bea, cid = _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    before = _gate(demo_store)
    study = _draw(demo_store, name="pilot", n_items=4, raters=2, kept_only=False, rater_names=["bea", "cid"])
    assert not study.kept_only
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    assert set(_take_and_label(demo_store, bea, 4)) == items
    assert _gate(demo_store) == before  # open items stay open with their target, no label counted
    # a study rater never gets the same item in the gate
    assert not set(_take_and_label(demo_store, bea, 5)) & items
    assert (
        demo_store.scalar("SELECT max(target) FROM item_state WHERE dataset_id = ?", [study.dataset_id]) == 1
    )
    # while cid holds a study item, it keeps its one place in the gate for another annotator
    dataset = get_dataset(demo_store, DATASET)
    held = annotate.next_item(demo_store, cid, dataset)
    assert held.item.item_id in items
    ann = _annotator(demo_store, "ann")
    taken = annotate.jump_to(demo_store, ann, dataset, held.item.external_id)
    assert taken.state == "new"  # not "already has all the annotators it needs"


def test_the_study_draws_every_error_type_in_proportion(demo_store: Store) -> None:
    for name in ("bea", "cid", "dan"):
        _annotator(demo_store, name)
    study = _draw(demo_store, name="by type", n_items=30, raters=3, seed=1, kept_only=False)
    drawn = studies.study_items(demo_store, study.id)["stratum"].value_counts().to_dict()
    sizes = studies.study_candidates(demo_store, study.dataset_id)["error_type"].value_counts().to_dict()
    assert drawn == {k: v for k, v in allocate(sizes, 30, 1).items() if v}
    assert len(drawn) == 9  # all nine PRMBench error types


def test_kept_only_is_the_default_and_an_item_seen_by_every_rater_is_not_drawn(demo_store: Store) -> None:
    bea, cid = _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    with pytest.raises(ServiceError, match="0 kept items left to draw, not 4"):
        _draw(demo_store, name="iaa", n_items=4, raters=2)
    label(demo_store, "bea", 5, GOOD)  # bea settled 5 items: she has seen them
    with pytest.raises(ServiceError, match=r"0 kept items left to draw, not 1 \(5 more have fewer than 2"):
        _draw(demo_store, name="iaa", n_items=1, raters=2, rater_names=["bea", "cid"])
    _annotator(demo_store, "dan")
    study = _draw(demo_store, name="iaa", n_items=5, raters=2, rater_names=["bea", "cid", "dan"])
    assert set(map(tuple, studies.assigned_raters(demo_store, study.id).values())) == {("cid", "dan")}
    assert cid and bea


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": " "}, "name of 1-100"),
        ({"raters": 1}, "between 2 and"),
        ({"n_items": 395}, "394 items a study can draw"),
        ({"n_items": 0}, "at least 1 item"),
        ({"stratify_by": "difficulty"}, "cannot stratify by"),
        ({"dataset": "nope"}, "no dataset named"),
        ({"rater_names": ["bea", "zed"]}, "no annotator named 'zed'"),
        ({"rater_names": ["bea", "lead"]}, "lead is an admin: a study's raters are annotators"),
        ({"raters": 3}, "needs 3 raters per item but its rater list has 2"),
    ],
)
def test_a_bad_study_request_is_refused_and_stores_nothing(
    demo_store: Store, changes: dict, message: str
) -> None:
    _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    request = {"name": "s", "n_items": 10, "raters": 2, "kept_only": False, **changes}
    with pytest.raises(ServiceError, match=message):
        _draw(demo_store, **request)
    for table in ("studies", "study_items", "study_assignments", "study_raters", "study_rules"):
        assert demo_store.scalar(f"SELECT count(*) FROM {table}") == 0
    assert demo_store.scalar("SELECT max(target) FROM item_state WHERE dataset_id = 1") == 1


def test_a_study_name_is_used_once(demo_store: Store) -> None:
    _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    _draw(demo_store, name="s", n_items=5, raters=2, kept_only=False)
    with pytest.raises(ServiceError, match="already exists"):
        _draw(demo_store, name="s", n_items=5, raters=2, kept_only=False)


def test_only_an_admin_draws_a_study(demo_store: Store) -> None:
    judge = _annotator(demo_store, "judge", "adjudicator")
    with pytest.raises(NotAllowed, match="only an admin"):
        draw_study(demo_store, judge, dataset=DATASET, name="s", n_items=5, raters=2)
    assert demo_store.scalar("SELECT count(*) FROM studies") == 0


def test_a_drawn_item_sent_away_meanwhile_refuses_the_study(demo_store: Store) -> None:
    dataset = get_dataset(demo_store, DATASET)
    drawn = studies.study_candidates(demo_store, dataset.id).head(3).assign(stratum="all")
    plan = {int(i): [1, 2] for i in drawn["item_id"]}
    drawn.loc[2, "item_id"] = drawn.loc[1, "item_id"]
    request = {"name": "s", "dataset_name": DATASET, "raters": 2, "rater_ids": [1, 2], "assignments": plan}
    with pytest.raises(studies.StudyError, match="twice"):
        studies.create_study(demo_store, drawn=drawn, **request)
    drawn.loc[2, "item_id"] = 10**9
    with pytest.raises(studies.StudyError, match="draw again"):
        studies.create_study(demo_store, drawn=drawn, **request)
    assert demo_store.scalar("SELECT count(*) FROM studies") == 0


def test_gating_counts_are_zeros_before_anything_is_rejected(demo_store: Store) -> None:
    dataset = get_dataset(demo_store, DATASET)
    counts = jobs_read.gating_counts(demo_store, dataset.id)
    assert counts["rejected items"] == 0 and counts["regeneration jobs"] == 0
    assert counts["jobs queued"] == 0 and counts["new item versions"] == 0


def test_dashboard_handlers_give_annotators_nothing_and_reviewers_everything(demo_store: Store) -> None:
    """Gradio exposes every event over HTTP: the handler itself must refuse, not only the page."""
    import gradio as gr
    import pandas as pd

    from ui.context import AppContext
    from ui.kit.downloads import find_download
    from ui.panels import dashboard
    from ui.panels import studies as studies_section

    ctx = AppContext(demo_store)
    _annotator(demo_store, "judge", "adjudicator")
    _kept(demo_store, 8)
    bea, cid = _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    _draw(demo_store, name="s", n_items=6, raters=2, rater_names=["bea", "cid"])
    _take_and_label(demo_store, bea, 6)
    _take_and_label(demo_store, cid, 6)

    refused = dashboard.on_show(ctx, DATASET, 200, SimpleNamespace(username="ann"))
    assert set(refused) <= set(dashboard.SHOW)
    assert not any(isinstance(v, pd.DataFrame) and len(v) for v in refused.values())
    assert not any(isinstance(v, str) and ("0." in v or ".md" in v) for v in refused.values())
    assert refused["refusal"]["visible"] is True and refused["content"]["visible"] is False
    with pytest.raises(gr.Error):
        studies_section.on_study_report(ctx, "s", 200, SimpleNamespace(username="ann"))
    with pytest.raises(gr.Error):
        studies_section.on_draw_study(
            ctx,
            DATASET,
            "t",
            5,
            "error_type",
            2,
            0,
            "",
            True,
            False,
            0.05,
            20,
            SimpleNamespace(username="judge"),
        )

    shown = dashboard.on_show(ctx, DATASET, 200, SimpleNamespace(username="judge"))
    token = re.search(r'href="/stepgate/download/([^"]+)"', shown["dl_md"]).group(1)
    report, _, owner = find_download(ctx, token)  # the link the judge got is bound to the judge
    assert "Observed agreement" in shown["agreement"] and owner == "judge"
    assert report.read_text(encoding="utf-8").startswith("# QC report")
    empty = dashboard.on_show(ctx, "mathvista-quality-gate", 200, SimpleNamespace(username="judge"))
    assert "No field has two labels" in empty["agreement"]
    summary = studies_section.on_study_report(ctx, "s", 200, SimpleNamespace(username="judge"))[0]
    assert "6 of 6 items" in summary and "complete" in summary


def test_the_command_line_draws_lists_and_reports_a_sequential_study(tmp_path: Path) -> None:

    from tests.browser_support import app_py, cli

    db = tmp_path / "cli.duckdb"
    with Store(db) as store:
        from services.demo import populate_demo

        populate_demo(store)
        for name in ("ann", "bea", "cid"):
            _annotator(store, name)
        label(store, "ann", 12, GOOD)
    drawn = cli(
        "studies",
        "draw",
        DATASET,
        "seq",
        "--items",
        "9",
        "--target",
        "0.1",
        "--batch",
        "3",
        "--rater-list",
        "bea,cid",
        db=db,
    ).stdout
    assert (
        "drew seq: 3 kept items of prmbench-step-review, 2 raters each; sequential on modification" in drawn
    )
    assert drawn.count("bea, cid") == 3
    listed = cli("studies", "list", db=db).stdout
    assert "seq" in listed and "True" in listed  # kept only
    status = cli("studies", "status", "seq", db=db).stdout
    assert "batch 1: 0/3" in status and "running" in status
    written = cli("studies", "labels", "seq", "--out", str(tmp_path / "seq.jsonl"), db=db).stdout
    assert "wrote 0 study label(s) of seq" in written and (tmp_path / "seq.jsonl").read_text() == ""
    wrong = app_py("studies", "draw", DATASET, "x", "--items", "50", "--db", str(db))
    # the 3 items bea and cid rate already have only ann left who has not seen them
    assert wrong.returncode == 1 and "9 kept items left to draw, not 50 (3 more have fewer" in wrong.stderr
    with Store(db) as store:
        assert store.scalar("SELECT count(*) FROM studies") == 1


def test_a_skipped_study_item_stays_the_raters_and_comes_back_after_other_work(demo_store: Store) -> None:
    _kept(demo_store, 6)
    bea, _ = _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    study = _draw(demo_store, name="s", n_items=3, raters=2, rater_names=["bea", "cid"])
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    dataset = get_dataset(demo_store, DATASET)
    first = annotate.next_item(demo_store, bea, dataset)
    assert first.item.item_id in items
    after = annotate.skip_item(demo_store, bea, dataset, first.item.item_id)
    assert after.item.item_id in items - {first.item.item_id}  # her other study items first
    annotate.submit(
        demo_store,
        annotator=bea,
        item_id=after.item.item_id,
        version_id=after.item.version_id,
        payload=GOOD,
        request_id="second",
    )
    last = _take_and_label(demo_store, bea, 1, GOOD)
    assert {after.item.item_id, *last} == items - {first.item.item_id}
    assert not set(_take_and_label(demo_store, bea, 1, GOOD)) & items  # then the gate's open items
    assert (
        demo_store.scalar("SELECT count(*) FROM assignments WHERE status = 'skipped'") == 0
    )  # a study skip is no gate skip
    again = annotate.jump_to(demo_store, bea, dataset, first.item.external_id)  # still hers to rate
    assert again.state == "new"
    annotate.submit(
        demo_store,
        annotator=bea,
        item_id=again.item.item_id,
        version_id=again.item.version_id,
        payload=GOOD,
        request_id="late",
        first_label=True,
    )
    assert demo_store.scalar("SELECT count(*) FROM study_labels WHERE annotator_id = ?", [bea.id]) == 3


def test_a_study_drawn_before_own_labels_keeps_reading_the_annotation_log(demo_store: Store) -> None:
    """Migration 10 marks older studies own_labels = false: their items were reopened in the gate and
    their labels are in the annotation log; the report and the progress still find them there."""
    update_settings(demo_store, DATASET, {"annotators_per_item": 2})
    for name in ("ann", "bea"):
        _annotator(demo_store, name)
        label(demo_store, name, 4, GOOD)
    with demo_store.writing() as tx:
        tx.execute("INSERT INTO studies (dataset_id, name, raters, seed) VALUES (1, 'old', 2, 0)")
        tx.execute(
            "INSERT INTO study_items (study_id, item_id, stratum) SELECT 1, item_id, 'all' FROM "
            "(SELECT DISTINCT item_id FROM annotations) t"
        )
    old = studies.get_study(demo_store, "old")
    assert not old.own_labels and old.n_items == 4
    assert studies.list_studies(demo_store).loc[0, "items_done"] == 4
    report, progress = build_study_report(demo_store, "old", n_boot=50)
    assert report.annotators == ["ann", "bea"] and progress["progress"] == 1.0


def test_a_processbench_study_leaves_consensus_and_table_2_as_they_were(demo_store: Store) -> None:
    """Earliest error: three annotators reached consensus on the gate's items (ProcessBench's rule); a
    study's raters disagree with it on every item, and no consensus, escalation or Table 2 row moves."""
    from services import presets
    from tests.services.test_predictions import settle

    settle(demo_store, 8)
    lead = _annotator(demo_store, "lead", "admin")
    dan, eve = _annotator(demo_store, "dan"), _annotator(demo_store, "eve")
    before = _gate(demo_store)
    table2 = presets.build_preset(demo_store, lead, "processbench_table2", dataset="qwq-earliest-error")
    study = draw_study(
        demo_store,
        lead,
        dataset="qwq-earliest-error",
        name="pb",
        n_items=4,
        raters=2,
        stratify_by=None,
        rater_names=["dan", "eve"],
    )
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    consensus = set(demo_store.fetchall("SELECT item_id FROM item_state WHERE status = 'consensus'"))
    assert {(i,) for i in items} <= consensus
    dataset = get_dataset(demo_store, "qwq-earliest-error")
    for who, step in ((dan, 2), (eve, 3)):
        for _ in range(4):
            got = work.next_item(demo_store, leases_of(demo_store), who, dataset, annotate.now_utc())
            assert got.item.item_id in items
            annotate.submit(
                demo_store,
                annotator=who,
                item_id=got.item.item_id,
                version_id=got.item.version_id,
                payload={"earliest_error": step},
                request_id=uuid.uuid4().hex,
            )
    assert _gate(demo_store) == before
    again = presets.build_preset(demo_store, lead, "processbench_table2", dataset="qwq-earliest-error")
    assert again.table.to_json() == table2.table.to_json()
    report, _ = build_study_report(demo_store, "pb", n_boot=50)
    assert report.agreement.set_index("field").loc["earliest_error", "observed_agreement"] == 0.0


def test_the_dashboard_draws_a_sequential_study_and_shows_its_rule_and_batches(demo_store: Store) -> None:
    from ui.context import AppContext
    from ui.panels import studies as studies_section

    ctx = AppContext(demo_store)
    _kept(demo_store, 12)
    _annotator(demo_store, "lead", "admin"), _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    lead = SimpleNamespace(username="lead")
    refused = studies_section.on_draw_study(
        ctx, DATASET, "seq", 9, "none", 2, 0, ["bea", "cid"], True, True, 0.7, 3, lead
    )
    assert "Study not drawn" in refused[0] and "target half-width" in refused[0]
    message, table, *_ = studies_section.on_draw_study(
        ctx, DATASET, "seq", 9, "none", 2, 0, ["bea", "cid"], True, True, 0.1, 3, lead
    )
    assert (
        "(its first batch): 3 kept items" in message
        and "batches of 3 until the interval half-width is 0.1" in message
    )
    row = table.set_index("study").loc["seq"]
    assert row["stopping rule"] == "±0.1 in batches of 3, cap 9" and row["stopped by"] == "running"
    assert row["labels"] == "0/6" and row["drawn from"] == "kept items"
    _take_and_label(demo_store, users.get_user(demo_store, "bea"), 3, GOOD)
    _take_and_label(demo_store, users.get_user(demo_store, "cid"), 3, GOOD)  # batch 1 done: batch 2 drawn
    summary, _, table, *_ = studies_section.on_study_report(ctx, "seq", 200, lead)
    shown = summary.replace("\\", "")  # Markdown escapes, as the page shows it
    assert "batch 1: 3/3, batch 2: 0/3" in shown and "batch 2 waits for 3 item(s)" in shown
    assert table.set_index("study").loc["seq", "done per batch"] == "3/3, 0/3"


def test_a_database_with_a_study_of_schema_9_upgrades_and_keeps_it(tmp_path: Path) -> None:
    import duckdb

    from store.migrations import migrate

    path = tmp_path / "v9.duckdb"
    con = duckdb.connect(str(path))

    class _Raw:  # migrate() on a plain connection, as an older release ran it
        def execute(self, sql, params=None):
            return con.execute(sql, params or [])

        def scalar(self, sql, params=None):
            return con.execute(sql, params or []).fetchone()[0]

    assert migrate(_Raw(), upto=9)[-1] == 9  # type: ignore[arg-type]
    con.execute("INSERT INTO datasets (name, task) VALUES ('d', 'step_review')")
    con.execute("INSERT INTO studies (dataset_id, name, raters) VALUES (1, 'old', 2)")
    con.execute("INSERT INTO study_items (study_id, item_id, stratum) VALUES (1, 5, 'x'), (1, 7, 'y')")
    con.close()
    with Store(path) as store:
        old = studies.get_study(store, "old")
        assert old.n_items == 2 and not old.own_labels and not old.kept_only and old.batches == 1
        assert old.rule is None and store.fetchall("SELECT DISTINCT batch FROM study_items") == [(1,)]


def test_previous_walks_back_through_study_items_and_a_correction_stays_in_the_study(
    demo_store: Store,
) -> None:
    _kept(demo_store, 6)
    bea, _cid = (_annotator(demo_store, n) for n in ("bea", "cid"))
    _draw(demo_store, name="s", n_items=2, raters=2, rater_names=["bea", "cid"])
    dataset = get_dataset(demo_store, DATASET)
    study_items = _take_and_label(demo_store, bea, 2, LABEL)  # her study items come first
    gate_item = _take_and_label(demo_store, bea, 1, GOOD)[0]
    back = work.previous_item(
        demo_store, leases_of(demo_store), bea, dataset, None
    )  # from a fresh item: her last one
    assert back is not None and back.item.item_id == gate_item and back.my_label == GOOD
    back = work.previous_item(demo_store, leases_of(demo_store), bea, dataset, gate_item)
    assert back is not None and back.item.item_id == study_items[1] and back.state == "done"
    assert back.my_label == LABEL  # her own study label, shown to correct
    back = work.previous_item(demo_store, leases_of(demo_store), bea, dataset, study_items[1])
    assert back is not None and back.item.item_id == study_items[0]
    assert work.previous_item(demo_store, leases_of(demo_store), bea, dataset, study_items[0]) is None
    forward = work.next_in_history(
        demo_store, leases_of(demo_store), bea, dataset, study_items[0], annotate.now_utc()
    )
    assert forward is not None and forward.item.item_id == study_items[1]
    gate = _gate(demo_store)
    corrected = {**LABEL, "difficulty": "hard"}
    annotate.submit(
        demo_store,
        annotator=bea,
        item_id=study_items[0],
        version_id=back.item.version_id,
        payload=corrected,
        request_id="fix-1",
        seconds_spent=4.0,
    )
    assert _gate(demo_store) == gate  # the correction went to the study, not the gate
    again = work.previous_item(demo_store, leases_of(demo_store), bea, dataset, study_items[1])
    assert again is not None and again.my_label == corrected
