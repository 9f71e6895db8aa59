"""What the guard's session check costs per request, on DuckDB and on PostgreSQL (issue 17).

    python scripts/session_check_cost.py [postgresql://...]

Times Sessions.user() (run on every request), the same with the session's row read again (what a
replica over PostgreSQL pays once per session every 2 s), and binding a Gradio session_hash seen for
the first time (once per browser tab or API client, off the event loop) or again (from memory).
Without a URL, PostgreSQL is measured on a throwaway server when Debian's package is installed.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from store import Store, users
from ui.context import AppContext
from ui.web.sessions import Sessions


def _row(times: list[float]) -> str:
    if not times:
        return "      -      "
    ordered = sorted(times)
    return f"{statistics.mean(times) * 1e6:8.1f} / {ordered[int(len(ordered) * 0.95)] * 1e6:8.1f}"


def measure(store: Store, label: str) -> None:
    users.add_user(store, "ann", "annotator", "ann-password")
    sessions = Sessions(AppContext(store=store))
    token = sessions.open("ann")
    for _ in range(200):
        sessions.user(token)
    checks = []
    for _ in range(5000):
        started = time.perf_counter()
        sessions.user(token)
        checks.append(time.perf_counter() - started)
    reread = []
    if sessions._recheck is not None:  # replicas: the row is read again once it is older than that
        for _ in range(1000):
            for known in sessions._known.values():
                known.read_at = -1e9
            started = time.perf_counter()
            sessions.user(token)
            reread.append(time.perf_counter() - started)
    new, again = [], []
    for _ in range(300):
        session_hash = uuid.uuid4().hex
        started = time.perf_counter()
        sessions.claim(session_hash, "ann")
        new.append(time.perf_counter() - started)
    for _ in range(2000):
        started = time.perf_counter()
        sessions.claim(session_hash, "ann")
        again.append(time.perf_counter() - started)
    print(f"| {label} | {_row(checks)} | {_row(reread)} | {_row(new)} | {_row(again)} |")


def main() -> None:
    print(
        "| engine | check (mean / p95 us) | check, row read again | new session_hash | known session_hash |"
    )
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        with Store(Path(folder) / "cost.duckdb") as db:
            measure(db, "duckdb")
        if len(sys.argv) > 1:
            with Store(sys.argv[1], data_dir=Path(folder) / "files") as db:
                measure(db, "postgresql")
            return
        from tests.pg_support import PostgresServer, find_bin

        if find_bin() is None:
            print("(PostgreSQL is not installed: give a postgresql:// URL to measure it)")
            return
        server = PostgresServer(find_bin()).start()  # type: ignore[arg-type]
        try:
            with Store(server.new_database(), data_dir=Path(folder) / "files") as db:
                measure(db, "postgresql")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
