"""Finding 9: before login in team mode nothing answers but the login page: no page, config, schema,
run history or queue route. And the footer's "Use via API" and run history are gone after login."""

from __future__ import annotations

import pytest
import requests

from tests.security.support import config, login, team_server

pytestmark = pytest.mark.browser

ROUTES = [
    ("GET", "/"),
    ("GET", "/?view=api"),
    ("GET", "/config"),
    ("GET", "/config/"),
    ("GET", "/gradio_api/info"),
    ("GET", "/gradio_api/openapi.json"),
    ("GET", "/gradio_api/runs"),
    ("GET", "/gradio_api/heartbeat/abc"),
    ("GET", "/gradio_api/queue/data?session_hash=abc"),
    ("GET", "/gradio_api/user"),
    ("GET", "/gradio_api/token"),
    ("GET", "/gradio_api/app_id"),
    ("GET", "/gradio_api/startup-events"),
    ("GET", "/theme.css"),
    ("GET", "/manifest.json"),
    ("POST", "/gradio_api/cancel"),
    ("POST", "/gradio_api/reset"),
    ("POST", "/gradio_api/queue/join"),
    ("POST", "/gradio_api/run/next_item"),
    ("POST", "/gradio_api/upload"),
]


def test_nothing_but_the_login_page_answers_before_login(tmp_path) -> None:
    with team_server(tmp_path / "anon.duckdb", demo=True) as server:
        for method, path in ROUTES:
            body = {"session_hash": "abc", "fn_index": 0, "event_id": "x", "data": []}
            reply = requests.request(
                method,
                server.url + path,
                json=body if method == "POST" else None,
                timeout=10,
                allow_redirects=False,
            )
            assert reply.status_code in (401, 303), f"{method} {path}: {reply.status_code}"
            if reply.status_code == 303:
                assert reply.headers["location"] == "/login"
            for secret in (
                "next_item",
                "submit_label",
                "dependencies",
                "qwq-earliest-error",
                "stepgate-header",
            ):
                assert secret not in reply.text, f"{method} {path} told {secret!r}"
        page = requests.get(server.url + "/login", timeout=10)
        assert page.status_code == 200 and 'name="username"' in page.text
        assert "<script" not in page.text and "qwq" not in page.text
        # Logged in, the footer links (the "Use via API" page among them) and run history are off.
        ann = login(server.url, "ann")
        assert config(ann, server.url).get("footer_links") == []
        assert ann.get(server.url + "/gradio_api/runs", timeout=10).status_code == 404
