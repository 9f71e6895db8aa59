"""Named outputs (ui/kit/outputs.py): a page is sent only the props it does not show already, and every
value whatever it was before (an item's text is never left from the one before)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gradio as gr
import pytest
from gradio.state_holder import SessionState

from store import Store
from ui.context import AppContext
from ui.kit.outputs import Outputs, Sent


def _props(update: Any) -> dict[str, Any]:
    """What Gradio will apply on the page: a component's given args, an update's props, or a value."""
    if isinstance(update, gr.blocks.Block):
        return dict(update.constructor_args)
    if not (isinstance(update, dict) and update.get("__type__") == "update"):
        return {"value": update}  # a plain value
    return {k: v for k, v in update.items() if k != "__type__"}


def test_a_prop_the_page_has_is_left_out_and_the_value_always_sent() -> None:
    with gr.Blocks():
        box = gr.Radio(choices=["a"], elem_id="box")
    sent = Sent()
    first = sent.trim("page-1", box, gr.Radio(choices=["a", "b"], value="a", visible=True))
    assert _props(first) == {"choices": ["a", "b"], "value": "a", "visible": True}
    again = sent.trim("page-1", box, gr.Radio(choices=["a", "b"], value="a", visible=True))
    assert again == "a"  # the same value is sent again (the item may have changed), as a plain value
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


def _run(coroutine: Any) -> Any:
    """Gradio's coroutine on an event loop of its own thread: another test's loop may be running here."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_a_value_alone_is_sent_plain_so_gradio_builds_no_component_for_it() -> None:
    """For any update, even an empty one, Gradio's server builds the component anew (a Gallery: ~6 ms
    of CPU); a plain value keeps the page's component and is only postprocessed."""
    with gr.Blocks() as demo:
        shown = gr.Gallery(visible=False)
        note = gr.Markdown()
        go = gr.Button()
        go.click(lambda: (None, ""), None, [shown, note])
    sent = Sent()
    sent.trim("page-1", shown, gr.Gallery(value=None, visible=False))
    plain = sent.trim("page-1", shown, gr.Gallery(value=None, visible=False))
    assert plain is None  # the value, not an update
    state = SessionState(demo)
    state[shown._id] = shown
    _run(demo.postprocess_data(demo.fns[0], [plain, "item 2"], state))
    assert state[shown._id] is shown
    _run(demo.postprocess_data(demo.fns[0], [gr.update(value=None), "item 2"], state))
    assert state[shown._id] is not shown  # what an update would have cost


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
    assert second[picker] == "x" if store.engine.exclusive else _props(second[picker]) == whole
    other = bound(gr.Request(session_hash=f"another-page-{store.engine.exclusive}"))
    assert _props(other[picker]) == whole
