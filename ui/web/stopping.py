"""A stop (Ctrl-C, SIGTERM, a restart) that waits for the events under way, not for the pages left open.

Every open page holds streams to the server: Gradio's heartbeat, and its event stream, which can stay
open after the page's last event. uvicorn's graceful stop waits for every open response, so each open
page held a stop for the whole graceful timeout (Gradio ends its heartbeats itself only from its own
launch(), which we do not call). Here a stop first lets the events under way run and answer their pages,
then ends the streams: what an annotator saved before the stop is answered; a page left open costs
nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

import uvicorn

__all__ = ["STREAM_PATHS", "EndStreams", "StopAfterEvents", "Streams"]

STREAM_PATHS = ("/gradio_api/queue/data", "/gradio_api/heartbeat/")
# No event for two looks this far apart: one joined just before the stop has reached the queue's worker,
# and one just done has sent its answer down its page's stream (which Gradio then closes itself).
SETTLE_SECONDS = 0.05

Scope = dict[str, Any]


class Streams:
    """The open pages' streams and the events under way: what a stop waits for, and what it ends."""

    def __init__(self) -> None:
        self.events_running = 0
        self.ended = asyncio.Event()

    def event(self, run: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """`run` (Gradio's one method every event goes through), counted while it runs."""

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.events_running += 1
            try:
                return await run(*args, **kwargs)
            finally:
                self.events_running -= 1

        return counted

    async def end_when_events_done(self) -> None:
        quiet = 0
        while quiet < 2:
            await asyncio.sleep(SETTLE_SECONDS)
            quiet = 0 if self.events_running else quiet + 1
        self.ended.set()


class EndStreams:
    """ASGI middleware: a page's stream ends when `streams.ended` is set; other requests pass as they are."""

    def __init__(self, app: Callable, streams: Streams) -> None:
        self.app = app
        self.streams = streams

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(STREAM_PATHS):
            await self.app(scope, receive, send)
            return
        sent = {"started": False, "ended": False}

        async def watched_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                sent["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                sent["ended"] = True
            await send(message)

        response = asyncio.ensure_future(self.app(scope, receive, watched_send))
        ended = asyncio.ensure_future(self.streams.ended.wait())
        try:
            await asyncio.wait({response, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        if response.done():
            response.result()
            return
        response.cancel()
        with suppress(asyncio.CancelledError):
            await response
        # The stream's last word, so that the server has answered every request it took.
        if not sent["started"]:
            await send({"type": "http.response.start", "status": 503, "headers": []})
        if not sent["ended"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class StopAfterEvents(uvicorn.Server):
    """uvicorn's server whose stop ends the pages' streams once the events under way have answered."""

    def __init__(self, config: uvicorn.Config, streams: Streams) -> None:
        super().__init__(config)
        self.streams = streams

    async def shutdown(self, sockets: list | None = None) -> None:
        """The events under way first (for at most the graceful timeout), then uvicorn's own stop. An
        event on Gradio's queue runs outside any request: waiting only for open connections, as uvicorn
        does, let the process end under it whenever its page's stream happened to be closed."""
        with suppress(asyncio.TimeoutError):
            await asyncio.wait_for(
                self.streams.end_when_events_done(), timeout=self.config.timeout_graceful_shutdown
            )
        self.streams.ended.set()
        await super().shutdown(sockets=sockets)
