"""Named outputs (ui/kit/outputs.py): a page is sent only the props it does not show already, and every
value whatever it was before (an item's text is never left from the one before)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pytest

from store import Store
from ui.context import AppContext
from ui.kit.outputs import Outputs, Sent


def _props(update: Any) -> dict[str, Any]:
    """What Gradio will apply on the page: a component's given args, or an update's props."""
    if isinstance(update, gr.blocks.Block):
        return dict(update.constructor_args)
    return {k: v for k, v in update.items() if k != "__type__"}


def test_a_prop_the_page_has_is_left_out_and_the_value_always_sent() -> None:
    with gr.Blocks():
        box = gr.Radio(choices=["a"], elem_id="box")
    sent = Sent()
    first = sent.trim("page-1", box, gr.Radio(choices=["a", "b"], value="a", visible=True))
    assert _props(first) == {"choices": ["a", "b"], "value": "a", "visible": True}
    again = sent.trim("page-1", box, gr.Radio(choices=["a", "b"], value="a", visible=True))
    assert _props(again) == {"value": "a"}  # the same value is sent again: the item may have changed
    changed = sent.trim("page-1", box, gr.update(choices=["c"], value=None, visible=True))
    assert _props(changed) == {"choices": ["c"], "value": None}


def test_pages_are_apart_and_what_the_page_changes_itself_is_always_sent() -> None:
    with gr.Blocks():
        box = gr.Accordion("reference", open=False)
    sent = Sent()
    sent.trim("page-1", box, gr.update(visible=True, open=False))
    assert _props(sent.trim("page-1", box, gr.update(visible=True, open=False))) == {"open": False}
    assert _props(sent.trim("page-2", box, gr.update(visible=True, open=False))) == {
        "visible": True,
        "open": False,
    }
    assert sent.trim(None, box, gr.update(visible=True)) == gr.update(visible=True)  # no page: as given


def test_an_unchanged_output_is_skipped_and_the_oldest_pages_are_forgotten() -> None:
    with gr.Blocks():
        shown = gr.Gallery(visible=False)
    sent = Sent(pages=1)
    sent.trim("page-1", shown, gr.update(visible=False))
    assert sent.trim("page-1", shown, gr.update(visible=False)) == gr.skip()
    sent.trim("page-2", shown, gr.update(visible=False))  # page-1 forgotten: sent everything again
    assert _props(sent.trim("page-1", shown, gr.update(visible=False))) == {"visible": False}


@pytest.mark.engines
def test_a_bound_handler_trims_per_page_by_its_request_in_one_process_only(store: Store) -> None:
    """Replicas over PostgreSQL may each answer one page's events: none knows what the page shows."""
    with gr.Blocks():
        note = gr.Markdown()
        picker = gr.Dropdown(choices=[])
    outputs = Outputs(note=note, picker=picker)

    def handler(ctx: AppContext, request: gr.Request) -> dict[str, Any]:
        return {"note": "item 7", "picker": gr.update(choices=["x", "y"], value="x")}

    bound = outputs.bind(handler, AppContext(store=store))
    page = gr.Request(session_hash=f"bound-page-{store.engine.exclusive}")
    whole = {"choices": ["x", "y"], "value": "x"}
    first = bound(page)
    assert first[note] == "item 7" and _props(first[picker]) == whole
    second = bound(page)
    assert second[note] == "item 7"
    assert _props(second[picker]) == ({"value": "x"} if store.engine.exclusive else whole)
    other = bound(gr.Request(session_hash=f"another-page-{store.engine.exclusive}"))
    assert _props(other[picker]) == whole
