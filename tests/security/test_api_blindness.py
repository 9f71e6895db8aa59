"""Every event of the app, called directly over HTTP by an annotator, leaks no other annotator's label.

Gradio exposes every event (fn_index) on the queue the browser uses, whether or not it is listed
under "Use via API". This test calls each one as a curious annotator would, with every input left
at its default, after another annotator stored labels carrying a marker, and searches every answer
for the marker.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import requests

from bench.client import StepgateClient
from bench.server import start_server
from services.annotate import now_utc, submit
from services.leasing import leases_of
from store import Store, users, work

pytestmark = pytest.mark.browser

MARKER = "SECRET-LABEL-OF-ANN-7d3f"


def _label_as_ann(db: Path) -> None:
    """Ann labels items of every blind task, each label carrying the marker."""
    from services.demo import populate_demo

    with Store(db) as store:
        populate_demo(store)
        ann = users.add_user(store, "ann", "annotator", "ann-password")
        users.add_user(store, "bob", "annotator", "bob-password")
        for name, task, payload in [
            ("qwq-earliest-error", "earliest_error", {"earliest_error": 1, "note": MARKER}),
            (
                "prmbench-step-review",
                "step_review",
                {
                    "original": "incorrect",
                    "modification": "unreasonable",
                    "difficulty": "hard",
                    "note": MARKER,
                },
            ),
        ]:
            dataset = work.dataset_for(store, name, task)
            for _ in range(3):
                found = work.next_item(store, leases_of(store), ann, dataset, now_utc())
                assert found is not None
                submit(
                    store,
                    annotator=ann,
                    item_id=found.item.item_id,
                    version_id=found.item.version_id,
                    payload=payload,
                    request_id=uuid.uuid4().hex,
                )


def _events(client: StepgateClient) -> tuple[list[dict], dict[int, object]]:
    """The app's events and each component's initial value (what the page would send)."""
    config = client.http.get(f"{client.url}/config", timeout=30).json()
    values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
    return config["dependencies"], values


def _call(client: StepgateClient, fn_index: int, data: list) -> str:
    """Join the queue as the browser does and read the event's whole answer as text."""
    session = client.session_hash
    body = {
        "data": data,
        "fn_index": fn_index,
        "session_hash": session,
        "event_data": None,
        "trigger_id": None,
    }
    joined = client.http.post(f"{client.url}/gradio_api/queue/join", json=body, timeout=30)
    if joined.status_code != 200:
        return joined.text
    stream = client.http.get(
        f"{client.url}/gradio_api/queue/data", params={"session_hash": session}, stream=True, timeout=60
    )
    seen = []
    for line in stream.iter_lines(decode_unicode=True):
        if line.startswith("data:"):
            seen.append(line)
            message = json.loads(line[5:])
            if message.get("msg") in ("process_completed", "close_stream"):
                break
    stream.close()
    return "\n".join(seen)


def test_no_event_returns_another_annotators_label_to_an_annotator(tmp_path: Path) -> None:
    db = tmp_path / "blind.duckdb"
    _label_as_ann(db)
    server = start_server(db, "--team", "--no-demo")
    try:
        bob = StepgateClient(server.url, "bob", "bob-password")
        events, values = _events(bob)
        assert len(events) > 10
        answers = {}
        for dep in events:
            if not dep.get("backend_fn", True):
                continue
            answers[dep["id"]] = _call(bob, dep["id"], [values.get(i) for i in dep.get("inputs", [])])
            # Also with every input empty, as a hand-made request might send.
            answers[-dep["id"] - 1] = _call(bob, dep["id"], [None] * len(dep.get("inputs", [])))
        leaks = [fn for fn, text in answers.items() if MARKER in text]
        succeeded = sum(
            1 for text in answers.values() if '"success": true' in text or '"success":true' in text
        )
        assert succeeded > len(events) // 2, "most events should run for a logged-in annotator"
        assert leaks == [], f"events {leaks} returned Ann's label to Bob"
        # The same events do work: Ann, calling them, can see her own label somewhere.
        ann = StepgateClient(server.url, "ann", "ann-password")
        found = ann.run("next_item", "qwq-earliest-error")
        assert found["item_id"] is not None
        # And anonymous callers get nothing at all in team mode.
        anonymous = requests.post(
            f"{server.url}/gradio_api/queue/join",
            json={"data": [], "fn_index": 0, "session_hash": "x"},
            timeout=10,
        )
        assert anonymous.status_code == 401
    finally:
        server.stop()
