"""Browse on a real DuckDB file: SQL pages and filters, an item's lineage and labels, Figure 7's counts,
links that reopen a view, the panel's handlers, and the role rule on every one of them."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from importers.records import ItemRecord
from services import annotate, browse
from services.browse import BrowseFilter
from services.errors import InvalidInput, NotAllowed, NotFound
from services.imports import import_file
from store import Store
from store.datasets import get_dataset
from store.items import get_item
from store.users import add_user
from store.versions import add_version
from tests.conftest import PRMBENCH_FILE
from ui.context import AppContext
from ui.panels import browse as panel

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

LABEL = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
NO_FILTER = ("", "", "", "", "", None, "", "", "id", "")


@pytest.fixture
def prm(store: Store) -> Store:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    for name, role in (("adj", "adjudicator"), ("boss", "admin"), ("ann", "annotator"), ("bea", "annotator")):
        add_user(store, name, role)
    ds = get_dataset(store, "prm")
    assert ds is not None
    for name in ("ann", "bea"):
        user = store_user(store, name)
        work = annotate.next_item(store, user, ds)
        assert work is not None
        annotate.submit(
            store,
            annotator=user,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload=LABEL,
            request_id=f"{name}-1",
            seconds_spent=42.0,
        )
    old = get_item(store, 1)
    assert old is not None
    with store.writing() as tx:
        add_version(
            tx,
            1,
            ItemRecord(
                external_id=old.external_id,
                question=old.question + " Edited.",
                steps=dict(old.steps),
                error_steps=old.error_steps,
                error_type=old.error_type,
            ),
            "edited",
        )
    return store


def store_user(store: Store, name: str):
    from store.users import get_user

    user = get_user(store, name)
    assert user is not None
    return user


def test_pages_of_25_filtered_by_error_type_text_and_position(prm: Store) -> None:
    adj = store_user(prm, "adj")
    everything = browse.search(prm, adj, BrowseFilter())
    assert everything.total == 394 and len(everything.rows) == 25 and everything.pages == 16
    last = browse.search(prm, adj, BrowseFilter(), page=15)
    assert len(last.rows) == 394 - 15 * 25
    circular = browse.search(prm, adj, BrowseFilter(error_type="circular"))
    assert circular.total and set(circular.rows["error_type"]) == {"circular"}
    pencil = browse.search(prm, adj, BrowseFilter(text="jumbo eraser", error_position=5))
    assert "prm_test_p1_0:confidence" in set(pencil.rows["external_id"])
    assert all("5" in s.split(", ") for s in pencil.rows["error_steps"])
    by_ann = browse.search(prm, adj, BrowseFilter(annotator="ann"))
    assert by_ann.total == 1
    sorted_rows = browse.search(prm, adj, BrowseFilter(sort="error type")).rows
    assert list(sorted_rows["error_type"]) == sorted(sorted_rows["error_type"])
    literal = browse.search(prm, adj, BrowseFilter(text="100%_"))
    assert literal.total == 0  # % and _ are text, not wildcards


def test_an_item_shows_its_lineage_and_every_label_with_time(prm: Store) -> None:
    detail = browse.open_item(prm, store_user(prm, "boss"), 1)
    assert [(v["version"], v["parent"], v["reason"]) for v in detail.lineage] == [
        (1, None, "imported"),
        (2, 1, "edited"),
    ]
    assert detail.item.version == 2 and detail.item.question.endswith("Edited.")
    labels = detail.annotations
    assert list(labels["annotator"]) == ["ann"] and list(labels["seconds_spent"]) == [42.0]
    assert set(labels["version"]) == {1} and set(labels["difficulty"]) == {"easy"}


def test_figure_7_counts_error_steps_per_position_and_type(prm: Store) -> None:
    counts, figure = browse.distribution(prm, store_user(prm, "adj"), BrowseFilter(error_type="confidence"))
    assert set(counts["error_type"]) == {"confidence"} and counts["position"].min() >= 1
    import json

    from tests.conftest import PRMBENCH_FILE as source

    expected = 0
    for line in source.read_text().splitlines():
        obj = json.loads(line)
        if obj["classification"] == "confidence":
            expected += len({n for n in obj["error_steps"] if 1 <= n <= len(obj["modified_process"])})
    assert int(counts["error_steps"].sum()) == expected
    assert figure.axes


def test_figure_8_counts_steps_of_both_chains_per_item(prm: Store) -> None:
    rows, figure = browse.step_counts(prm, store_user(prm, "adj"), BrowseFilter(error_type="circular"))
    n_items = browse.search(prm, store_user(prm, "adj"), BrowseFilter(error_type="circular")).total
    assert set(rows["role"]) == {"original", "modified"} and len(rows) == 2 * n_items
    # Every query appears under each type: the original chains are the same whatever the type.
    deception = browse.step_counts(prm, store_user(prm, "adj"), BrowseFilter(error_type="deception"))[0]
    assert rows["n_steps"].min() >= 1 and deception["n_steps"].min() >= 1
    assert figure.axes


def test_a_link_reopens_the_filter_and_the_item() -> None:
    f = BrowseFilter(dataset="prm", error_type="circular", error_position=3, text="a b&c", sort="state")
    query = browse.query_for(f, item_id=7, page=2)
    from urllib.parse import parse_qsl

    again, item_id, page = browse.filter_from_query(dict(parse_qsl(query.lstrip("?"))))
    assert (again, item_id, page) == (f, 7, 2)
    with pytest.raises(InvalidInput):
        browse.filter_from_query({"sort": "id; DROP TABLE items"})


def test_an_annotator_browses_their_own_finished_work_only(prm: Store) -> None:
    ann, bea = store_user(prm, "ann"), store_user(prm, "bea")
    mine = browse.search(prm, ann, BrowseFilter())
    theirs = browse.search(prm, store_user(prm, "adj"), BrowseFilter(annotator="ann"))
    assert mine.total == theirs.total == 1 and list(mine.rows["item_id"]) == list(theirs.rows["item_id"])
    assert "state" not in mine.rows.columns and "difficulty" not in mine.rows.columns
    own = int(mine.rows["item_id"].iloc[0])
    other = int(browse.search(prm, bea, BrowseFilter()).rows["item_id"].iloc[0])
    for refused in (
        BrowseFilter(annotator="bea"),
        BrowseFilter(status="open"),
        BrowseFilter(difficulty="easy"),
        BrowseFilter(sort="state"),
    ):
        with pytest.raises(NotAllowed, match="own finished work"):
            browse.search(prm, ann, refused)
        with pytest.raises(NotAllowed):
            browse.figures(prm, ann, refused)
    detail = browse.open_item(prm, ann, own)
    assert set(detail.annotations["annotator"]) == {"ann"} and detail.state is None and detail.own_work_only
    if other != own:
        with pytest.raises(NotFound, match="not among your finished work"):
            browse.open_item(prm, ann, other)
    with pytest.raises(NotFound, match="not among your finished work"):
        browse.open_item(prm, ann, 10**6)
    plots = browse.figures(prm, ann, BrowseFilter())
    assert {t.get_text() for t in plots["labels_by_annotator"].axes[0].get_yticklabels()} == {"ann"}
    assert browse.choices(prm, ann)["dataset"] == ["prm"]
    with pytest.raises(NotAllowed):
        browse.export_view(prm, ann, BrowseFilter(), "log-csv", Path("/nonexistent/x.csv"))


def _as(name: str) -> gr.Request:
    return gr.Request(username=name)


def test_the_panel_handlers_for_an_adjudicator_and_for_an_annotator(prm: Store) -> None:
    ctx = AppContext(store=prm)
    opened = panel.on_tab_open(ctx, "?tab=browse&error_type=confidence&item=1", _as("adj"))
    assert opened["body"]["visible"] is True and "394" not in opened["page_line"]
    assert "Versions (lineage)" in opened["lineage"] and "edited" in opened["lineage"]
    assert "**Version 2 from 1** (edited)" in opened["lineage"] and "<ins>Edited.</ins>" in opened["lineage"]
    assert opened["item_view"].count('<b class="br-error-tag">error</b>') == 2
    shown = panel.on_filter(ctx, "prm", "", "", "circular", "", None, "", "", "id", "", _as("adj"))
    assert set(shown["results"]["error_type"]) == {"circular"} and "error_type=circular" in shown["link"]
    nxt = panel.on_page(
        ctx, 1, shown["page"], "prm", "", "", "circular", "", None, "", "", "id", "", _as("adj")
    )
    assert nxt["page"] == min(1, int(shown["page_line"].split("of ")[1]) - 1)
    assert "plot" not in nxt and "results" in nxt  # a page turn keeps the filter's plots

    own = panel.on_tab_open(ctx, "?tab=browse", _as("ann"))
    assert own["note"] == panel.OWN_WORK and own["body"]["visible"] is True
    assert own["export_row"]["visible"] is False and own["state"]["visible"] is False
    assert "**1** item(s)" in own["page_line"]
    bobs = list(NO_FILTER)
    bobs[6] = "bea"  # annotator
    for out in (
        panel.on_filter(ctx, *bobs, _as("ann")),
        panel.on_page(ctx, 1, 0, *bobs, _as("ann")),
        panel.on_tab_open(ctx, "?tab=browse&annotator=bea", _as("ann")),
    ):
        assert "adjudicators and admins" in out["status"] and "results" not in out


def test_hostile_dataset_text_is_shown_as_text(store: Store, tmp_path) -> None:
    import json

    source = tmp_path / "pb.jsonl"
    line = {
        "id": "x-1",
        "problem": "<img src=x onerror=alert(1)>",
        "steps": ["<script>alert(2)</script>", "ok"],
        "final_answer_correct": True,
        "label": 0,
    }
    source.write_text(json.dumps(line) + "\n")
    import_file(store, source, dataset="pb")
    add_user(store, "adj", "adjudicator")
    view = panel.on_open(AppContext(store=store), 1, *NO_FILTER, _as("adj"))["item_view"]
    assert "<script" not in view and "<img" not in view and "&lt;script&gt;" in view
    assert '<div class="br-error-step"><b class="br-error-tag">error</b> <b>Step 1.</b>' in view
