"""Two real app processes (`app.py serve`) over one PostgreSQL database, as behind a load balancer:
a cookie from one works on the other, a logout on one ends it on the other, guesses spread over both
are throttled together, a Gradio session claimed on one is refused to another login on the other;
and two job workers in two processes never run one job twice, and a killed one's job is run by the
other after the stale timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bench.client import StepgateClient
from bench.server import Server, start_server
from services import annotate, generator_settings
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store, items, users
from store import jobs as queue
from store.bulk import write_records
from tests.browser_support import ROOT
from tests.security.support import call_event, config, login, open_page
from tests.services.test_regeneration import FAKE, GATE, REJECT
from tests.store.test_replicas import _record

PASSWORD = "secret-password-1"


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    files = str(tmp_path / "files")
    with Store(postgres_url, data_dir=files) as db:
        with db.writing() as tx:
            write_records(tx, "shared", "step_review", [_record(i) for i in range(10)], "test")
        for name in ("ann", "bob", "cat", "dan"):
            users.add_user(db, name, "annotator", f"{name}-{PASSWORD}")
    # start_server's own --db only names the log file: the later --db is the one the app takes.
    servers = [
        start_server(
            tmp_path / f"replica{r}.duckdb",
            "--db",
            postgres_url,
            "--data-dir",
            files,
            "--no-demo",
            "--team",
            "--no-worker",
            "--login-failures-per-name",
            "4",
        )
        for r in range(2)
    ]
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def _works(http: requests.Session, url: str) -> bool:
    reply = http.get(f"{url}/gradio_api/info", timeout=30)
    assert reply.status_code in (200, 401), reply.text[:200]
    return reply.status_code == 200


def test_sessions_throttling_and_session_hashes_hold_across_two_app_replicas(
    replicas: tuple[Server, Server],
) -> None:
    a, b = replicas
    # a lease handed out by A is handed back by B (after B has handed out work of its own)
    dan_on_b = StepgateClient(b.url, "dan", f"dan-{PASSWORD}")
    assert dan_on_b.run("next_item", "shared")["item_id"] is not None
    cat_on_a = StepgateClient(a.url, "cat", f"cat-{PASSWORD}")
    held = cat_on_a.run("next_item", "shared")["item_id"]
    cat_on_b = StepgateClient(b.url, "cat", f"cat-{PASSWORD}")
    assert held is not None and cat_on_b.run("next_item", "shared")["item_id"] == held
    for client in (dan_on_b, cat_on_a, cat_on_b):
        client.close()

    ann = login(a.url, "ann")
    assert _works(ann, a.url) and _works(ann, b.url)  # A's cookie works on B

    # a Gradio session opened by ann on A is refused to bob on B, which serves bob's own
    bob = login(b.url, "bob")
    conf = config(ann, a.url)
    session_hash = open_page(ann, a.url, conf)
    fn_index = conf["dependencies"][0]["id"]
    status, text = call_event(bob, b.url, fn_index, [], session_hash)
    assert status == 403 and "belongs to another login" in text
    assert call_event(bob, b.url, fn_index, [], uuid.uuid4().hex)[0] == 200

    # logout on A ends the session on B (within B's 2 s recheck)
    done = ann.post(f"{a.url}/logout", headers={"Origin": a.url}, timeout=10, allow_redirects=False)
    assert done.status_code == 303
    ann.cookies.set("stepgate-session", done.request.headers["Cookie"].split("=", 1)[1].split(";")[0])
    assert not _works(ann, a.url)
    started = time.monotonic()
    while _works(ann, b.url) and time.monotonic() - started < 10:
        time.sleep(0.2)
    ended_in = time.monotonic() - started
    print(f"logout on A ended the session on B after {ended_in:.2f} s")
    assert ended_in < 4, "the logout on A did not reach B"
    assert b.url and ann.get(f"{b.url}/", timeout=10, allow_redirects=False).status_code == 303

    # 4 wrong guesses at bob spread over A and B: the 5th is refused on either, even the right one
    for k in range(4):
        url = (a.url, b.url)[k % 2]
        wrong = requests.post(f"{url}/login", data={"username": "bob", "password": "guess"}, timeout=60)
        assert wrong.status_code == 401
    for url in (a.url, b.url):
        right = requests.post(
            f"{url}/login", data={"username": "bob", "password": f"bob-{PASSWORD}"}, timeout=60
        )
        assert right.status_code == 429 and "Too many failed logins" in right.text


_WORKER = """
import sys, time
from store import Store
from services.compose import compose
from services.jobs import Worker
db = Store(sys.argv[1], data_dir=sys.argv[2])
compose(db)  # as app.py does: the job runners registered, the leases chosen
worker = Worker(db, poll_seconds=0.1, stale_seconds=float(sys.argv[3])).start()
print(worker.name, flush=True)
time.sleep(600)
"""

# The team's generator, counting its calls: one line per job it is run for.
_COUNTING = """
import os, subprocess, sys
with open(os.environ["CALLS_LOG"], "a") as log:
    log.write(f"{os.getpid()}\\n")
