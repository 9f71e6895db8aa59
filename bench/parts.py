"""Where a request's time goes: next item and submit split into their parts, beside the floor.

    python bench/run.py --parts          # 10k items, 300 sequential label cycles, the floor beside
    python -m bench.parts serve --db ... # the app with the timers in (what --parts starts)

The app is started through this module, which wraps the functions that make each part before the
app is built: nothing of it is in the app's own code, so it costs nothing when the app runs as
usual. The client is plain HTTP (requests, keep-alive), one call at a time, so everything the server
does between a request's arrival and its answer belongs to that request. Each part is exclusive (the
SQL a lease check runs counts as SQL, not as lease):

- session: the login session's check (`Sessions.user`) and the Gradio session owner (`owns`);
- access: who is asking and may they (`require_user`, the dataset's lookup, `_check_may_label`);
- lease: the scheduler (the `Leases` methods) and the progress counts;
- SQL: every statement, begin and commit on the store's connection;
- handler, rest: the handler's own Python (the item's view, the reply, the decision rule);
- Gradio: the rest of the server's time (routing, the guard's body read, Gradio's pre/postprocess);
- HTTP: what the client saw minus the server's time (the socket, requests, uvicorn's parsing).

The floor (bench/floor_app.py) is a trivial Gradio handler with the same two API names, served the
same way and measured in the same run.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["PARTS", "install", "rows"]

PARTS = ("session", "access", "lease", "SQL", "handler, rest", "Gradio", "HTTP")
_ENV = "STEPGATE_BENCH_PARTS"  # where the server writes its per-request parts when it stops


class _Recorder:
    """Exclusive time per part for the request in flight (one at a time: the client is sequential)."""

    def __init__(self, profile: bool = False) -> None:
        self.local = threading.local()
        self.current: dict[str, float] = {}
        self.requests: list[dict[str, Any]] = []
        self.profiles: dict[int, Any] | None = {} if profile else None  # thread id -> cProfile.Profile

    def _profiler(self) -> Any:
        import cProfile

        assert self.profiles is not None
        return self.profiles.setdefault(threading.get_ident(), cProfile.Profile())

    def timed(self, part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        local = self.local

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread().name.startswith("stepgate-"):  # the app's own threads
                return fn(*args, **kwargs)
            stack = getattr(local, "stack", None)
            if stack is None:
                stack = local.stack = []
            stack.append(0.0)  # time spent in parts nested in this one
            profiler = self._profiler() if self.profiles is not None and part == "handler" else None
            if profiler is not None:
                profiler.enable()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                if profiler is not None:
                    profiler.disable()
                nested = stack.pop()
                self.current[part] = self.current.get(part, 0.0) + elapsed - nested
                self.current[part + " calls"] = self.current.get(part + " calls", 0) + 1
                if stack:
                    stack[-1] += elapsed

        return wrapper

    def timed_async(self, part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.current[part] = self.current.get(part, 0.0) + time.perf_counter() - started

        return wrapper

    def asgi(self, app: Callable[..., Any]) -> Callable[..., Any]:
        """The outermost layer: a request's whole time in the server, and its record when done."""

        async def timed_app(scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            self.current = {}
            profiler = self._profiler() if self.profiles is not None else None
            if profiler is not None:
                profiler.enable()
            started = time.perf_counter()
            try:
                await app(scope, receive, send)
            finally:
                self.current["server"] = time.perf_counter() - started
                if profiler is not None:
                    profiler.disable()
                self.requests.append({"path": scope["path"], **self.current})

        return timed_app

    def dump(self, path: str) -> None:
        Path(path).write_text(json.dumps(self.requests))
        if self.profiles:
            import pstats

            first, *rest = self.profiles.values()
            stats = pstats.Stats(first)
            for more in rest:
                stats.add(more)
            stats.dump_stats(path + ".prof")


def _wrap(owner: Any, name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    setattr(owner, name, wrap(getattr(owner, name)))


def install(recorder: _Recorder) -> None:
    """Wrap the functions behind each part (before the app is built: it binds them then)."""
    import services.annotate as annotate
    import store.assignments as assignments
    import store.engines as engines
    import store.leases as shared_leases
    import ui.api as api
    import ui.auth as auth
    import ui.web.server as server
    from ui.web.sessions import Sessions

    sql = functools.partial(recorder.timed, "SQL")
    for engine in (engines.DuckDBEngine, engines.PostgresEngine):
        for name in ("run", "df", "columns", "begin", "commit", "rollback"):
            _wrap(engine, name, sql)
    _wrap(Sessions, "user", functools.partial(recorder.timed, "session"))
    _wrap(Sessions, "claim", functools.partial(recorder.timed, "session"))
    _wrap(Sessions, "owns", functools.partial(recorder.timed_async, "session"))
    access = functools.partial(recorder.timed, "access")
    _wrap(auth, "require_user", access)
    api.require_user = auth.require_user  # ui.api took the name itself
    _wrap(annotate, "dataset_for", access)
    _wrap(annotate, "_check_may_label", access)
    lease = functools.partial(recorder.timed, "lease")
    protocol = [n for n in vars(assignments.Leases) if not n.startswith("_")]
    for scheduler in (assignments.Scheduler, shared_leases.SharedScheduler):
        for name in protocol:
            if callable(getattr(scheduler, name, None)):
                _wrap(scheduler, name, lease)
    _wrap(assignments, "progress", lease)
    handler = functools.partial(recorder.timed, "handler")
    _wrap(api, "api_next_item", handler)
    _wrap(api, "api_submit_label", handler)
    build = server.build_server
    server.build_server = lambda *a, **k: recorder.asgi(build(*a, **k))


def serve(argv: list[str]) -> int:
    """`app.py` with the timers in; the parts are written to $STEPGATE_BENCH_PARTS when it stops."""
    recorder = _Recorder(profile=bool(os.environ.get(_ENV + "_PROFILE")))
    install(recorder)
    out = os.environ.get(_ENV)
    import app

    try:
        return app.main(argv)
    finally:
        if out:
            recorder.dump(out)


# --- the client side: run the label cycles, read the parts, make the table ---


def _cycle(client: Any, dataset: str, lat_next: list[float], lat_submit: list[float]) -> None:
    started = time.perf_counter()
    item = client.run("next_item", dataset)
    lat_next.append(time.perf_counter() - started)
    if item["item_id"] is None:
        raise RuntimeError("the dataset ran out of items: make it larger than the cycles")
    started = time.perf_counter()
    client.run(
        "submit_label", item["item_id"], item["version_id"], {"earliest_error": 0}, uuid.uuid4().hex, 5.0
    )
    lat_submit.append(time.perf_counter() - started)


def _ms(values: list[float]) -> tuple[float, float]:
    arr = np.array(values or [0.0]) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def measure(
    db: Path, dataset: str, user: str, password: str, cycles: int, warmup: int = 20, profile: bool = False
) -> dict:
    """Both servers up at once, their label cycles taken in turn (one on the floor, one on stepgate):
    a shared machine's load falls on both alike. Returns the client latencies and stepgate's parts."""
    from bench.client import StepgateClient
    from bench.human_pace import _Anonymous, _floor_server
    from bench.server import start_server

    out = db.with_suffix(".parts.json")
    os.environ[_ENV] = str(out)
    if profile:  # cProfile of every request (the event loop's side) and handler (a worker thread's)
        os.environ[_ENV + "_PROFILE"] = "1"
    try:
        server = start_server(db, "--no-demo", "--team", launcher=("-m", "bench.parts"), timeout=600)
    finally:
        os.environ.pop(_ENV, None)
        os.environ.pop(_ENV + "_PROFILE", None)
    floor_url, floor = None, None
    try:
        floor_url, floor = _floor_server()
        ours, theirs = StepgateClient(server.url, user, password), _Anonymous(floor_url)
        latencies: dict[str, tuple[list[float], list[float]]] = {"client": ([], []), "floor": ([], [])}
        for k in range(warmup + cycles):
            if k == warmup:
                latencies = {"client": ([], []), "floor": ([], [])}
            _cycle(theirs, dataset, *latencies["floor"])
            _cycle(ours, dataset, *latencies["client"])
        ours.close()
        theirs.close()
    finally:
        server.stop()
        if floor is not None:
            floor.kill()
            floor.wait(timeout=20)
    records = json.loads(out.read_text())
    lat_next, lat_submit = latencies["client"]
    return {
        "floor": dict(zip(("next", "submit"), latencies["floor"], strict=True)),
        "client": {"next": lat_next, "submit": lat_submit},
        "parts": {
            "next": [r for r in records if r["path"].endswith("/next_item")][-len(lat_next) :],
            "submit": [r for r in records if r["path"].endswith("/submit_label")][-len(lat_submit) :],
        },
    }


def table(result: dict) -> list[tuple[str, str]]:
    """Rows: each part's p50 / p95 for next item and submit, the totals, the floor and the ratios."""
    out: list[tuple[str, str]] = []
    for call, name in (("next", "next item"), ("submit", "submit")):
        records, seen = result["parts"][call], result["client"][call]
        by_part: dict[str, list[float]] = {p: [] for p in PARTS}
        for record, client in zip(records, seen, strict=False):
            server = record["server"]
            handler = record.get("handler", 0.0)
            for part in ("session", "access", "lease", "SQL"):
                by_part[part].append(record.get(part, 0.0))
            by_part["handler, rest"].append(handler)
            inside = sum(record.get(p, 0.0) for p in ("session", "access", "lease", "SQL", "handler"))
            by_part["Gradio"].append(max(0.0, server - inside))
            by_part["HTTP"].append(max(0.0, client - server))
        for part in PARTS:
            p50, p95 = _ms(by_part[part])
            out.append((f"{name}: {part}", f"{p50:.2f} / {p95:.2f} ms"))
        statements = [r.get("SQL calls", 0) for r in records]
        out.append(
            (
                f"{name}: SQL statements (with begin, commit), median / most",
                f"{np.median(statements):.0f} / {max(statements)}",
            )
        )
        p50, p95 = _ms(seen)
        f50, f95 = _ms(result["floor"][call])
        out.append((f"{name}: whole request, as the client saw it", f"{p50:.2f} / {p95:.2f} ms"))
        out.append((f"{name}: floor, a trivial Gradio handler", f"{f50:.2f} / {f95:.2f} ms"))
        out.append((f"{name}: p50 / p95 of the floor", f"{p50 / f50:.2f}x / {p95 / f95:.2f}x"))
    return out


def rows(workdir: Path, n: int = 10_000, cycles: int = 300) -> list[tuple[str, str]]:
    """The --parts rows: n items, `cycles` sequential label cycles on each server."""
    from bench.run import DATASET, add_users, make_items, timed_import

    source = workdir / f"items-{n}.jsonl"
    make_items(source, n)
    db = workdir / f"parts-{n}.duckdb"
    timed_import(db, source)
    add_users(db, ["seq"])
    one, five, _ = os.getloadavg()
    result = table(measure(db, DATASET, "seq", "seq-password", cycles))
    after, _, _ = os.getloadavg()
    load = f"{one:.1f} (5 min: {five:.1f}) before, {after:.1f} after"
    return [(f"{cycles} sequential label cycles over {n:,} items, load average", load), *result]


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        sys.exit(serve(sys.argv[1:]))
    sys.exit(f"usage: python -m bench.parts serve --db PATH ... (run by bench/run.py --parts)\n{__doc__}")
