"""Issue 32, hole 4: no route serves another login's Gradio session, and deep links are off.

The attack: an admin creates an API token in the Data panel (session H, the secret shown in a
component); an annotator calls `GET /gradio_api/deep_link?session_hash=H`, gets a link id, and
`GET /?deep_link=<id>` serves H's component values, the secret among them. Every other Gradio route
that names a session (or an event of one) is tried with H by the annotator too.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from tests.security.support import call_event, config, event_of, login, team_server

pytestmark = pytest.mark.browser  # starts the real app

MARKER = "planted-deep-link-7a41"


def test_an_annotator_reads_no_admin_session_through_any_route(tmp_path: Path, monkeypatch) -> None:
    uploads = tmp_path / "gradio-uploads"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(uploads))  # the server's Gradio upload folder
    with team_server(tmp_path / "team.duckdb") as server:
        url = server.url
        lead, ann = login(url, "lead"), login(url, "ann")
        conf = config(lead, url)
        held = uuid.uuid4().hex  # the admin's page session
        fn, _ = event_of(conf, "tokens-create")
        status, text = call_event(lead, url, fn, ["ann", "nightly"], session_hash=held)
        secret = re.search(r"sgt_[A-Za-z0-9_-]+", text)
        assert status == 200 and secret, text[-500:]

        # The annotator names the admin's session on every route that takes one: all refused.
        stolen = ann.get(f"{url}/gradio_api/deep_link", params={"session_hash": held}, timeout=30)
        assert stolen.status_code in (403, 404) and secret.group(0) not in stolen.text
        tries = {
            "queue/data": ann.get(f"{url}/gradio_api/queue/data", params={"session_hash": held}, timeout=30),
            "heartbeat": ann.get(f"{url}/gradio_api/heartbeat/{held}", timeout=30),
            "media stream": ann.get(f"{url}/gradio_api/stream/{held}/run/1/playlist.m3u8", timeout=30),
            "cancel": ann.post(
                f"{url}/gradio_api/cancel",
                json={"session_hash": held, "fn_index": fn, "event_id": "x"},
                timeout=30,
            ),
            "component_server": ann.post(
                f"{url}/gradio_api/component_server",
                json={"session_hash": held, "component_id": 1, "fn_name": "x", "data": None},
                timeout=30,
            ),
            "join": ann.post(
                f"{url}/gradio_api/queue/join",
                json={"data": [None], "fn_index": fn, "session_hash": held, "event_data": None},
                timeout=30,
            ),
            "any GET": ann.get(f"{url}/gradio_api/info", params={"session_hash": held}, timeout=30),
        }
        for route, reply in tries.items():
            assert reply.status_code == 403, (route, reply.status_code, reply.text[:200])
        # A form carries session_hash where the guard does not read it: no form but uploads.
        form = ann.post(
            f"{url}/gradio_api/component_server",
            files={"file": ("x.txt", b"x")},
            data={"session_hash": held, "component_id": "1", "fn_name": "x"},
            timeout=30,
        )
        assert form.status_code == 415
        assert (
            ann.get(f"{url}/gradio_api/upload_progress", params={"upload_id": "x"}, timeout=30).status_code
            == 403
        )

        # Deep links are off, even for the session's own login ...
        own = lead.get(f"{url}/gradio_api/deep_link", params={"session_hash": held}, timeout=30)
        assert own.status_code == 404 and "Deep links are off" in own.text
        # ... and a link left on disk (made before, or planted) is not served by the page.
        components = config(lead, url)["components"]
        for component in components:
            if component.get("props", {}).get("elem_id") == "home-hello":
                component["props"]["value"] = MARKER
        planted = uploads / "deep_links" / "planted1" / "state.json"
        planted.parent.mkdir(parents=True)
        planted.write_text(json.dumps(components))
        for query in ("?deep_link=planted1", "?deep%5Flink=planted1", "?tab=browse&deep_link=planted1"):
            page = ann.get(f"{url}/{query}", timeout=30)
            assert page.status_code == 200 and MARKER not in page.text, query
            assert '"deep_link_state":"valid"' not in page.text.replace(" ", "")
