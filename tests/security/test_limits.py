"""Findings 10 (HTTP part) and 11: bounded request bodies, uploads for admins only and bounded.
Kept holding: cross-site requests on events (CSRF/CORS) and an annotator calling an admin event."""

from __future__ import annotations

import uuid

import pytest
import requests

from tests.security.support import call_event, config, event_of, login, run_api, team_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("limits") / "limits.duckdb"
    with team_server(db, "--max-body-bytes", "200000", "--max-file-size-mb", "1") as running:
        yield running


def test_an_oversized_event_body_is_refused_with_413_and_nothing_stored(server) -> None:
    ann = login(server.url, "ann")
    payload = {"earliest_error": 1, "note": "x" * 2_000_000}
    reply = run_api(ann, server.url, "submit_label", 1, 1, payload, uuid.uuid4().hex, 5)
    assert reply.status_code == 413 and "larger than this server accepts" in reply.json()["error"]
    joined = ann.post(
        f"{server.url}/gradio_api/queue/join",
        json={"data": ["x" * 300_000], "fn_index": 0, "session_hash": uuid.uuid4().hex},
        timeout=30,
    )
    assert joined.status_code == 413
    # Chunked (no Content-Length) is counted as it arrives.
    chunks = (b"x" * 65536 for _ in range(8))
    chunked = ann.post(f"{server.url}/gradio_api/run/next_item", data=chunks, timeout=30)
    assert chunked.status_code == 413


def test_annotators_cannot_upload_and_admins_only_within_the_size_limit(server) -> None:
    ann, lead = login(server.url, "ann"), login(server.url, "lead")
    small = {"files": ("a.jsonl", b'{"x": 1}\n', "application/json")}
    refused = ann.post(f"{server.url}/gradio_api/upload", files=small, timeout=30)
    assert refused.status_code == 403 and "only admins upload" in refused.text
    judge = login(server.url, "judge")
    assert judge.post(f"{server.url}/gradio_api/upload", files=small, timeout=30).status_code == 403
    assert lead.post(f"{server.url}/gradio_api/upload", files=small, timeout=30).status_code == 200
    big = {"files": ("big.jsonl", b"x" * 2_000_000, "application/json")}
    assert lead.post(f"{server.url}/gradio_api/upload", files=big, timeout=30).status_code == 413


def test_cross_site_requests_on_events_are_refused(server) -> None:
    ann = login(server.url, "ann")
    forged = {"Origin": "http://evil.example"}
    reply = ann.post(
        f"{server.url}/gradio_api/run/next_item",
        json={"data": ["qwq"], "session_hash": uuid.uuid4().hex},
        headers=forged,
        timeout=30,
    )
    assert reply.status_code == 403
    referer = ann.post(
        f"{server.url}/gradio_api/queue/join",
        json={"data": [], "fn_index": 0, "session_hash": uuid.uuid4().hex},
        headers={"Referer": "http://evil.example/page"},
        timeout=30,
    )
    assert referer.status_code == 403
    preflight = ann.options(
        f"{server.url}/gradio_api/run/next_item",
        headers={**forged, "Access-Control-Request-Method": "POST"},
        timeout=30,
    )
    assert preflight.headers.get("access-control-allow-origin") not in ("http://evil.example", "*")
    # The session cookie is never sent on cross-site requests (SameSite=Lax) nor readable by script.
    cookie = requests.post(
        f"{server.url}/login",
        data={"username": "ann", "password": "ann-secret-password-1"},
        allow_redirects=False,
    ).headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")


def test_an_annotator_calling_an_admin_event_is_refused_and_nothing_changes(server) -> None:
    ann = login(server.url, "ann")
    fn, _ = event_of(config(ann, server.url), "data-user-add")
    _, text = call_event(ann, server.url, fn, ["mallory", "admin", "mallory-password"])
    assert '"success":false' in text.replace(" ", "") and "only an admin can do this" in text
    assert (
        requests.post(
            f"{server.url}/login", data={"username": "mallory", "password": "mallory-password"}, timeout=30
        ).status_code
        == 401
    )
