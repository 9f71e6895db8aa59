"""Where the app's events show their progress (ui/kit/progress.py): Gradio's page applies again, at the
start and end of every event, the loading status of every component any earlier event of the page showed
progress on, so what the page load touches is paid on every click of the day."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import pytest
from gradio.block_function import BlockFunction
from gradio.blocks import BlockContext
from gradio.components import Component

from store import Store
from ui.app import build_app, launch_kwargs
from ui.context import AppContext


@pytest.fixture(scope="module")
def blocks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gr.Blocks]:
    with Store(Path(tmp_path_factory.mktemp("progress")) / "progress.duckdb") as store:
        yield build_app(AppContext(store=store))


def _targets(fn: BlockFunction) -> list:
    """The components the page keeps a loading status for once `fn` ran (its outputs unless told)."""
    return list(fn.show_progress_on if fn.show_progress_on is not None else fn.outputs)


def _layout(block: object) -> bool:
    """A row, column, tab or accordion (gr.HTML may hold children too, but is one component)."""
    return isinstance(block, BlockContext) and not isinstance(block, Component)


def _named(blocks: list) -> list[str]:
    return [f"{type(b).__name__}#{b.elem_id or b._id}" for b in blocks]


def test_the_page_load_shows_progress_on_one_small_component_per_event_at_most(blocks: gr.Blocks) -> None:
    """A layout block as a target makes every later event copy each component inside it, twice."""
    loads = [fn for fn in blocks.fns.values() if any(event == "load" for _, event in fn.targets)]
    assert len(loads) > 3
    for fn in loads:
        targets = _targets(fn)
        assert len(targets) <= 1, (fn.name, _named(targets))
        assert not any(_layout(t) for t in targets), (fn.name, _named(targets))


def test_what_a_page_load_sets_off_shows_its_progress_nowhere(blocks: gr.Blocks) -> None:
    """A value the load sets fires the component's change event while its panel is out of sight."""
    loaded = {
        block._id
        for fn in blocks.fns.values()
        if any(event == "load" for _, event in fn.targets)
        for block in fn.outputs
    }
    following = [
        fn
        for fn in blocks.fns.values()
        if any(target in loaded and event == "change" for target, event in fn.targets)
    ]
    assert following, "the Data panel's dataset picker is set by its load"
    for fn in following:
        assert _targets(fn) == [], (fn.name, _named(_targets(fn)))


def test_no_event_shows_its_progress_on_a_layout_block(blocks: gr.Blocks) -> None:
    """A row or column as a target makes every later event of the page copy each component inside it."""
    for fn in blocks.fns.values():
        layouts = [t for t in _targets(fn) if _layout(t)]
        assert not layouts, (fn.name, _named(layouts))


def test_opening_a_tab_shows_progress_on_one_status_line(blocks: gr.Blocks) -> None:
    """QC dashboard, Scores, Browse and Jobs fill most of their panel when opened: with the progress on
    all of it, opening one once made every later save in the page slower (bench/browser.py --reviewed)."""
    tab_opens = [
        fn
        for fn in blocks.fns.values()
        if any(
            event == "select" and isinstance(blocks.blocks[target], gr.Tab) for target, event in fn.targets
        )
    ]
    assert len(tab_opens) >= 4, [fn.name for fn in tab_opens]
    for fn in tab_opens:
        targets = _targets(fn)
        assert len(targets) <= 1, (fn.name, _named(targets))


def test_an_unqueued_event_leaves_its_progress_to_the_pages_busy_mark(blocks: gr.Blocks) -> None:
    """An annotation panel's quick events (ui/kit/annotation.quick_events): even a status line's tracker
    was a third of a save's time in the browser; ui/js/busy.js shows one that is slow."""
    quick = [fn for fn in blocks.fns.values() if not fn.queue and fn.api_visibility == "private"]
    assert len(quick) > 20, [fn.name for fn in quick]
    for fn in quick:
        assert _targets(fn) == [], (fn.name, _named(_targets(fn)))


def test_the_busy_mark_is_in_every_page(tmp_path: Path) -> None:
    """The page's head carries ui/js/busy.js, which watches the unqueued requests the quick events make."""
    with Store(tmp_path / "head.duckdb") as store:
        head = launch_kwargs(AppContext(store=store))["head"]
    assert "window.stepgateBusy" in head and "/gradio_api/run/" in head
