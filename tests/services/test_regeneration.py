"""Reject -> job -> generator -> new version -> back in the gate, with each backend; the queue's
retries, backoff, attempt limit and restarts; CRYSTAL's loop 1."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from services import annotate, generator_settings, jobs, regeneration
from services.access import OPERATOR
from services.annotate import now_utc
from services.demo import populate_demo
from store import Store, items, state, users
from store import jobs as queue

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(ROOT / "tests" / "fake_generator.py")]
GATE = "mathvista-quality-gate"
ACCEPT = {"verdict": "accept", "criteria": dict.fromkeys(("c1", "c2", "c3", "c4"), True), "steps": {}}
REJECT = {
    "verdict": "reject",
    "criteria": {"c1": False, "c2": True, "c3": True, "c4": True},
    "steps": {},
    "reason": "step 1 names a label the figure does not show",
    "note": "step 1 names a label the figure does not show",
}


def _label(store: Store, name: str, dataset: str, payload: dict[str, Any]) -> items.ItemView:
    user = users.get_user(store, name) or users.add_user(store, name, "annotator")
    ds = annotate.dataset_for(store, dataset)
    shown = annotate.next_item(store, user, ds)
    assert shown is not None, f"nothing for {name} in {dataset}"
    annotate.submit(
        store,
        annotator=user,
        item_id=shown.item.item_id,
        version_id=shown.item.version_id,
        payload=payload,
        request_id=uuid.uuid4().hex,
    )
    return shown.item


def _status(store: Store, item_id: int) -> str:
    found = state.get_item_state(store, item_id)
    assert found is not None
    return found.status


def _reject_one(store: Store, name: str = "rita") -> items.ItemView:
    item = _label(store, name, GATE, REJECT)
    assert _status(store, item.item_id) == "rejected"
    return item


def _back_in_the_gate_and_accepted(store: Store, before: items.ItemView) -> items.ItemView:
    after = items.get_item(store, before.item_id)
    assert after is not None and after.version == before.version + 1
    assert items.version_rows(store, before.item_id)[-1][2:] == (before.version_id, "regenerated")
    assert _status(store, before.item_id) == "open"
    again = _label(store, "alma", GATE, ACCEPT)  # another annotator gets the new version in the same gate
    assert again.item_id == before.item_id and again.version_id == after.version_id
    assert _status(store, before.item_id) == "accepted"
    return after


def test_a_reject_comes_back_regenerated_by_the_command_backend(demo_store: Store) -> None:
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    before = _reject_one(demo_store)
    (job,) = queue.list_jobs(demo_store)
    assert (job.kind, job.status, job.loop) == ("regenerate", "queued", "loop2")
    assert job.payload["failed"] == ["c1"] and "figure" in job.payload["reason"]
    summary = jobs.run_pending(demo_store)
    assert summary.done == 1 and summary.failed == 0
    after = _back_in_the_gate_and_accepted(demo_store, before)
    assert after.steps["candidate"][0].startswith("Regenerated step 1")
    assert after.meta["regeneration"]["loop"] == "loop2" and after.image_paths == before.image_paths
    assert queue.get_job(demo_store, job.id).result_version_id == after.version_id  # type: ignore[union-attr]


class _ChatServer:
    """A local OpenAI-compatible chat-completions endpoint: answers, errors or stalls as told."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                if owner.mode == "error":
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b"model overloaded")
                    return
                if owner.mode == "slow":
                    time.sleep(2)
                content = json.dumps({"reasoning_steps": ["A new first step.", "A new second step."]})
                if owner.mode == "prose":
                    content = "I cannot do that."
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat() -> Iterator[_ChatServer]:
    server = _ChatServer()
    yield server
    server.close()


def test_a_reject_comes_back_regenerated_by_the_http_backend_through_errors_and_timeouts(
    demo_store: Store, chat: _ChatServer
) -> None:
    generator_settings.configure(
        demo_store,
        OPERATOR,
        {"backend": "http", "base_url": chat.url, "model": "tiny", "api_key": "k-1", "timeout_seconds": "1"},
    )
    before = _reject_one(demo_store)
    chat.mode = "error"
    jobs.run_pending(demo_store, backoff_seconds=0.0, limit=1)
    (job,) = queue.list_jobs(demo_store)
    assert (
        job.status == "queued" and "HTTP 500" in (job.error or "") and "model overloaded" in (job.error or "")
    )
    chat.mode = "slow"
    jobs.run_pending(demo_store, backoff_seconds=0.0, limit=1)
    job = queue.list_jobs(demo_store)[0]
    assert job.status == "queued" and "did not answer within 1 s" in (job.error or "")
    assert len(job.errors) == 2 and items.get_item(demo_store, before.item_id).version == before.version  # type: ignore[union-attr]
    chat.mode = "ok"
    jobs.run_pending(demo_store, backoff_seconds=0.0)
    assert queue.get_job(demo_store, job.id).status == "done"  # type: ignore[union-attr]
    after = _back_in_the_gate_and_accepted(demo_store, before)
    assert after.steps["candidate"] == ["A new first step.", "A new second step."]
    sent = chat.requests[-1]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer k-1" and sent["model"] == "tiny"
    parts = sent["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")  # the figure goes along
    assert "c1" in parts[0]["text"] and "figure does not show" in parts[0]["text"]


