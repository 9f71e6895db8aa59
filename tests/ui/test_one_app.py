"""ui/web/one_app.py: a served Blocks has one Gradio web app, the mounted one, and its queue answers
through it."""

from __future__ import annotations

import gc
from pathlib import Path

from gradio.routes import App

from store import Store
from ui.app import build_app
from ui.context import AppContext
from ui.web.one_app import app_made_at_mount
from ui.web.server import build_server


def _apps_of(blocks: object) -> list[App]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, App) and o.blocks is blocks]


def test_a_served_blocks_makes_one_web_app_and_its_queue_answers_through_it(tmp_path: Path) -> None:
    with Store(tmp_path / "one.duckdb") as store:
        ctx = AppContext(store=store)
        blocks = build_app(ctx)
        with app_made_at_mount():
            blocks.queue(default_concurrency_limit=8)  # as app.py sets it
        assert blocks.app is None and _apps_of(blocks) == []  # built and queued: no app made yet
        server = build_server(ctx, blocks, "log in")
        mounted = [route.app for route in server.routes if isinstance(getattr(route, "app", None), App)]
        assert _apps_of(blocks) == mounted == [blocks.app]  # the one that serves is the one the queue uses
    made_by_gradio = App.__dict__["create_app"]
    assert isinstance(made_by_gradio, staticmethod) and made_by_gradio.__func__.__module__ == "gradio.routes"
