"""Agreement studies on a real store: drawing, targets, hand-out to K raters, progress, the study report."""

from __future__ import annotations

import re
import uuid
from types import SimpleNamespace

import pytest

from qc.sampling import allocate
from services import annotate
from services.errors import NotAllowed, ServiceError
from services.reports import build_study_report
from services.studies import draw_study
from store import Store, jobs_read, studies, users, work
from store.datasets import get_dataset
from store.state import get_item_state

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


def _label_next(store: Store, who: users.Annotator, n: int) -> list[int]:
    """Take n items through next_item and submit a label on each; returns the item ids."""
    dataset = get_dataset(store, DATASET)
    done = []
    for _ in range(n):
        got = work.next_item(store, who, dataset, annotate.now_utc())
        assert got is not None
        annotate.submit(
            store,
            annotator=who,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=LABEL,
            request_id=str(uuid.uuid4()),
            seconds_spent=12.0,
        )
        done.append(got.item.item_id)
    return done


def test_a_study_of_20_items_for_2_raters_is_handed_out_and_reported(demo_store: Store) -> None:
    study = _draw(demo_store, name="PRMBench-V IAA", n_items=20, raters=2, stratify_by="error_type", seed=4)
    items = set(studies.study_items(demo_store, study.id)["item_id"])
    assert study.n_items == 20 and len(items) == 20
    assert all(get_item_state(demo_store, i).target == 2 for i in items)
    others = demo_store.fetchall(
        "SELECT DISTINCT target FROM item_state WHERE dataset_id = ? AND item_id NOT IN "
        "(SELECT item_id FROM study_items)",
        [study.dataset_id],
    )
    assert others == [(1,)]

    ann, bea, cid = (_annotator(demo_store, n) for n in ("ann", "bea", "cid"))
    assert set(_label_next(demo_store, ann, 20)) == items  # study items are handed out first
    listed = studies.list_studies(demo_store).set_index("study")
    assert listed.loc["PRMBench-V IAA", "items_done"] == 0
    assert set(_label_next(demo_store, bea, 20)) == items
    # Every study item has its two raters: a third annotator gets only items outside the study.
    assert not set(_label_next(demo_store, cid, 5)) & items
    labels = demo_store.fetchall("SELECT item_id, count(*) FROM annotations GROUP BY item_id")
    assert all(n == 2 for i, n in labels if i in items)

    listed = studies.list_studies(demo_store).set_index("study")
    assert listed.loc["PRMBench-V IAA", "progress"] == 1.0
    assert listed.loc["PRMBench-V IAA", "created_by"] == "lead"
    report, progress = build_study_report(demo_store, "PRMBench-V IAA", n_boot=200)
    assert progress["items_done"] == 20
    assert set(report.agreement["n_items"]) == {20} and set(report.agreement["n_pairable"]) == {20}
    assert report.annotators == ["ann", "bea"]  # cid's labels are outside the study
    assert report.agreement.set_index("field").loc["original", "observed_agreement"] == 1.0


def test_the_study_draws_every_error_type_in_proportion(demo_store: Store) -> None:
    study = _draw(demo_store, name="by type", n_items=30, raters=3, seed=1)
    drawn = studies.study_items(demo_store, study.id)["stratum"].value_counts().to_dict()
    sizes = studies.study_candidates(demo_store, study.dataset_id)["error_type"].value_counts().to_dict()
    assert drawn == {k: v for k, v in allocate(sizes, 30, 1).items() if v}
    assert len(drawn) == 9  # all nine PRMBench error types