def test_a_job_stops_at_its_attempt_limit_and_an_admin_sees_why_and_retries(
    demo_store: Store, chat: _ChatServer
) -> None:
    generator_settings.configure(
        demo_store, OPERATOR, {"backend": "http", "base_url": chat.url, "model": "m"}
    )
    before = _reject_one(demo_store)
    chat.mode = "prose"
    summary = jobs.run_pending(demo_store, backoff_seconds=0.0)
    (job,) = queue.list_jobs(demo_store)
    assert summary.failed == 1 and job.status == "failed" and job.attempts == 3
    assert "not JSON" in (job.error or "") and _status(demo_store, before.item_id) == "rejected"
    assert jobs.list_jobs(demo_store, OPERATOR, "failed") == [job]
    chat.mode = "ok"
    assert jobs.retry(demo_store, OPERATOR) == 1
    assert jobs.run_pending(demo_store).done == 1
    _back_in_the_gate_and_accepted(demo_store, before)


def test_without_a_generator_a_rejected_item_waits_spending_no_attempt_then_runs(demo_store: Store) -> None:
    before = _reject_one(demo_store)  # a fresh install: no generator configured
    summary = jobs.run_pending(demo_store, backoff_seconds=0.0)
    (job,) = queue.list_jobs(demo_store)
    assert summary.done == summary.failed == summary.retrying == 0 and summary.waiting == 1
    assert job.status == "queued" and job.attempts == 0 and not job.error
    assert jobs.WAITING_FOR_GENERATOR in summary.line()
    admin = users.add_user(demo_store, "ada", "admin")
    (row,) = jobs.standing(demo_store, admin)
    assert row["standing"] == jobs.WAITING_FOR_GENERATOR and row["reason"] == REJECT["reason"]
    assert jobs.job_rows(demo_store, admin)[0]["status"] == jobs.WAITING_FOR_GENERATOR
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    assert jobs.run_pending(demo_store).done == 1  # configured: the waiting job runs, no retry needed
    _back_in_the_gate_and_accepted(demo_store, before)


def test_backoff_doubles_and_holds_a_job_back(demo_store: Store, monkeypatch) -> None:
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    monkeypatch.setenv("FAKE_GENERATOR_MODE", "fail")  # every attempt fails, saying why
    _reject_one(demo_store)
    summary = jobs.run_pending(demo_store, backoff_seconds=60.0)
    (job,) = queue.list_jobs(demo_store)
    assert summary.retrying == 1 and job.waiting(now_utc()) and "the pipeline is down" in (job.error or "")
    assert jobs.run_pending(demo_store).done == 0  # still backing off: nothing runs
    first_wait = job.run_after - job.updated_at  # type: ignore[operator]
    assert 59 <= first_wait.total_seconds() <= 61


def test_a_restart_mid_job_loses_nothing_and_repeats_nothing_finished(tmp_path: Path) -> None:
    path = tmp_path / "restart.duckdb"
    store = Store(path)
    populate_demo(store)
    generator_settings.configure(store, OPERATOR, {"backend": "command", "command": FAKE})
    first = _reject_one(store)
    second = _reject_one(store, "rolf")
    assert jobs.run_pending(store, limit=1).done == 1  # the first finished before the restart
    claimed = queue.claim(store, "worker-that-dies", now_utc())  # the process stops mid-job
    assert claimed is not None and claimed.item_id == second.item_id
    store.close()

    store = Store(path)
    try:
        worker = jobs.Worker(store, poll_seconds=0.05).start()  # the app starting again
        deadline = time.time() + 20
        while time.time() < deadline and queue.get_job(store, claimed.id).status != "done":  # type: ignore[union-attr]
            time.sleep(0.05)
        worker.stop()
        done = queue.get_job(store, claimed.id)
        assert done is not None and done.status == "done" and done.attempts == 2
        assert [v[3] for v in items.version_rows(store, second.item_id)] == ["imported", "regenerated"]
        assert [v[3] for v in items.version_rows(store, first.item_id)] == ["imported", "regenerated"]
        assert jobs.run_pending(store).done == 0  # nothing finished runs again
    finally:
        store.close()