sys.exit(subprocess.run([sys.executable, sys.argv[1]], stdin=sys.stdin).returncode)
"""


def _queue_regenerations(db: Store, n: int, generator: list[str]) -> list[int]:
    populate_demo(db)
    generator_settings.configure(db, OPERATOR, {"backend": "command", "command": generator})
    for k in range(n):
        user = users.add_user(db, f"rita{k}", "annotator")
        shown = annotate.next_item(db, user, annotate.dataset_for(db, GATE))
        assert shown is not None
        annotate.submit(
            db,
            annotator=user,
            item_id=shown.item.item_id,
            version_id=shown.item.version_id,
            payload=REJECT,
            request_id=uuid.uuid4().hex,
        )
    found = [j.id for j in queue.list_jobs(db, status="queued")]
    assert len(found) == n
    return found


def _start_worker(url: str, files: str, stale: float, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _WORKER, url, files, str(stale)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its generator's processes go with it when it is killed
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def _stop(process: subprocess.Popen, kill: bool = False) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
        process.wait(timeout=30)


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_two_worker_processes_never_run_one_job_twice(postgres_url: str, tmp_path: Path) -> None:
    files, calls = str(tmp_path / "files"), tmp_path / "calls.log"
    counting = tmp_path / "counting.py"
    counting.write_text(_COUNTING)
    generator = [sys.executable, str(counting), FAKE[1]]
    with Store(postgres_url, data_dir=files) as db:
        job_ids = _queue_regenerations(db, 6, generator)
        workers = [_start_worker(postgres_url, files, 5, {"CALLS_LOG": str(calls)}) for _ in range(2)]
        try:
            assert workers[0][1] != workers[1][1]  # host and process id
            assert _wait(lambda: all(queue.get_job(db, j).status == "done" for j in job_ids), 90)
        finally:
            for process, _ in workers:
                _stop(process)
        ended = [queue.get_job(db, j) for j in job_ids]
        assert {j.attempts for j in ended} == {1}
        assert {j.claimed_by for j in ended} <= {name for _, name in workers}
        assert len(calls.read_text().split()) == 6  # the generator ran once per job
        for job in ended:
            assert [v[3] for v in items.version_rows(db, job.item_id)] == ["imported", "regenerated"]


def test_a_killed_workers_job_is_run_by_the_other_after_the_stale_timeout(
    postgres_url: str, tmp_path: Path
) -> None:
    files = str(tmp_path / "files")
    with Store(postgres_url, data_dir=files) as db:
        (job_id,) = _queue_regenerations(db, 1, FAKE)
        slow, slow_name = _start_worker(postgres_url, files, 2, {"FAKE_GENERATOR_MODE": "slow"})
        other = None
        try:
            assert _wait(lambda: queue.get_job(db, job_id).status == "running", 30)
            other, other_name = _start_worker(postgres_url, files, 2, {})
            time.sleep(4)  # two stale timeouts: the slow worker's heartbeat keeps its job
            job = queue.get_job(db, job_id)
            assert job.status == "running" and job.claimed_by == slow_name and job.attempts == 1
            _stop(slow, kill=True)  # kill -9 mid-job
            killed_at = time.monotonic()
            assert _wait(lambda: queue.get_job(db, job_id).status == "done", 30)
            print(f"the killed worker's job was done by the other {time.monotonic() - killed_at:.1f} s later")
            done = queue.get_job(db, job_id)
            assert done.claimed_by == other_name and done.attempts == 2
            assert [v[3] for v in items.version_rows(db, done.item_id)] == ["imported", "regenerated"]
        finally:
            _stop(slow, kill=True)
            if other is not None:
                _stop(other)
