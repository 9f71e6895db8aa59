"""A team over PostgreSQL: several `python app.py serve` replicas on one database, annotators each bound
to one replica (as a sticky load balancer binds them), labelling over plain HTTP as bench/client.py does.

The load test (tests/perf/test_replicas_load.py) runs `label_with_team` with a replica killed by SIGKILL in
the middle; the benchmark rows (`replica_rows`, called by bench/run.py) put labels/s and cycle p95 of
one process on DuckDB, one on PostgreSQL and four replicas on PostgreSQL beside the floor (a trivial
Gradio handler, bench/floor_app.py), measured in the same run.

    python -m bench.replicas [--replicas 4] [--annotators 32] [--seconds 20] [--items 2000]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import ApiError, StepgateClient
from bench.server import Server, start_server
from bench.table import print_table

__all__ = ["Team", "label_with_team", "lock_sampler", "replica_rows", "start_replicas"]

DATASET = "bench"


def password(name: str) -> str:
    return f"{name}-password"


def start_replicas(url: str, files: Path, count: int, logs: Path) -> list[Server]:
    """`count` app processes over the PostgreSQL database at `url`, started together."""

    def one(r: int) -> Server:
        # start_server's own --db only names the log file: the later --db is the one the app takes.
        return start_server(
            logs / f"replica{r}.duckdb",
            "--db",
            url,
            "--data-dir",
            str(files),
            "--no-demo",
            "--team",
            timeout=300,  # four starting together on a loaded machine
        )

    with ThreadPoolExecutor(count) as pool:
        started = [pool.submit(one, r) for r in range(count)]
        servers = []
        for future in started:
            try:
                servers.append(future.result())
            except Exception:
                for server in servers:
                    server.stop()
                raise
    return servers


@dataclass
class Team:
    """What the clients were told, and when."""

    acknowledged: dict[str, int] = field(default_factory=dict)  # request id -> annotation id
    handed: dict[int, set[str]] = field(default_factory=dict)  # item id -> annotators it was handed to
    cycles: list[float] = field(default_factory=list)  # seconds of each next-item + submit
    next_calls: list[float] = field(default_factory=list)  # seconds of each next-item alone
    submit_calls: list[float] = field(default_factory=list)  # and of each submit
    errors: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)  # annotators who logged in again on another replica
    retried: int = 0  # submits in flight at the kill, sent again (same request id) on the new replica
    acknowledged_after_kill: int = 0
    killed: int | None = None  # the replica killed with SIGKILL
    elapsed: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def labels_per_s(self) -> float:
        return len(self.cycles) / self.elapsed if self.elapsed else 0.0

    def cycle_ms(self, q: float, calls: str = "cycles") -> float:
        seconds = getattr(self, calls)
        return float(np.percentile(np.array(seconds) * 1000, q)) if seconds else float("nan")


def _agreeing(rng: random.Random) -> dict[str, Any]:
    return {"earliest_error": 0}


def _login(url: str, name: str) -> StepgateClient:
    return StepgateClient(url, name, password(name), timeout=60)


def label_with_team(
    urls: list[str],
    names: list[str],
    *,
    seconds: float,
    dataset: str = DATASET,
    choose: Callable[[random.Random], dict[str, Any]] = _agreeing,
    kill: Callable[[int], None] | None = None,
    kill_after: int | None = None,
    connect: Callable[[str, str], StepgateClient] = _login,
) -> Team:
    """Annotator k logs in on replica k % len(urls); once all are in, each labels (next item, submit)
    until the dataset has nothing left for anyone or `seconds` pass: an annotator with nothing left asks
    again while others still label, since their labels can raise an item's target (a disagreement).
    With `kill_after`, once that many labels are acknowledged `kill(0)` kills replica 0: its annotators
    log in on another replica, send again the submit they had in flight (the same request id: stored
    once either way) and go on."""
    team, victim = Team(), 0
    killed = threading.Event()
    clock: dict[str, float] = {}
    # Logins are not labelling: the clock starts when every annotator is in.
    ready = threading.Barrier(len(names), action=lambda: clock.update(began=time.perf_counter()))
    idle: set[str] = set()  # annotators whose last next item was "nothing left"
    labelling = [len(names)]  # annotators still in the loop

    def acknowledge(request_id: str, annotation_id: int) -> None:
        with team.lock:
            previous = team.acknowledged.setdefault(request_id, annotation_id)
            if previous != annotation_id:
                team.errors.append(f"request {request_id} acknowledged as {previous} and {annotation_id}")
            if killed.is_set():
                team.acknowledged_after_kill += 1
            due = kill_after is not None and len(team.acknowledged) >= kill_after and not killed.is_set()
            if due:
                killed.set()  # before the signal: a client that sees its replica fail knows why
        if due and kill is not None:
            kill(victim)
            team.killed = victim

    def annotator(k: int) -> None:
        name, rng = names[k], random.Random(k)
        replica = k % len(urls)
        pending: tuple[int, int, dict[str, Any], str] | None = None  # a submit not acknowledged yet
        client: StepgateClient | None = None
        try:
            try:
                client = connect(urls[replica], name)
            except (ApiError, OSError, ValueError) as exc:
                with team.lock:
                    team.errors.append(f"{name}: login on replica {replica}: {exc}"[:300])
            ready.wait(timeout=seconds + 120)
            if client is None:
                return
            until = clock["began"] + seconds
            while pending is not None or time.perf_counter() < until:
                try:
                    if client is None:
                        client = connect(urls[replica], name)
                    started = time.perf_counter()
                    if pending is None:
                        item = client.run("next_item", dataset)
                        if item["item_id"] is None:
                            with team.lock:
                                idle.add(name)
                                if len(idle) >= labelling[0]:
                                    return  # nobody has work in flight: nothing can reopen
                            time.sleep(0.2)
                            continue
                        with team.lock:
                            idle.discard(name)
                            team.next_calls.append(time.perf_counter() - started)
                            team.handed.setdefault(int(item["item_id"]), set()).add(name)
                        pending = (item["item_id"], item["version_id"], choose(rng), uuid.uuid4().hex)
                    item_id, version_id, payload, request_id = pending
                    sent = time.perf_counter()
                    result = client.run("submit_label", item_id, version_id, payload, request_id, 3.0)
                    pending = None
                    with team.lock:
                        team.submit_calls.append(time.perf_counter() - sent)
                        team.cycles.append(time.perf_counter() - started)
                    acknowledge(request_id, int(result["annotation_id"]))
                except (ApiError, OSError, ValueError) as exc:
                    if not (killed.is_set() and replica == victim):
                        with team.lock:
                            team.errors.append(f"{name} on replica {replica}: {exc}"[:300])
                        return
                    # A sticky balancer sends the annotator to a live replica: log in there, go on.
                    live = [r for r in range(len(urls)) if r != victim]
                    replica = live[k % len(live)]
                    if client is not None:
                        client.close()
                    client = None
                    with team.lock:
                        team.moved.append(name)
                        team.retried += pending is not None
        finally:
            with team.lock:
                labelling[0] -= 1
                idle.discard(name)
            if client is not None:
                client.close()

    threads = [threading.Thread(target=annotator, args=(k,)) for k in range(len(names))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 240)
    team.elapsed = time.perf_counter() - clock.get("began", time.perf_counter())
    return team


@contextmanager
def lock_sampler(url: str, key: int, every: float = 0.01) -> Iterator[dict[str, float]]:
    """Samples pg_locks while the block runs: how many transactions wait on the advisory lock `key`
    (in either mode), how often one holds it exclusively (imports, settings: every other writer waits)
    or shared (labels: none waits for another), how often an exclusive holder is idle in its transaction
    (the server waits on the app), and how many wait on an item's lock or another transaction's row lock
    (two submits on one item). Yields a dict filled at exit."""
    import psycopg

    out: dict[str, float] = {}
    stop = threading.Event()
    samples: list[tuple[int, int, int, int, int]] = []
    high, low = (key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF

    def sample() -> None:
        with psycopg.connect(url, autocommit=True) as con:
            while not stop.is_set():
                # the write lock: one bigint key (objsubid 1); an item's lock: the two-key space (objsubid 2)
                write = "l.locktype = 'advisory' AND l.objsubid = 1 AND l.classid::bigint = %s AND l.objid::bigint = %s"
                item = "(l.locktype IN ('transactionid', 'tuple') OR (l.locktype = 'advisory' AND l.objsubid = 2))"
                row = con.execute(
                    f"SELECT count(*) FILTER (WHERE {write} AND NOT l.granted), "
                    f"count(*) FILTER (WHERE {write} AND l.granted AND l.mode = 'ExclusiveLock'), "
                    f"count(*) FILTER (WHERE {write} AND l.granted AND l.mode = 'ExclusiveLock' "
                    " AND a.state = 'idle in transaction'), "
                    f"count(*) FILTER (WHERE {write} AND l.granted AND l.mode = 'ShareLock'), "
                    f"count(*) FILTER (WHERE {item} AND NOT l.granted) "
                    "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
                    f"WHERE ({write}) OR {item}",
                    [high, low] * 5,
                ).fetchone()
                samples.append(tuple(int(v) for v in row))  # type: ignore[arg-type]
                stop.wait(every)

    thread = threading.Thread(target=sample, daemon=True)
    began = time.perf_counter()
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join(10)
        seen = np.array(samples or [(0, 0, 0, 0, 0)])
        held = seen[:, 1] > 0
        out.update(
            waiters=float(seen[:, 0].mean()),
            held=float(held.mean()),
            holder_idle=float((seen[:, 2] > 0).sum() / max(1, held.sum())),
            shared=float(seen[:, 3].mean()),
            row_waiters=float(seen[:, 4].mean()),
            seconds=time.perf_counter() - began,
        )


def _ticks(pid: int, children: bool = False) -> int:
    """A process's CPU time in clock ticks (user + system; with `children`, of its reaped children too)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    # after the name: state is fields[0], so utime (14th field of the line) is fields[11]
    return sum(int(v) for v in fields[11 : 15 if children else 13])