def test_command_backend_errors_say_what_the_program_said(demo_store: Store, monkeypatch) -> None:
    _reject_one(demo_store)
    for mode, expected, timeout in (
        ("fail", "exited with 3: the pipeline is down", "60"),
        ("garbage", "not JSON", "60"),  # not 1 s: a loaded machine took longer to start the program
        ("slow", "1 s", "1"),
    ):
        generator_settings.configure(
            demo_store, OPERATOR, {"backend": "command", "command": FAKE, "timeout_seconds": timeout}
        )
        monkeypatch.setenv("FAKE_GENERATOR_MODE", mode)
        jobs.run_pending(demo_store, backoff_seconds=0.0, limit=1)
        assert expected in (queue.list_jobs(demo_store)[0].error or "")


def test_the_web_never_sets_the_command_and_only_admins_configure(demo_store: Store) -> None:
    from services.errors import InvalidInput, NotAllowed

    admin = users.add_user(demo_store, "ada", "admin")
    annotator = users.add_user(demo_store, "ann", "annotator")
    with pytest.raises(InvalidInput, match="command line only"):
        generator_settings.configure(demo_store, admin, {"command": "rm -rf /"})
    with pytest.raises(NotAllowed):
        generator_settings.configure(demo_store, annotator, {"backend": "http"})
    with pytest.raises(NotAllowed):
        jobs.list_jobs(demo_store, annotator)
    shown = generator_settings.shown_settings(
        generator_settings.configure(demo_store, admin, {"api_key": "secret", "prompt.judge": "Judge $steps"})
    )
    assert shown["api_key"] == "set" and "secret" not in json.dumps(shown)
    assert generator_settings.generator_config(demo_store).prompt("judge") == "Judge $steps"


def test_loop_one_judges_a_regenerated_version_before_people_and_flags_it_past_its_attempts(
    demo_store: Store, monkeypatch
) -> None:
    generator_settings.configure(
        demo_store, OPERATOR, {"backend": "command", "judge_backend": "command", "command": FAKE}
    )
    passed = _reject_one(demo_store)
    jobs.run_pending(demo_store)
    kinds = [(j.kind, j.loop, j.status) for j in queue.item_jobs(demo_store, passed.item_id)]
    assert kinds == [("regenerate", "loop2", "done"), ("judge", "loop1", "done")]
    assert _status(demo_store, passed.item_id) == "open"

    monkeypatch.setenv("FAKE_GENERATOR_MODE", "judge_fail")
    last = max(j.id for j in queue.list_jobs(demo_store))
    flagged = _reject_one(demo_store, "rolf")
    jobs.run_pending(demo_store)
    history = [(j.kind, j.loop) for j in queue.item_jobs(demo_store, flagged.item_id) if j.id > last]
    assert history == [("regenerate", "loop2")] + [("judge", "loop1"), ("regenerate", "loop1")] * 2 + [
        ("judge", "loop1")
    ]
    st = state.get_item_state(demo_store, flagged.item_id)
    assert st is not None and st.status == "open" and st.decision["flag"] == "validator_exhausted"  # type: ignore[index]
    assert st.decision["failed"] == ["c4"]  # type: ignore[index]
    # The people at the gate see the flag with what the judge still failed (the panel's header).
    from services import gate

    assert "still failed C4" in gate.judge_flag(demo_store, flagged.item_id)
    untouched = [
        i
        for i in items.item_ids(demo_store, flagged.dataset_id)
        if i not in {passed.item_id, flagged.item_id}
    ]
    assert gate.judge_flag(demo_store, untouched[0]) == ""
    ds = annotate.dataset_for(demo_store, GATE)
    shares = regeneration.shares(demo_store, ds)
    total = len(items.item_ids(demo_store, ds.id))
    assert (
        shares["loop2"]["items"] == len({passed.item_id, flagged.item_id}) == shares["loop1"]["items"]
        and shares["loop2"]["of"] == total
    )
    from store.jobs_read import gating_counts

    counts = gating_counts(demo_store, ds.id)  # the QC dashboard's rejection and regeneration counts
    assert (
        counts["items re-iterated (loop1)"] == counts["items re-iterated (loop2)"] == shares["loop2"]["items"]
    )


