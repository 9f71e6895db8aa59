"""One Gradio web app per served Blocks, made when ui.web.server mounts it.

Gradio makes a whole web app (its routes, a schema for every event, the config twice more) each time
a Blocks closes and each time its queue is set, then makes another when the Blocks is mounted on our
server, the one that serves; its queue kept answering through the first. With stepgate's 659
components, building, queueing and mounting took 1.0-1.4 s of CPU, 0.45-0.6 s making one app. While
building (`app_made_at_mount`), none is made; the mounted one is handed to the queue (`serve_with`), so
the queue and the routes also keep one store of Gradio sessions, as Gradio's own `launch()` has them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gradio as gr
from gradio.routes import App

__all__ = ["app_made_at_mount", "serve_with"]


@contextmanager
def app_made_at_mount() -> Iterator[None]:
    """Blocks closed and queues set inside make no web app (build only; not thread-safe: one build)."""
    made_by_gradio = App.__dict__["create_app"]
    App.create_app = staticmethod(lambda *args, **kwargs: None)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        App.create_app = made_by_gradio  # type: ignore[method-assign]


def serve_with(blocks: gr.Blocks, mounted: Any) -> None:
    """The app `gr.mount_gradio_app` mounted is the one the queue answers through (its root path)."""
    for route in mounted.routes:
        inner = getattr(route, "app", None)
        if isinstance(inner, App) and inner.get_blocks() is blocks:
            blocks.app = inner
            return
    raise RuntimeError("the Gradio app was not mounted on the server")