def _postgres_ticks(data: Path) -> int:
    """CPU ticks of a PostgreSQL server: the postmaster with its reaped backends, and live backends."""
    try:
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    total = _ticks(postmaster, children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == postmaster:
            total += _ticks(int(stat.parent.name))
    return total


@contextmanager
def cpu_meter(data: Path, pids: list[int]) -> Iterator[dict[str, float]]:
    """CPU seconds spent while the block runs by the PostgreSQL server whose data folder is `data` and by
    the app processes `pids`: what a label costs the database and the app, whatever the machine's load
    (the capacity model in docs/PERFORMANCE.md divides cores by these). Yields a dict filled at exit."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    db0, app0 = _postgres_ticks(data), sum(_ticks(p) for p in pids)
    try:
        yield out
    finally:
        out.update(db=(_postgres_ticks(data) - db0) / tick, app=(sum(_ticks(p) for p in pids) - app0) / tick)


# --- the benchmark rows ---


def _prepare(store: Any, source: Path, names: list[str]) -> None:
    from services.imports import import_file
    from store import users

    import_file(store, source, format="processbench", dataset=DATASET)
    for name in names:
        users.add_user(store, name, "annotator", password(name))


def _warm(urls: list[str], name: str, connect: Callable[[str, str], StepgateClient] = _login) -> None:
    """One next-item on each server before the clock: a process's first API call loads the dataset's
    pool and what Gradio imports on first use (seconds), which a window of a few seconds would count."""
    for url in urls:
        client = connect(url, name)
        try:
            client.run("next_item", DATASET)
        finally:
            client.close()


def _row(label: str, team: Team, floor: Team, extra: str = "") -> tuple[str, str]:
    ratio = team.labels_per_s / floor.labels_per_s if floor.labels_per_s else float("nan")
    errors = f", {len(team.errors)} errors: {team.errors[0]}" if team.errors else ""
    return (
        label,
        f"{team.labels_per_s:.1f} labels/s ({ratio:.0%} of the floor); cycle p50/p95 "
        f"{team.cycle_ms(50):.0f} / {team.cycle_ms(95):.0f} ms (next item {team.cycle_ms(50, 'next_calls'):.0f} / "
        f"{team.cycle_ms(95, 'next_calls'):.0f}, submit {team.cycle_ms(50, 'submit_calls'):.0f} / "
        f"{team.cycle_ms(95, 'submit_calls'):.0f}){extra}{errors}",
    )


def replica_rows(
    workdir: Path, replicas: int = 4, annotators: int = 32, seconds: float = 20.0, items: int = 2000
) -> list[tuple[str, str]]:
    """labels/s and cycle p95 with `annotators` at full speed: one process on DuckDB, one on PostgreSQL,
    `replicas` processes on PostgreSQL, and the floor, in this run; plus the write lock's queue."""
    from bench.human_pace import _Anonymous, _floor_server
    from bench.run import make_items
    from store import Store
    from store.engines import _WRITE_LOCK
    from store.integrity import held_past_target, labelled_past_target, repeated_labels
    from tests.pg_support import PostgresServer, find_bin

    bin_dir = find_bin()
    if bin_dir is None:
        return [
            (
                "replicas on PostgreSQL",
                "not measured: PostgreSQL is not installed (apt-get install postgresql)",
            )
        ]
    names = [f"rep{k}" for k in range(annotators)]
    source = workdir / "replica-items.jsonl"
    make_items(source, items)
    rows: list[tuple[str, str]] = []

    def anonymous(url: str, _name: str) -> StepgateClient:  # the floor has no login
        return _Anonymous(url)

    url, process = _floor_server()
    try:
        _warm([url], names[0], anonymous)
        floor = label_with_team([url], names, seconds=seconds, connect=anonymous)
    finally:
        process.terminate()
        process.wait(20)
    rows.append(
        _row(f"floor: {annotators} annotators on a trivial Gradio handler, one process", floor, floor)
    )

    db = workdir / "replica-single.duckdb"
    with Store(db) as store:
        _prepare(store, source, names)
    server = start_server(db, "--no-demo", "--team")
    try:
        _warm([server.url], names[0])
        single = label_with_team([server.url], names, seconds=seconds)
    finally:
        server.stop()
    rows.append(_row(f"{annotators} annotators, one process, DuckDB", single, floor))

    pg = PostgresServer(bin_dir).start()
    try:
        for count in (1, replicas):
            pg_url, files = pg.new_database(), workdir / f"replica-files-{count}"
            with Store(pg_url, data_dir=files) as store:
                _prepare(store, source, names)
            servers = start_replicas(pg_url, files, count, workdir)
            try:
                _warm([s.url for s in servers], names[0])
                with (
                    lock_sampler(pg_url, _WRITE_LOCK) as lock,
                    cpu_meter(pg.data, [s.process.pid for s in servers]) as cpu,
                ):
                    team = label_with_team([s.url for s in servers], names, seconds=seconds)
            finally:
                for s in servers:
                    s.stop()
            with Store(pg_url, data_dir=files) as store:
                over = labelled_past_target(store) + held_past_target(store, _now()) + repeated_labels(store)
            # Little's law: mean waiters / label rate is the wait on the lock per label.
            rate = team.labels_per_s or float("nan")
            labels = max(1, len(team.cycles))
            extra = (
                f"; write lock held exclusively {lock['held']:.0%} of the time, held shared by "
                f"{lock['shared']:.2f} transactions on average, {lock['waiters']:.2f} waiting on it "
                f"(~{lock['waiters'] / rate * 1000:.1f} ms of lock wait a label), {lock['row_waiters']:.2f} "
                f"waiting on an item's lock or a row (~{lock['row_waiters'] / rate * 1000:.1f} ms a label); CPU a label: "
                f"database {cpu['db'] / labels * 1000:.1f} ms, app {cpu['app'] / labels * 1000:.1f} ms; "
                f"{over} over-assigned or repeated"
            )
            where = "one process" if count == 1 else f"{count} replicas"
            rows.append(_row(f"{annotators} annotators, {where}, PostgreSQL", team, floor, extra))
    finally:
        pg.stop()
    return rows


def _now() -> Any:
    from services.annotate import now_utc

    return now_utc()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--annotators", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of labelling per row")
    parser.add_argument("--items", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = replica_rows(Path(tmp), args.replicas, args.annotators, args.seconds, args.items)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