def test_the_jobs_verbs_configure_run_list_and_retry(tmp_path: Path, capsys) -> None:
    import app

    db = str(tmp_path / "cli.duckdb")
    with Store(db) as store:
        populate_demo(store)
        generator_settings.configure(
            store, OPERATOR, {"job_max_attempts": 1}
        )  # jobs made from now on get one attempt
        before = _reject_one(store)

    def run(*argv: str) -> tuple[int, str, str]:
        code = app.main([*argv, "--db", db])
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = run("jobs", "run")  # no generator: the job waits for one, spending no attempt
    assert code == 0 and "0 done" in out and "0 failed" in out and "1 waiting for a generator" in out
    code, out, _ = run("jobs", "list", "--status", "queued")
    assert "regenerate" in out and "attempt 0/1" in out
    code, out, _ = run("jobs", "config", "backend=command", f"command={' '.join(FAKE)}")
    assert code == 0 and '"backend": "command"' in out and "fake_generator.py" in out
    assert run("jobs", "retry")[1].startswith("queued again: 0")  # nothing failed
    code, out, _ = run("jobs", "run")
    assert code == 0 and "1 done" in out
    code, out, _ = run("jobs", "perturb", GATE, "--dataset", "figures", "--type", "image", "--limit", "2")
    assert code == 0 and "2 unit(s)" in out
    assert "2 done" in run("jobs", "run")[1]
    code, _, err = run("jobs", "config", "backend=gpu")
    assert code == 1 and "backend must be one of none, http, command" in err
    code, _, err = run("jobs", "retry", "999")
    assert code == 1 and "no job 999" in err
    with Store(db) as store:
        assert items.get_item(store, before.item_id).version == 2  # type: ignore[union-attr]


def test_a_failed_image_variant_comes_back_from_the_built_in_backend_and_passes(demo_store: Store) -> None:
    from services import perturbation
    from tasks.perturbation_check import CHECKLISTS

    perturbation.create_check_dataset(demo_store, OPERATOR, GATE, "figures", "image", limit=1)
    jobs.run_pending(demo_store)
    fails = {"checks": {"I1": True, "I2": False}}
    before = _label(demo_store, "cleo", "figures", fails)
    assert _status(demo_store, before.item_id) == "waiting"
    assert jobs.run_pending(demo_store).done == 1
    after = items.get_item(demo_store, before.item_id)
    assert after is not None and after.version == before.version + 1
    assert items.version_rows(demo_store, before.item_id)[-1][2:] == (before.version_id, "regenerated")
    again = _label(demo_store, "dora", "figures", {"checks": dict.fromkeys(CHECKLISTS["image"], True)})
    assert again.version_id == after.version_id and _status(demo_store, before.item_id) == "accepted"


@pytest.mark.slow
def test_the_app_killed_mid_job_runs_it_again_on_restart_and_stores_one_version(
    tmp_path: Path, monkeypatch
) -> None:
    from tests.browser_support import cli, running

    db = tmp_path / "killed.duckdb"
    with Store(db) as store:
        populate_demo(store)
        generator_settings.configure(store, OPERATOR, {"backend": "command", "command": FAKE})
        before = _reject_one(store)
    monkeypatch.setenv("FAKE_GENERATOR_MODE", "slow")  # the generator is mid-answer when the app dies
    with running(db, "--no-demo") as server:
        deadline = time.time() + 60
        while time.time() < deadline and "\trunning\t" not in cli("jobs", "list", db=db).stdout:
            time.sleep(0.2)
        assert "\trunning\t" in cli("jobs", "list", db=db).stdout
        server.stop(kill=True)
    monkeypatch.delenv("FAKE_GENERATOR_MODE")
    with running(db, "--no-demo"):
        deadline = time.time() + 60
        while time.time() < deadline and "\tdone\t" not in cli("jobs", "list", db=db).stdout:
            time.sleep(0.2)
        listed = cli("jobs", "list", db=db).stdout
    assert "\tdone\tattempt 2/3" in listed
    with Store(db) as store:
        assert [v[3] for v in items.version_rows(store, before.item_id)] == ["imported", "regenerated"]
        assert jobs.run_pending(store).done == 0


