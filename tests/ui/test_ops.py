"""What operators and scripts use, over HTTP against the real app: the health check, the metrics, the
JSON logs and API tokens (create, use, revoke) for the predictions upload."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from pathlib import Path

import gradio as gr
import pytest
import requests
import uvicorn
from prometheus_client.parser import text_string_to_metric_families

from bench.client import StepgateClient
from store import Store, tokens, users
from tests.browser_support import cli, running
from ui.context import TEAM, AppContext
from ui.web.server import build_server

PASSWORD = "ops-password-1"
EE = "qwq-earliest-error"
REVIEW = "prmbench-step-review"
# Label names our metrics use: none of them names an item, an annotator or a label value.
ALLOWED_LABELS = {"route", "method", "status", "event", "outcome", "task", "le"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    db: Path = tmp_path_factory.mktemp("ops") / "ops.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    cli("users", "add", "zelda", "--password", PASSWORD, db=db)
    with running(db, "--team", "--log-format", "json") as server:
        yield server


def _login(server, name: str) -> StepgateClient:
    return StepgateClient(server.url, name, PASSWORD)


def _token(db: Path, user: str, name: str) -> str:
    """`tokens create` while the app serves (the command is handed to it); the token is the last line."""
    out = cli("tokens", "create", name, "--user", user, db=db).stdout
    token = out.strip().splitlines()[-1]
    assert token.startswith("sgt_") and "shown only now" in out
    return token


def _metrics(text: str) -> dict[str, list]:
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def test_health_answers_without_login_and_tells_nothing_else(app) -> None:
    reply = requests.get(app.url + "/healthz", timeout=10)
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok" and set(body) == {"status", "store", "uptime_seconds"}
    assert requests.head(app.url + "/healthz", timeout=10).status_code == 200


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_health_is_503_once_the_store_does_not_answer(tmp_path: Path) -> None:
    store = Store(tmp_path / "health.duckdb")
    with gr.Blocks() as blocks:
        gr.Markdown("x")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(build_server(AppContext(store=store, mode=TEAM), blocks, "log in"), "127.0.0.1", port)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}/healthz"
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert requests.get(url, timeout=10).status_code == 200
        store.close()
        down = requests.get(url, timeout=10)
        assert down.status_code == 503 and down.json()["status"] == "unavailable"
    finally:
        server.should_exit = True
        thread.join(10)
        store.close()


def test_metrics_parse_and_count_requests_events_jobs_labels_and_sessions(app) -> None:
    zelda, lead = _login(app, "zelda"), _login(app, "lead")
    item = zelda.run("next_item", EE)
    zelda.run("submit_label", item["item_id"], item["version_id"], {"earliest_error": 1}, "ops-m-1", 4.0)
    reply = lead.http.get(app.url + "/metrics", timeout=10)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/plain")
    found = _metrics(reply.text)
    runs = [
        s
        for s in found["stepgate_http_requests"]
        if s.labels["route"] == "/gradio_api/run/submit_label" and s.labels["status"] == "200"
    ]
    assert runs and runs[0].value >= 1
    assert any(s.name.endswith("_bucket") for s in found["stepgate_http_request_duration_seconds"])
    events = {
        s.labels["event"] for s in found["stepgate_event_duration_seconds"] if s.name.endswith("_count")
    }
    assert {"next_item", "submit_label"} <= events
    assert {s.labels["status"] for s in found["stepgate_jobs"]} >= {"queued", "running", "done", "failed"}
    labels = {
        s.labels["task"]: s.value for s in found["stepgate_labels_submitted"] if s.name.endswith("_total")
    }
    assert labels["earliest_error"] >= 1
    assert found["stepgate_active_sessions"][0].value >= 2


def test_metrics_are_for_admins_and_name_no_item_annotator_or_label(app) -> None:
    zelda, lead = _login(app, "zelda"), _login(app, "lead")
    item = zelda.run("next_item", REVIEW)
    payload = {"original": "incorrect", "modification": "unreasonable", "difficulty": "medium"}
    zelda.run("submit_label", item["item_id"], item["version_id"], payload, "ops-leak-1", 2.0)
    refused = zelda.http.get(app.url + "/metrics", timeout=10)
    assert refused.status_code == 403 and "only an admin" in refused.json()["error"]
    assert requests.get(app.url + "/metrics", timeout=10).status_code == 401
    own_token = _token(app.db, "zelda", "zelda-script")
    with_token = requests.get(
        app.url + "/metrics", headers={"Authorization": f"Bearer {own_token}"}, timeout=10
    )
    assert with_token.status_code == 403
    text = lead.http.get(app.url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            assert set(sample.labels) <= ALLOWED_LABELS, sample
    for secret in ("zelda", "unreasonable", "medium", item["question"][:40], item["external_id"]):
        assert secret not in text
    assert f'"{item["item_id"]}"' not in text


def test_a_token_acts_as_its_owner_for_scripts_until_revoked(app) -> None:
    zelda = _login(app, "zelda")
    external = zelda.run("next_item", EE)["external_id"]
    body = json.dumps({"id": external, "earliest_error": 2}) + "\n"
    token = _token(app.db, "lead", "nightly-predictions")
    auth = {"Authorization": f"Bearer {token}"}
    url = app.url + "/api/predictions"
    stored = requests.post(url, params={"model": "m1", "dataset": EE}, data=body, headers=auth, timeout=30)
    assert stored.status_code == 200, stored.text
    assert stored.json()["items"] == 1 and stored.json()["replaced"] is False
    assert requests.get(app.url + "/metrics", headers=auth, timeout=10).status_code == 200
    # A bad file: the service's message, nothing stored.
    bad = requests.post(
        url, params={"model": "m1", "dataset": EE}, data='{"id": "nope"}\n', headers=auth, timeout=30
    )
    assert bad.status_code == 400 and "nothing imported" in bad.json()["error"]

    listed = cli("tokens", "list", db=app.db).stdout
    assert token not in listed and token[:12] in listed and "nightly-predictions" in listed
    token_id = next(line.split("\t")[0] for line in listed.splitlines() if "nightly-predictions" in line)
    assert "revoked" in cli("tokens", "revoke", token_id, db=app.db).stdout

    gone = requests.post(url, params={"model": "m2", "dataset": EE}, data=body, headers=auth, timeout=30)
    assert gone.status_code == 401 and "unknown or revoked" in gone.json()["error"]
    assert requests.get(app.url + "/metrics", headers=auth, timeout=10).status_code == 401
    # Nothing was stored under m2: a fresh token's upload of m2 is a first one, not a replacement.
    fresh = {"Authorization": f"Bearer {_token(app.db, 'lead', 'again')}"}
    again = requests.post(url, params={"model": "m2", "dataset": EE}, data=body, headers=fresh, timeout=30)
    assert again.status_code == 200 and again.json()["replaced"] is False


def test_a_wrong_token_or_an_annotators_token_stores_nothing(app) -> None:
    url = app.url + "/api/predictions"
    params = {"model": "m-wrong", "dataset": EE}
    for header in ({"Authorization": "Bearer sgt_not-a-token"}, {"Authorization": "Basic abc"}, {}):
        reply = requests.post(
            url, params=params, data='{"id": "x", "earliest_error": 1}', headers=header, timeout=10
        )
        assert reply.status_code == 401 and reply.json()["error"]
        assert reply.headers["www-authenticate"] == "Bearer"
    annotator = {"Authorization": f"Bearer {_token(app.db, 'zelda', 'zelda-upload')}"}
    refused = requests.post(
        url, params=params, data='{"id": "x", "earliest_error": 1}', headers=annotator, timeout=10
    )
    assert refused.status_code == 403 and "only an admin" in refused.json()["error"]


def test_json_logs_parse_and_hold_no_dataset_text_label_or_name(app) -> None:
    zelda = _login(app, "zelda")
    item = zelda.run("next_item", REVIEW)
    payload = {"original": "correct", "modification": "unreasonable", "difficulty": "easy"}
    zelda.run("submit_label", item["item_id"], item["version_id"], payload, "ops-log-1", 3.0)
    time.sleep(0.3)
    lines = [json.loads(line) for line in app.log.read_text().splitlines() if line.startswith("{")]
    kinds = {line["kind"] for line in lines}
    assert {"http", "event"} <= kinds
    events = [line for line in lines if line["kind"] == "event" and line.get("event") == "submit_label"]
    assert events and all({"time", "level", "user", "duration_ms", "outcome"} <= set(e) for e in events)
    assert all(isinstance(e["user"], int) for e in events)
    text = app.log.read_text()
    for secret in (
        "zelda",
        "unreasonable",
        item["question"][:40],
        *(s[:40] for s in item["steps"] if len(s) > 20),
    ):
        assert secret not in text


def test_tokens_are_stored_hashed_and_end_with_revoke_or_their_annotator(tmp_path: Path) -> None:
    with Store(tmp_path / "tokens.duckdb") as store:
        owner = users.add_user(store, "lead", "admin", PASSWORD)
        record, token = tokens.create_token(store, owner, "prometheus", None)
        assert token not in str(store.fetchall("SELECT * FROM api_tokens"))
        assert tokens.token_owner(store, token) == owner
        assert tokens.token_owner(store, token + "x") is None
        tokens.revoke_token(store, record.id)
        assert tokens.token_owner(store, token) is None
        _, second = tokens.create_token(store, owner, "again", None)
        users.remove_user(store, "lead")
        assert tokens.token_owner(store, second) is None


def test_a_job_step_is_one_log_line_with_its_outcome_and_no_error_text(tmp_path: Path) -> None:
    import io

    from services import jobs, logs
    from services.annotate import now_utc
    from store import jobs as queue

    out = io.StringIO()
    logs.configure("json", stream=out)
    try:
        with Store(tmp_path / "jobs.duckdb") as store:
            with store.writing() as tx:
                queue.enqueue(
                    tx, kind="no-such-kind", item_id=1, version_id=1, reason="test", payload={}, now=now_utc()
                )
            jobs.run_one(store, "tester")
    finally:
        logging.getLogger(logs.LOGGER).handlers.clear()
    (line,) = [json.loads(text) for text in out.getvalue().splitlines()]
    assert line["kind"] == "job" and line["job_id"] == 1 and line["job_kind"] == "no-such-kind"
    # Retried after a backoff; the error's class only (a generator's message may quote the item).
    assert line["outcome"] == "queued" and line["error"] == "GenerationError" and line["duration_ms"] >= 0


def test_text_log_lines_carry_the_same_fields_as_key_value() -> None:
    import io

    from services import logs

    out = io.StringIO()
    logs.configure("text", stream=out)
    try:
        logs.emit("http", route="/healthz", status=200, user=None, duration_ms=1.5)
    finally:
        logging.getLogger(logs.LOGGER).handlers.clear()
    line = out.getvalue().strip()
    assert line.split()[1:] == ["info", "http", "route=/healthz", "status=200", "duration_ms=1.5"]
    with pytest.raises(ValueError, match="json"):
        logs.configure("xml")


def test_frozen_survivors_free_a_closed_cycle_at_the_next_thaw() -> None:
    """Frozen objects skip full collections (short pauses), but a cycle among them must not live for
    ever: after the thaw period one full collection sees them again and frees it."""
    import gc
    import weakref

    from ui.web.server import FrozenSurvivors

    class Node:
        pass

    now = [0.0]
    survivors = FrozenSurvivors(thaw_seconds=10, clock=lambda: now[0])
    node = Node()
    node.me = node  # a cycle, as a closed session's components make
    alive = weakref.ref(node)
    survivors.start()
    try:
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert alive() is not None  # frozen: the full collection did not look at it
        now[0] = 11.0
        gc.collect()  # this collection's end thaws
        gc.collect()  # the next one sees everything
        assert alive() is None
        assert gc.get_freeze_count() > 0  # and what survived is frozen again
    finally:
        survivors.stop()
    assert gc.get_freeze_count() == 0 and survivors not in gc.callbacks