def test_an_item_already_labelled_enough_keeps_its_state(demo_store: Store) -> None:
    ann = _annotator(demo_store, "ann")
    first = _label_next(demo_store, ann, 1)[0]
    assert get_item_state(demo_store, first).status == "rejected"  # LABEL says the original is incorrect
    study = _draw(demo_store, name="all", n_items=394, raters=2)
    state = get_item_state(demo_store, first)
    assert state.status == "open" and state.target == 2  # one label of two: it reopens for a second rater
    assert studies.list_studies(demo_store).loc[0, "n_items"] == 394
    assert study.stratify_by == "error_type"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": " "}, "name of 1-100"),
        ({"raters": 1}, "between 2 and"),
        ({"n_items": 395}, "394 items"),
        ({"n_items": 0}, "at least 1 item"),
        ({"stratify_by": "difficulty"}, "cannot stratify by"),
        ({"dataset": "nope"}, "no dataset named"),
    ],
)
def test_a_bad_study_request_is_refused_and_stores_nothing(
    demo_store: Store, changes: dict, message: str
) -> None:
    request = {"name": "s", "n_items": 10, "raters": 2, **changes}
    with pytest.raises(ServiceError, match=message):
        _draw(demo_store, **request)
    assert demo_store.scalar("SELECT count(*) FROM studies") == 0
    assert demo_store.scalar("SELECT count(*) FROM study_items") == 0
    assert demo_store.scalar("SELECT max(target) FROM item_state WHERE dataset_id = 1") == 1


def test_a_study_name_is_used_once(demo_store: Store) -> None:
    _draw(demo_store, name="s", n_items=5, raters=2)
    with pytest.raises(ServiceError, match="already exists"):
        _draw(demo_store, name="s", n_items=5, raters=2)


def test_only_an_admin_draws_a_study(demo_store: Store) -> None:
    judge = _annotator(demo_store, "judge", "adjudicator")
    with pytest.raises(NotAllowed, match="only an admin"):
        draw_study(demo_store, judge, dataset=DATASET, name="s", n_items=5, raters=2)
    assert demo_store.scalar("SELECT count(*) FROM studies") == 0


def test_a_drawn_item_sent_away_meanwhile_refuses_the_study(demo_store: Store) -> None:
    dataset = get_dataset(demo_store, DATASET)
    drawn = studies.study_candidates(demo_store, dataset.id).head(3).assign(stratum="all")
    drawn.loc[2, "item_id"] = drawn.loc[1, "item_id"]
    with pytest.raises(studies.StudyError, match="twice"):
        studies.create_study(demo_store, name="s", dataset_name=DATASET, raters=2, drawn=drawn)
    drawn.loc[2, "item_id"] = 10**9
    with pytest.raises(studies.StudyError, match="draw again"):
        studies.create_study(demo_store, name="s", dataset_name=DATASET, raters=2, drawn=drawn)
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

    ctx = AppContext(demo_store)
    _annotator(demo_store, "judge", "adjudicator")
    ann, bea = _annotator(demo_store, "ann"), _annotator(demo_store, "bea")
    _draw(demo_store, name="s", n_items=6, raters=2)
    _label_next(demo_store, ann, 6)
    _label_next(demo_store, bea, 6)

    refused = dashboard.on_show(ctx, DATASET, 200, SimpleNamespace(username="ann"))
    assert set(refused) <= set(dashboard.SHOW)
    assert not any(isinstance(v, pd.DataFrame) and len(v) for v in refused.values())
    assert not any(isinstance(v, str) and ("0." in v or ".md" in v) for v in refused.values())
    assert refused["refusal"]["visible"] is True and refused["content"]["visible"] is False
    with pytest.raises(gr.Error):
        dashboard.on_study_report(ctx, "s", 200, SimpleNamespace(username="ann"))
    with pytest.raises(gr.Error):
        dashboard.on_draw_study(ctx, DATASET, "t", 5, "error_type", 2, 0, SimpleNamespace(username="judge"))

    shown = dashboard.on_show(ctx, DATASET, 200, SimpleNamespace(username="judge"))
    token = re.search(r'href="/stepgate/download/([^"]+)"', shown["dl_md"]).group(1)
    report, _, owner = find_download(ctx, token)  # the link the judge got is bound to the judge
    assert "Observed agreement" in shown["agreement"] and owner == "judge"
    assert report.read_text(encoding="utf-8").startswith("# QC report")
    empty = dashboard.on_show(ctx, "mathvista-quality-gate", 200, SimpleNamespace(username="judge"))
    assert "No field has two labels" in empty["agreement"]
    summary = dashboard.on_study_report(ctx, "s", 200, SimpleNamespace(username="judge"))[0]
    assert "6 of 6 items" in summary and "complete" in summary
