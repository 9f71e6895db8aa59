"""Finding 5: Gradio's queue stream and event join serve only the login that opened the session."""

from __future__ import annotations

import uuid

import pytest
import requests

from tests.security.support import call_event, config, event_of, login, run_api, team_server

pytestmark = pytest.mark.browser


def test_another_user_cannot_read_or_join_an_annotators_queue_session(tmp_path) -> None:
    with team_server(tmp_path / "streams.duckdb", demo=True) as server:
        ann, bob = login(server.url, "ann"), login(server.url, "bob")
        session = uuid.uuid4().hex
        # Ann opens the session the way the page does: an event on the queue, then the API.
        fn, inputs = event_of(config(ann, server.url), "tab-earliest_error", "select")
        status, _ = call_event(ann, server.url, fn, [None] * len(inputs), session_hash=session)
        assert status == 200
        assert (
            run_api(ann, server.url, "next_item", "qwq-earliest-error", session_hash=session).status_code
            == 200
        )

        stream = bob.get(
            f"{server.url}/gradio_api/queue/data", params={"session_hash": session}, timeout=10, stream=True
        )
        assert stream.status_code == 403
        joined = bob.post(
            f"{server.url}/gradio_api/queue/join",
            json={"data": [], "fn_index": fn, "session_hash": session},
            timeout=10,
        )
        assert joined.status_code == 403
        assert (
            run_api(bob, server.url, "next_item", "qwq-earliest-error", session_hash=session).status_code
            == 403
        )
        assert (
            bob.get(f"{server.url}/gradio_api/heartbeat/{session}", timeout=10, stream=True).status_code
            == 403
        )
        cancel = bob.post(
            f"{server.url}/gradio_api/cancel",
            json={"session_hash": session, "fn_index": fn, "event_id": "x"},
            timeout=10,
        )
        assert cancel.status_code == 403
        anonymous = requests.get(
            f"{server.url}/gradio_api/queue/data", params={"session_hash": session}, timeout=10
        )
        assert anonymous.status_code == 401
        # Ann's own session still works.
        assert (
            run_api(ann, server.url, "next_item", "qwq-earliest-error", session_hash=session).status_code
            == 200
        )
