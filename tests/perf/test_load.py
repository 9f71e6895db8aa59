"""Load and faults over HTTP on 127.0.0.1, on DuckDB and on PostgreSQL: 50 annotators at once, and
kill -9 in the middle of it.

Bounded in count and time. Afterwards the log is checked against what the server acknowledged:
nothing lost, nothing counted twice, no item over its quorum, no annotator twice on an item.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from bench.client import ApiError, StepgateClient
from bench.server import Server, start_server
from services.imports import import_file
from store import Store, users
from store.integrity import labelled_past_target, labels_by_request, repeated_labels
from tests.conftest import ENGINES

# serial: its kill -9 waits for 150 acknowledged labels; scripts/test.sh runs it alone, after the rest
pytestmark = [pytest.mark.slow, pytest.mark.serial]

ANNOTATORS = 50
DATASET = "load"


@dataclass
class Ledger:
    """What the clients were told: acknowledged annotation ids and each call's latency."""

    acknowledged: dict[str, int] = field(default_factory=dict)  # request id -> annotation id
    next_latency: list[float] = field(default_factory=list)
    submit_latency: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Database:
    """A DuckDB file, or a PostgreSQL database (the server's own, throwaway) with its image folder."""

    location: str
    files: Path | None
    logs: Path

    def open(self) -> Store:
        return Store(self.location, data_dir=self.files)

    def serve(self) -> Server:
        if self.files is None:
            return start_server(Path(self.location), "--no-demo", "--team")
        # start_server's own --db only names the log file: the later --db is the one the app takes.
        return start_server(
            self.logs / "app.duckdb",
            "--db",
            self.location,
            "--data-dir",
            str(self.files),
            "--no-demo",
            "--team",
        )


@pytest.fixture(params=ENGINES)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    if request.param == "postgresql":
        return Database(request.getfixturevalue("postgres_url"), tmp_path / "files", tmp_path)
    return Database(str(tmp_path / "load.duckdb"), None, tmp_path)


def _dataset(db: Database, items: int, tmp: Path) -> None:
    source = tmp / "load.jsonl"
    rng = random.Random(1)
    with open(source, "w") as fh:
        for i in range(items):
            steps = [f"step {j} of item {i}: x = {rng.randint(0, 99)}" for j in range(rng.randint(3, 6))]
            fh.write(
                json.dumps(
                    {
                        "id": f"load-{i}",
                        "generator": "t",
                        "problem": f"Problem {i}",
                        "steps": steps,
                        "final_answer_correct": True,
                        "label": -1,
                    }
                )
                + "\n"
            )
    with db.open() as store:
        import_file(store, source, format="processbench", dataset=DATASET)
        for k in range(ANNOTATORS):
            users.add_user(store, f"load{k}", "annotator", f"load{k}-password")


def _annotate(url: str, k: int, until: float, ledger: Ledger, stop: threading.Event) -> None:
    rng = random.Random(k)
    try:
        client = StepgateClient(url, f"load{k}", f"load{k}-password", timeout=30)
    except Exception as exc:  # the server may be killed while clients log in
        with ledger.lock:
            ledger.errors.append(f"login {k}: {exc}")
        return
    first = True  # a session's first call builds its Gradio session state (the browser does it on page load)
    while time.monotonic() < until and not stop.is_set():
        try:
            started = time.perf_counter()
            item = client.run("next_item", DATASET)
            if first:
                first = False
                started = time.perf_counter()
                item = client.run("next_item", DATASET)
            with ledger.lock:
                ledger.next_latency.append(time.perf_counter() - started)
            if item["item_id"] is None:
                return
            # Mostly agreeing labels, some disagreement, so that items escalate to a 4th and 5th annotator.
            label = 0 if rng.random() < 0.7 else rng.choice([-1, 1, 2])
            request_id = uuid.uuid4().hex
            for _attempt in range(2 if rng.random() < 0.1 else 1):  # some clients retry their submit
                started = time.perf_counter()
                result = client.run(
                    "submit_label",
                    item["item_id"],
                    item["version_id"],
                    {"earliest_error": label},
                    request_id,
                    2.0,
                )
                with ledger.lock:
                    ledger.submit_latency.append(time.perf_counter() - started)
                    previous = ledger.acknowledged.setdefault(request_id, result["annotation_id"])
                    assert previous == result["annotation_id"], "a retry was stored twice"
        except (ApiError, OSError, ValueError) as exc:
            with ledger.lock:
                ledger.errors.append(str(exc)[:200])
            if stop.is_set():
                return
    client.close()


