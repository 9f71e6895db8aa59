"""QC and exports over PostgreSQL beside the same work over DuckDB, on the same data, in the same run.

    python bench/pg_reads.py                          # 10k and 100k items x 5 annotators
    python bench/pg_reads.py --sizes 10000,100000,1000000

A throwaway PostgreSQL server (Debian's package, as the tests start it) and a DuckDB file get the same
ProcessBench-shaped items and five annotators' labels on every item. Timed on each: the QC report of the
dataset (1000 bootstrap replicates), the reads it makes, and the export of all items + the annotation log.
"PG before" is the row path as it was (pandas guessing each column's type from the row tuples; server-side
cursors planned for their first tenth, PostgreSQL's default), "PG now" store/engines.py's (columns typed
into Arrow as the server names them, cursors planned for the whole result). Also timed: a Parquet snapshot
of the tables these read (the alternative: taken once, then DuckDB reads it). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import DATASET, make_items
from bench.table import print_table

ANNOTATORS = 5
_LABELS = (  # every annotator labels every item; fixed times, so both engines' exports compare byte for byte
    "INSERT INTO annotations (request_id, annotator_id, item_id, version_id, dataset_id, task, payload, "
    "seconds_spent, created_at) SELECT CAST(i.id AS VARCHAR) || '-' || CAST(u.id AS VARCHAR), u.id, i.id, "
    "i.current_version_id, i.dataset_id, d.task, '{\"earliest_error\": ' || "
    "CAST(((i.id * 7 + u.id * (i.id % 3)) % 5) - 1 AS VARCHAR) || '}', 12.5, "
    "CAST('2026-01-02 03:04:05.123456' AS TIMESTAMP) FROM items i JOIN datasets d ON d.id = i.dataset_id "
    "CROSS JOIN annotators u WHERE u.name LIKE 'bench-rater-%' ORDER BY i.id, u.id"
)
# the tables a dataset's QC report and the items + log export read
SNAPSHOT_TABLES = (
    "datasets",
    "annotators",
    "items",
    "item_versions",
    "steps",
    "version_images",
    "item_state",
    "annotations",
)


def _fill(location: str | Path, source: Path, data_dir: Path) -> None:
    from services.imports import import_file
    from store import Store, users

    with Store(location, data_dir=data_dir) as store:
        import_file(store, source, format="processbench", dataset=DATASET)
        for k in range(ANNOTATORS):
            users.add_user(store, f"bench-rater-{k}", "annotator", f"bench-rater-{k}-password")
        with store.writing() as tx:
            tx.execute(_LABELS)
        store.execute("ANALYZE") if store.engine.name == "postgresql" else store.checkpoint()


def _seconds(work: Callable[[], Any]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


@contextmanager
def _before(store: Any) -> Any:
    """The row path and PostgreSQL's default cursor planning, as store/engines.py read before."""
    store.engine.typed_frames = False
    store.execute("SET cursor_tuple_fraction = 0.1")
    try:
        yield
    finally:
        store.engine.typed_frames = True
        store.execute("RESET cursor_tuple_fraction")


LIMIT = 180.0  # seconds; the first-tenth plan of the items export takes over 10 minutes at 100k items


@contextmanager
def _limited(store: Any) -> Any:
    """Cancel this thread's statement after LIMIT seconds (statement_timeout does not reach the
    materialising of a WITH HOLD cursor, which happens at its commit)."""
    timer = threading.Timer(LIMIT, store._cursor().cancel)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _reads(store: Any) -> None:
    """What build_dataset_report reads from the store."""
    from store.annotations import annotations_frame
    from store.items import step_counts
    from store.state import states_frame

    dataset_id = store.scalar("SELECT id FROM datasets WHERE name = ?", [DATASET])
    annotations_frame(store, dataset_id)
    states_frame(store, dataset_id)
    states_frame(store)
    step_counts(store, dataset_id)
    step_counts(store, dataset_id, role="solution")


def _export(store: Any, out: Path) -> None:
    from services.exports import export

    export(store, "items-jsonl", out / "items.jsonl", manifest=False)
    export(store, "log-parquet", out / "log.parquet", manifest=False)


def _measure(store: Any, out: Path) -> dict[str, float | None]:
    from services.reports import build_dataset_report

    out.mkdir(parents=True, exist_ok=True)
    _reads(store)  # warm: this process's imports, the connection, the server's cache
    figures: dict[str, float | None] = {}
    for name, work in (
        ("reads", lambda: min(_seconds(lambda: _reads(store)) for _ in range(3))),
        ("report", lambda: build_dataset_report(store, DATASET, n_boot=1000, seed=0)),
        ("export", lambda: _export(store, out)),
    ):
        try:
            with _limited(store) if store.engine.name == "postgresql" else nullcontext():
                figures[name] = work() if name == "reads" else _seconds(work)
        except Exception as exc:  # cancelled at LIMIT
            if "canceling statement" not in str(exc):
                raise
            figures[name] = None
    return figures


