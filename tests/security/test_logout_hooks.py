"""Logout runs the hooks registered in AppContext (the drafts of that user are cleared there), and
--secure-cookies marks the session cookie Secure. In-process, on the same ASGI app `serve` runs."""

from __future__ import annotations

import gradio as gr
from fastapi.testclient import TestClient

from store import Store, users
from ui.context import TEAM, AppContext, WebSettings
from ui.web.server import build_server


def test_logout_calls_the_hooks_with_the_users_name_and_cookies_can_be_secure(tmp_path) -> None:
    with Store(tmp_path / "hooks.duckdb") as store:
        users.add_user(store, "ann", "annotator", "ann-password")
        ctx = AppContext(store=store, mode=TEAM, web=WebSettings(secure_cookies=True))
        seen: list[str] = []
        ctx.logout_hooks.append(seen.append)
        with gr.Blocks() as blocks:
            gr.Markdown("x")
        client = TestClient(build_server(ctx, blocks, "log in"), base_url="https://testserver")
        reply = client.post(
            "/login", data={"username": "ann", "password": "ann-password"}, follow_redirects=False
        )
        assert reply.status_code == 303
        cookie = reply.headers["set-cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
        assert client.post("/logout", headers={"Origin": "http://elsewhere"}).status_code == 403
        assert seen == []
        out = client.post("/logout", headers={"Origin": "https://testserver"}, follow_redirects=False)
        assert out.status_code == 303 and seen == ["ann"]