def _run_load(url: str, seconds: float, ledger: Ledger, stop: threading.Event) -> list[threading.Thread]:
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_annotate, args=(url, k, until, ledger, stop)) for k in range(ANNOTATORS)
    ]
    for t in threads:
        t.start()
    return threads


def _check_log(db: Database, ledger: Ledger) -> dict:
    with db.open() as store:
        stored = labels_by_request(store)
        over_quorum = labelled_past_target(store)
        twice = repeated_labels(store)
        pending_over = store.scalar(
            "SELECT count(*) FROM item_state WHERE status = 'open' AND target > 5"
        )  # never more than max_annotators
    lost = [rid for rid, aid in ledger.acknowledged.items() if stored.get(rid) != aid]
    return {
        "stored": len(stored),
        "lost": lost,
        "over_quorum": over_quorum,
        "twice": twice,
        "pending_over": pending_over,
    }


def _p(samples: list[float]) -> str:
    if not samples:
        return "no samples"
    p50, p95, p99 = np.percentile(np.array(samples) * 1000, [50, 95, 99])
    return f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, p99 {p99:.0f} ms ({len(samples)} calls)"


def test_fifty_annotators_at_once_lose_nothing_and_overfill_nothing(
    database: Database, tmp_path: Path
) -> None:
    db = database
    _dataset(db, 300, tmp_path)
    server = db.serve()
    ledger, stop = Ledger(), threading.Event()
    try:
        for t in _run_load(server.url, 12, ledger, stop):
            t.join(timeout=90)
    finally:
        server.stop()
    report = _check_log(db, ledger)
    print(
        f"\nload, {ANNOTATORS} annotators: next-item {_p(ledger.next_latency)}; submit {_p(ledger.submit_latency)}"
    )
    assert ledger.errors == [], ledger.errors[:5]
    assert len(ledger.acknowledged) >= 20  # bounded in time: correctness, not throughput, is asserted here
    assert report["lost"] == []
    assert report["stored"] == len(ledger.acknowledged)  # nothing stored that was not acknowledged once
    assert report["over_quorum"] == 0 and report["twice"] == 0 and report["pending_over"] == 0


def test_kill_9_in_the_middle_of_load_keeps_every_acknowledged_label(
    database: Database, tmp_path: Path
) -> None:
    db = database
    _dataset(db, 300, tmp_path)
    server = db.serve()
    ledger, stop = Ledger(), threading.Event()
    # Killed once 150 labels are acknowledged, however long a slow machine takes to get there (bounded).
    threads = _run_load(server.url, 240, ledger, stop)
    deadline = time.monotonic() + 240
    while len(ledger.acknowledged) < 150 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.stop(kill=True)  # SIGKILL: no shutdown, no checkpoint
    stop.set()
    for t in threads:
        t.join(timeout=60)
    acknowledged_before = dict(ledger.acknowledged)
    assert len(acknowledged_before) >= 150
    restarted = db.serve()
    try:
        # Leases died with the process: the items come back, and work goes on without over-filling.
        client = StepgateClient(restarted.url, "load0", "load0-password")
        item = client.run("next_item", DATASET)
        assert item["item_id"] is not None
        client.run(
            "submit_label", item["item_id"], item["version_id"], {"earliest_error": 0}, "after-restart", 1.0
        )
        ledger.acknowledged["after-restart"] = -1
    finally:
        restarted.stop()
    ledger.acknowledged.pop("after-restart")
    report = _check_log(db, Ledger(acknowledged=acknowledged_before))
    assert report["lost"] == [], f"{len(report['lost'])} acknowledged labels lost"
    assert report["over_quorum"] == 0 and report["twice"] == 0
