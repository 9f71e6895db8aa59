"""A stop waits for the events under way and answers them, not for the pages left open (ui/web/stopping.py)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import fastapi
import gradio as gr
import httpx
import pytest
import uvicorn
from gradio_client import Client

from tests.browser_support import login, start_server
from ui.web.stopping import EndStreams, StopAfterEvents, Streams

GRACE_EXCEEDED = "timeout graceful shutdown exceeded"  # what uvicorn logs when it cancels what still runs
RELEASE = threading.Event()


def slow_echo(text: str) -> str:
    RELEASE.wait(30)
    return f"done: {text}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def _served() -> Iterator[tuple[str, StopAfterEvents, threading.Thread]]:
    """A Blocks with one slow event, mounted and stopped as ui/web/server.py does it."""
    with gr.Blocks(analytics_enabled=False) as blocks:
        box = gr.Textbox()
        gr.Button().click(slow_echo, box, box, api_name="slow_echo")
    streams = Streams()
    app = gr.mount_gradio_app(fastapi.FastAPI(), blocks, path="/")
    app.add_middleware(EndStreams, streams=streams)
    blocks.process_api = streams.event(blocks.process_api)
    port = _free_port()
    server = StopAfterEvents(
        uvicorn.Config(app, "127.0.0.1", port, log_config=None, timeout_graceful_shutdown=5), streams
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", server, thread
    finally:
        RELEASE.set()
        server.should_exit = True
        thread.join(15)


def _stop_while_the_event_runs(server: StopAfterEvents) -> None:
    """Once the slow event has started: the stop asked for, and half a second for it to act."""
    deadline = time.monotonic() + 30
    while server.streams.events_running == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.streams.events_running == 1
    server.should_exit = True
    time.sleep(0.5)


def test_an_event_under_way_at_the_stop_still_answers_its_caller(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="uvicorn.error")
    RELEASE.clear()
    with _served() as (url, server, thread):
        client = Client(url, verbose=False)
        job = client.submit("saved label", api_name="/slow_echo")
        _stop_while_the_event_runs(server)
        assert thread.is_alive() and not server.streams.ended.is_set()  # the stop waits for the event
        RELEASE.set()
        assert job.result(timeout=30) == "done: saved label"
        thread.join(15)
        assert not thread.is_alive()
    assert GRACE_EXCEEDED not in caplog.text


def test_a_queued_event_whose_page_has_no_stream_open_still_finishes_before_the_process_ends() -> None:
    """An event on Gradio's queue runs outside any request: with its page's stream closed (between two
    reconnections), no open connection holds the stop, and uvicorn alone ended the process under it."""
    RELEASE.clear()
    with _served() as (url, server, thread):
        joined = httpx.post(
            f"{url}/gradio_api/queue/join",
            json={"data": ["queued label"], "fn_index": 0, "session_hash": "no-stream", "event_data": None},
            timeout=30,
        )
        assert joined.status_code == 200, joined.text
        _stop_while_the_event_runs(server)
        assert thread.is_alive()  # the stop waits for the event, though no connection is open
        RELEASE.set()
        thread.join(15)
        assert not thread.is_alive() and server.streams.events_running == 0


@pytest.mark.browser
def test_the_served_app_stops_at_once_with_pages_open(tmp_path: Path, browser) -> None:
    """Gradio keeps a page's event stream open after some of its events (not after all): two pages that
    open panels leave one open far more often than not, and it held every such stop for 5 s."""
    server = start_server(tmp_path / "stop.duckdb")
    try:
        for name in ("ada", "bo"):
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            login(page, server.url, name)
            page.get_by_role("tab", name="Step review").click()
            page.wait_for_selector("#step-review-progress")
            page.get_by_role("tab", name="Earliest error").click()
            page.wait_for_selector("#ee-question")
    finally:
        server.stop()
    assert server.process.returncode == 0
    log = server.log.read_text(encoding="utf-8")
    assert GRACE_EXCEEDED not in log and "without completing response" not in log
