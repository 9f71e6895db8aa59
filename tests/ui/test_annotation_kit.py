"""The annotation-panel kit (ui/kit/annotation.py) without a browser: what every annotation panel shares,
through the app Gradio serves, on a real store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import gradio as gr
import pytest
from gradio.block_function import BlockFunction

from services import jobs, perturbation
from services.access import OPERATOR
from services.demo import DEMO_DIR, populate_demo
from services.imports import import_file
from store import Store, users
from ui.app import build_app
from ui.context import AppContext
from ui.kit.annotation import Current, progress_line

# panel -> (its dataset picker's elem_id, the picker's event)
PANELS = {
    "step_review": ("step-review-dataset", "select"),
    "earliest_error": ("ee-dataset", "input"),
    "quality_gate": ("qg-dataset", "input"),
    "perturbation_check": ("pc-dataset", "input"),
    "step_match": ("sm-dataset", "input"),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppContext, gr.Blocks]]:
    """The demo's three datasets, a step-match study and a perturbation check: one dataset per panel."""
    db = tmp_path_factory.mktemp("kit") / "kit.duckdb"
    with Store(db) as store:
        populate_demo(store)
        import_file(store, DEMO_DIR / "step_pairs_demo.jsonl", format="steppairs", dataset="pairs")
        perturbation.create_check_dataset(
            store, OPERATOR, "mathvista-quality-gate", "figures", "image", limit=1
        )
        assert jobs.run_pending(store).done == 1
        users.add_user(store, "ann", "annotator", "ann-password-1")
        ctx = AppContext(store=store)
        yield ctx, build_app(ctx)


def _event(blocks: gr.Blocks, elem_id: str, trigger: str) -> BlockFunction:
    """The event the component `elem_id` fires on `trigger`, as Gradio holds it."""
    ids = {i for i, block in blocks.blocks.items() if getattr(block, "elem_id", None) == elem_id}
    for fn in blocks.fns.values():
        if any(target in ids and event == trigger for target, event in fn.targets):
            return fn
    raise AssertionError(f"no {trigger} event on #{elem_id}")


@pytest.mark.parametrize("key", sorted(PANELS))
def test_choosing_the_dataset_already_chosen_changes_nothing(
    app: tuple[AppContext, gr.Blocks], key: str
) -> None:
    """Issue 28: the handler's "nothing changes" reached Gradio as one value for 16 outputs (HTTP 500)."""
    _, blocks = app
    request = gr.Request(username="ann")
    opening = _event(blocks, f"tab-{key}", "select")
    opened = opening.fn(None, None, request=request)
    state = next(v for c, v in opened.items() if isinstance(c, gr.State))
    picker = next(v for c, v in opened.items() if getattr(c, "elem_id", None) == PANELS[key][0])
    dataset = picker["value"] if isinstance(picker, dict) else picker.value
    assert dataset and state.get("item_id") is not None, f"{key}: no item opened on {dataset}"
    changed = _event(blocks, *PANELS[key])
    result = changed.fn(dataset, state, request=request)
    # What Gradio does with the reply: every output left as it is, no error.
    # (in a thread of its own: a browser test earlier in the same process leaves an event loop running here)
    with ThreadPoolExecutor(1) as pool:
        values = pool.submit(asyncio.run, blocks.postprocess_data(changed, result, None)).result()
    assert len(values) == len(changed.outputs)
    assert all(v is None or v == {"__type__": "update"} for v in values), values


def test_the_item_on_screen_goes_to_the_page_and_back_unchanged() -> None:
    current = Current(
        dataset="d", item_id=3, version_id=7, state="new", request_id="r", opened_at=1.0, extra={"n_steps": 4}
    )
    kept = current.state_dict()
    assert kept == {
        "dataset": "d",
        "item_id": 3,
        "version_id": 7,
        "state": "new",
        "request_id": "r",
        "opened_at": 1.0,
        "n_steps": 4,
    }
    assert Current.of(kept) == current and Current.of(kept).draft_key == "d|3|7"
    assert not Current.of(None).has_item and Current.of({"dataset": "d", "item_id": None}).dataset == "d"
    saved = current.saved(my_label=2)
    assert saved.state == "saved" and saved.request_id != "r" and saved.get("my_label") == 2


def test_an_annotator_sees_their_own_count_and_a_reviewer_the_settled_share() -> None:
    assert progress_line({"total": 9, "mine": 2}, "pairs") == "You labelled **2** of 9 pairs."
    reviewer = progress_line({"total": 9, "mine": 2, "settled": 5, "discarded": 1}, bar="p")
    assert (
        "settled **5** / 9 · discarded 1" in reviewer and '<progress class="p" value="5" max="9">' in reviewer
    )
