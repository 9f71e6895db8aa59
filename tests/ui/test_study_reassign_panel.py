"""The QC dashboard's reassignment form: admins only (also when the event is called over HTTP by a
script), it lists the study's removed raters who still hold items, and a refusal changes nothing."""

from __future__ import annotations

import gradio as gr

from store import Store
from tests.services.test_study_reassign import drawn  # noqa: F401  (the fixture: bea removed with 2 pending items)
from ui.context import AppContext
from ui.panels import studies as panel


def _plain(markdown: str) -> str:
    return markdown.replace("\\", "")  # escape_text escapes Markdown's characters


ASSIGNED = "SELECT * FROM study_assignments ORDER BY item_id, annotator_id"


def test_an_admin_sees_the_removed_rater_and_gives_their_items_away(drawn: Store) -> None:  # noqa: F811
    ctx = AppContext(store=drawn)
    lead = gr.Request(username="lead")
    assert panel.on_pick_study(ctx, "s", lead)["choices"] == ["bea"]
    status, table, removed = panel.on_reassign(ctx, "s", "bea", "dan", lead)
    assert "gave 2 pending item(s) of bea to dan" in _plain(status)
    assert table.loc[0, "study"] == "s"
    assert removed["choices"] == [] and removed["value"] is None  # bea holds nothing any more


def test_an_annotator_cannot_reassign_nor_list_removed_raters(drawn: Store) -> None:  # noqa: F811
    ctx = AppContext(store=drawn)
    before = drawn.fetchall(ASSIGNED)
    cid = gr.Request(username="cid")
    assert panel.on_pick_study(ctx, "s", cid)["choices"] == []
    try:
        panel.on_reassign(ctx, "s", "bea", "cid", cid)
    except gr.Error as refused:
        assert "admin" in str(refused).lower()
    else:
        raise AssertionError("an annotator reassigned a study's items")
    assert drawn.fetchall(ASSIGNED) == before


def test_a_bad_pick_says_what_and_stores_nothing(drawn: Store) -> None:  # noqa: F811
    ctx = AppContext(store=drawn)
    before = drawn.fetchall(ASSIGNED)
    lead = gr.Request(username="lead")
    status, *_ = panel.on_reassign(ctx, "s", "bea", None, lead)
    assert "Nothing reassigned: pick the study, the removed rater" in _plain(status)
    status, *_ = panel.on_reassign(ctx, "s", "bea", "ann", lead)  # ann has seen every item
    assert "left with bea: ann has seen them" in _plain(status)
    status, *_ = panel.on_reassign(ctx, "s", "cid", "dan", lead)
    assert "Nothing reassigned: cid is still an active annotator" in _plain(status)
    assert drawn.fetchall(ASSIGNED) == before