def _snapshot(store: Any, folder: Path) -> tuple[float, float]:
    """Seconds to write the tables as Parquet (once per change of the data), and for DuckDB to read the
    annotation log back from the snapshot as the report does."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for table in SNAPSHOT_TABLES:
        store.df(f"SELECT * FROM {table}").to_parquet(folder / f"{table}.parquet", index=False)
    taken = time.perf_counter() - started
    con = duckdb.connect()
    for table in SNAPSHOT_TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{folder / table}.parquet')")
    started = time.perf_counter()
    con.execute(
        "SELECT a.id AS annotation_id, a.request_id, a.dataset_id, d.name AS dataset, a.task, a.item_id, "
        "i.external_id, a.version_id, a.annotator_id, u.name AS annotator, a.payload, a.seconds_spent, "
        "a.created_at FROM annotations a JOIN items i ON i.id = a.item_id JOIN datasets d ON d.id = a.dataset_id "
        "JOIN annotators u ON u.id = a.annotator_id WHERE a.version_id = i.current_version_id ORDER BY a.id"
    ).df()
    read = time.perf_counter() - started
    con.close()
    return taken, read


def _same_files(a: Path, b: Path) -> str:
    """ "yes", or where the first file differs."""
    for name in ("items.jsonl", "log.parquet"):
        left, right = (a / name).read_bytes(), (b / name).read_bytes()
        if left != right:
            at = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y), len(left))
            return f"NO: {name} differs at byte {at} ({left[at - 40 : at + 40]!r} / {right[at - 40 : at + 40]!r})"
    return "yes"


def _cell(seconds: float | None) -> str:
    return f"> {LIMIT:.0f} s (cancelled)" if seconds is None else f"{seconds:.2f} s"


def _ratio(seconds: float | None, floor: float | None) -> str:
    return "-" if seconds is None or not floor else f"{seconds / floor:.1f}x"


def size_rows(server: Any, workdir: Path, n: int) -> list[tuple[str, str]]:
    from store import Store

    label = f"{n // 1000}k items x {ANNOTATORS}"
    source = workdir / f"pg-items-{n}.jsonl"
    make_items(source, n)
    data_dir = workdir / "pg-files"
    duck_path = workdir / f"pg-bench-{n}.duckdb"
    url = server.new_database()
    _fill(duck_path, source, data_dir)
    _fill(url, source, data_dir)
    with Store(duck_path, data_dir=data_dir) as duck:
        duckdb_figures = _measure(duck, workdir / f"out-duckdb-{n}")
    with Store(url, data_dir=data_dir) as pg:
        now = _measure(pg, workdir / f"out-pg-{n}")
        with _before(pg):
            before = _measure(pg, workdir / f"out-pg-before-{n}")
        taken, read = _snapshot(pg, workdir / f"snapshot-{uuid.uuid4().hex}")
    rows = []
    for key, what in (
        ("reads", "QC report's reads (best of 3)"),
        ("report", "QC report (1000 replicates)"),
        ("export", "export all items + log"),
    ):
        rows.append(
            (
                f"PostgreSQL: {what}, {label} (DuckDB / PG before / PG now)",
                f"{_cell(duckdb_figures[key])} / {_cell(before[key])} / {_cell(now[key])}; "
                f"PG now {_ratio(now[key], duckdb_figures[key])} DuckDB "
                f"(before {_ratio(before[key], duckdb_figures[key])})",
            )
        )
    rows.append(
        (
            f"PostgreSQL: Parquet snapshot of the {len(SNAPSHOT_TABLES)} tables read, {label} (take / DuckDB reads the log from it)",
            f"{taken:.2f} s / {read:.2f} s",
        )
    )
    same = _same_files(workdir / f"out-duckdb-{n}", workdir / f"out-pg-{n}")
    rows.append((f"PostgreSQL: export files byte-identical to DuckDB's ({label})", same))
    return rows


def rows(sizes: tuple[int, ...] = (10_000, 100_000)) -> list[tuple[str, str]]:
    """The benchmark's PostgreSQL rows, or one row saying why there are none."""
    from tests.pg_support import PostgresServer, find_bin

    bin_dir = find_bin()
    if bin_dir is None:
        return [("PostgreSQL reads", "skipped: PostgreSQL is not installed (apt-get install postgresql)")]
    import scipy.stats  # noqa: F401  the first report imports it (seconds): a figure of neither engine

    server = PostgresServer(bin_dir).start()
    out: list[tuple[str, str]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                out += size_rows(server, Path(tmp), n)
    finally:
        server.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="item counts (5 labels each)")
    args = parser.parse_args()
    print_table(rows(tuple(int(s) for s in args.sizes.split(","))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
