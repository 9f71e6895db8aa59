"""A team at human pace: each annotator takes and labels one item every 5 s, against one app process.

The ramp adds annotators (50, 100, 200, 300, 400, ...) and, at each step, measures the label cycle
(next item + submit, plain HTTP with keep-alive, as bench/run.py's `concurrent`) over a window; the
figure is the most annotators held with cycle p95 <= 150 ms and no error. The same ramp runs against
the floor (bench/floor_app.py: a trivial Gradio handler served the same way) in the same run.

    python -m bench.human_pace [--steps 50,100,200,300,400,500,600] [--window 20]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StepgateClient
from bench.server import ROOT, free_port, start_server
from bench.table import print_table

__all__ = ["human_pace_rows"]

PACE = 5.0  # seconds between one annotator's labels
TARGET_P95_MS = 150.0
STEPS = (50, 100, 200, 300, 400, 500, 600, 800)
PASSWORD = "pace-password"


class _Anonymous(StepgateClient):
    """The floor has no login: the same client, without it."""

    def __init__(self, url: str, timeout: float = 30) -> None:
        self.url, self.timeout = url.rstrip("/"), timeout
        self.http = requests.Session()
        self.session_hash = uuid.uuid4().hex


@dataclass
class _Load:
    url: str
    login: bool
    dataset: str
    stop: threading.Event = field(default_factory=threading.Event)
    cycles: list[tuple[float, float]] = field(default_factory=list)  # (start, seconds)
    errors: list[tuple[float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)
    started: set[int] = field(default_factory=set)  # annotators past their first label
    added: int = 0  # annotators asked for (a failed login is counted among the errors)

    def client(self, k: int) -> StepgateClient | None:
        try:
            return StepgateClient(self.url, f"pace{k}", PASSWORD) if self.login else _Anonymous(self.url)
        except Exception as exc:  # a refused login is a result, not a crash
            with self.lock:
                self.errors.append((time.perf_counter(), f"login: {exc}"))
            return None

    def annotator(self, k: int, client: StepgateClient, first: float) -> None:
        due = first
        while not self.stop.is_set():
            wait = due - time.perf_counter()
            if wait > 0 and self.stop.wait(wait):
                break
            started = time.perf_counter()
            try:
                item = client.run("next_item", self.dataset)
                if item["item_id"] is None:
                    raise RuntimeError("no item left")
                client.run(
                    "submit_label",
                    item["item_id"],
                    item["version_id"],
                    {"earliest_error": 0},
                    uuid.uuid4().hex,
                    PACE,
                )
                with self.lock:
                    self.cycles.append((started, time.perf_counter() - started))
                    self.started.add(k)
            except Exception as exc:
                with self.lock:
                    self.errors.append((started, str(exc)[:120]))
            due = max(due + PACE, time.perf_counter())
        client.close()

    def add(self, count: int, rng: random.Random) -> None:
        """Log the newcomers in first (a team does not log in within the same 5 s), then start them."""
        first, self.added = self.added, self.added + count
        with ThreadPoolExecutor(4) as pool:
            clients = list(pool.map(self.client, range(first, first + count)))
        now = time.perf_counter()
        for k, client in enumerate(clients, start=first):
            if client is None:
                continue
            args = (k, client, now + rng.uniform(0, PACE))
            thread = threading.Thread(target=self.annotator, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)

    def window(self, since: float, until: float) -> tuple[list[float], int]:
        with self.lock:
            cycles = [s for t, s in self.cycles if since <= t < until]
            errors = sum(1 for t, _ in self.errors if since <= t < until)
        return cycles, errors

    def last_error(self) -> str:
        with self.lock:
            return self.errors[-1][1] if self.errors else ""

    def end(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)


def ramp(
    url: str, login: bool, dataset: str, steps: tuple[int, ...], window: float, budget: float
) -> list[dict]:
    """Per step: annotators, cycles measured, p50/p95/p99 ms, labels/s, errors. Stops past the target."""
    load, rng, results = _Load(url, login, dataset), random.Random(0), []
    began = time.perf_counter()
    try:
        for n in steps:
            if time.perf_counter() - began > budget:
                break
            load.add(n - load.added, rng)
            # Logins and each newcomer's first item are the ramp, not the pace: measure after them.
            settle = time.perf_counter() + 60
            while len(load.started) < n and time.perf_counter() < settle:
                time.sleep(0.2)
            time.sleep(PACE)
            since = time.perf_counter()
            time.sleep(window)
            cycles, errors = load.window(since, time.perf_counter())
            p50, p95, p99 = (float(np.percentile(np.array(cycles) * 1000, q)) for q in (50, 95, 99))
            results.append(
                {
                    "annotators": n,
                    "cycles": len(cycles),
                    "p50": p50,
                    "p95": p95,
                    "p99": p99,
                    "rate": len(cycles) / window,
                    "errors": errors,
                }
            )
            if errors:
                results[-1]["error"] = load.last_error()
            if p95 > TARGET_P95_MS or errors:
                break
    finally:
        load.end()
    return results


def _held(results: list[dict]) -> int:
    held = [r["annotators"] for r in results if r["p95"] <= TARGET_P95_MS and not r["errors"]]
    return max(held, default=0)


def _describe(results: list[dict]) -> str:
    return "; ".join(
        f"{r['annotators']}: p95 {r['p95']:.0f} ms ({r['rate']:.0f} labels/s"
        + (f", {r['errors']} errors: {r['error']}" if r["errors"] else "")
        + ")"
        for r in results
    )


def _prepare(workdir: Path, annotators: int, items: int) -> Path:
    from bench.run import DATASET, make_items, timed_import
    from store import Store
    from store.users import hash_password

    source, db = workdir / "pace-items.jsonl", workdir / "pace.duckdb"
    make_items(source, items)
    timed_import(db, source)
    hashed = hash_password(PASSWORD)  # one scrypt hash for every annotator: adding them stays instant
    with Store(db) as store, store.writing() as tx:
        tx.executemany(
            "INSERT INTO annotators (name, role, password_hash) VALUES (?, 'annotator', ?)",
            [(f"pace{k}", hashed) for k in range(annotators)],
        )
    assert DATASET
    return db


def _floor_server() -> tuple[str, subprocess.Popen]:
    port = free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "bench.floor_app", str(port)], cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/gradio_api/info", timeout=2).status_code == 200:
                return url, process
        except requests.RequestException:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the floor app did not start")


def human_pace_rows(
    steps: tuple[int, ...] = STEPS, window: float = 20.0, budget: float = 300.0, items: int = 10_000
) -> list[tuple[str, str]]:
    """The benchmark's rows: the most annotators held at human pace, stepgate and the floor."""
    from bench.run import DATASET

    with tempfile.TemporaryDirectory() as tmp:
        db = _prepare(Path(tmp), max(steps), items)
        server = start_server(db, "--no-demo", "--team")
        try:
            ours = ramp(server.url, True, DATASET, steps, window, budget)
        finally:
            server.stop()
    url, process = _floor_server()
    try:
        floor = ramp(url, False, DATASET, steps, window, budget)
    finally:
        process.terminate()
        process.wait(20)
    return [
        (
            f"a team at human pace (1 label / {PACE:.0f} s each), one process: most annotators with cycle "
            f"p95 <= {TARGET_P95_MS:.0f} ms (shared 2-core machine)",
            f"{_held(ours)} (floor, a trivial Gradio handler: {_held(floor)}); per step {_describe(ours)}",
        ),
        ("  the same ramp on the floor", _describe(floor)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", default=",".join(map(str, STEPS)))
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured per step")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds the ramp may take")
    args = parser.parse_args()
    rows = human_pace_rows(tuple(int(s) for s in args.steps.split(",")), args.window, args.budget)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