def test_every_item_sent_back_is_listed_with_where_it_stands_and_loop_two_stops_at_its_cap(
    demo_store: Store,
) -> None:
    generator_settings.configure(demo_store, OPERATOR, {"loop2_max_restarts": 1, "job_max_attempts": 1})
    first = _reject_one(demo_store)  # no backend: its job waits for one, with the annotator's reason
    jobs.run_pending(demo_store)
    admin = users.add_user(demo_store, "ada", "admin")
    (row,) = jobs.standing(demo_store, admin)
    assert row["item"] == first.external_id and row["standing"] == jobs.WAITING_FOR_GENERATOR
    assert row["reason"] == REJECT["reason"] and not row["last error"]
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    jobs.run_pending(demo_store)
    assert jobs.standing(demo_store, admin) == []  # back in the gate, open
    again = _label(
        demo_store, "rolf", GATE, REJECT
    )  # a second reject of the regenerated version: past the cap
    assert again.item_id == first.item_id and _status(demo_store, first.item_id) == "failed"
    (row,) = jobs.standing(demo_store, admin)
    assert row["state"] == "failed" and "loop 2 stops at 1 restarts" in row["reason"]


def test_loop_one_judges_imported_items_before_people_and_counts_its_attempts_per_round(
    demo_store: Store, monkeypatch
) -> None:
    generator_settings.configure(
        demo_store, OPERATOR, {"backend": "command", "judge_backend": "command", "command": FAKE}
    )
    monkeypatch.setenv("FAKE_GENERATOR_MODE", "judge_fail")
    ds = annotate.dataset_for(demo_store, GATE)
    total = len(items.item_ids(demo_store, ds.id))
    assert regeneration.judge_pending(demo_store, ds, OPERATOR) == total
    ann = users.add_user(demo_store, "ann", "annotator")
    assert annotate.next_item(demo_store, ann, ds) is None  # nobody sees an item before the judge
    jobs.run_pending(demo_store)
    flags = [state.get_item_state(demo_store, i) for i in items.item_ids(demo_store, ds.id)]
    assert all(
        f is not None and f.status == "open" and f.decision["flag"] == "validator_exhausted" for f in flags
    )  # type: ignore[index]

    rejected = _reject_one(demo_store)  # a human reject starts a new round: loop 1 gets its 2 attempts again
    last = max(j.id for j in queue.item_jobs(demo_store, rejected.item_id))
    jobs.run_pending(demo_store)
    kinds = [(j.kind, j.loop) for j in queue.item_jobs(demo_store, rejected.item_id) if j.id >= last]
    assert kinds == [("regenerate", "loop2")] + [("judge", "loop1"), ("regenerate", "loop1")] * 2 + [
        ("judge", "loop1")
    ]
    from store import datasets

    datasets.update_settings(demo_store, GATE, {"annotators_per_item": 2})
    monkeypatch.delenv("FAKE_GENERATOR_MODE")
    _label(demo_store, "alma", GATE, ACCEPT)  # one of two labels: the item is open and people have started
    assert regeneration.judge_pending(demo_store, ds, OPERATOR) == total - 1  # that item is left to people


def test_the_endpoint_and_key_come_from_the_environment_and_an_unreachable_one_says_so() -> None:
    from services.generation import ChatBackend, GenerationError, Request, config_from

    env = {
        "STEPGATE_GENERATOR_URL": "http://127.0.0.1:9/v1",
        "STEPGATE_GENERATOR_MODEL": "m",
        "OPENAI_API_KEY": "k",
    }
    config = config_from({"backend": "http", "timeout_seconds": 2}, env)
    assert (config.base_url, config.model, config.api_key) == ("http://127.0.0.1:9/v1", "m", "k")
    assert config_from({"base_url": "http://127.0.0.1:1/v1"}, env).base_url == "http://127.0.0.1:1/v1"
    with pytest.raises(
        GenerationError, match=re.escape("cannot reach http://127.0.0.1:9/v1/chat/completions")
    ):
        ChatBackend(config).generate(Request("synonym", {"step": "s", "candidates": 5}))
    with pytest.raises(GenerationError, match="no base URL"):
        ChatBackend(config_from({}, {}))


def test_with_a_judge_configured_imported_gate_items_go_to_it_before_people(tmp_path: Path) -> None:
    from services import data

    with Store(tmp_path / "judged.duckdb") as store:
        generator_settings.configure(store, OPERATOR, {"judge_backend": "command", "command": FAKE})
        outcome = data.import_file(
            store, OPERATOR, ROOT / "demo_data" / "crystal_demo.jsonl", format="crystal", dataset="judged"
        )
        assert "10 item(s) go to the judge model first" in outcome.summary()
        ds = annotate.dataset_for(store, "judged")
        assert {_status(store, i) for i in items.item_ids(store, ds.id)} == {"judging"}
        assert annotate.next_item(store, users.add_user(store, "early", "annotator"), ds) is None
        jobs.run_pending(store)  # the fake judge passes every item: now people get them
        assert {_status(store, i) for i in items.item_ids(store, ds.id)} == {"open"}
