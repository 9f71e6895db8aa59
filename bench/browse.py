"""Browse and exports at scale, each beside a floor measured in the same run on the same database.

    python bench/browse.py                 # 100k items (ProcessBench-shaped, 8-12 steps each)
    python bench/browse.py --items 10000   # quicker
    python bench/browse.py --engine postgresql   # on a throwaway PostgreSQL server (tests/pg_support.py)

The floors are the least the work can cost in this database: for a Browse page, one raw SQL page of
25 ids and questions; for an export, the engine's own COPY of the same items' fields and steps to JSON.
The ratio to the floor is what compares across machines. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import DATASET, make_items

LABELS = 2_000  # earliest-error labels stored first, so that the log and the label plots have rows
TARGET_MS = 300  # issue 15: the first Browse page on 100k items


def _timed(call: Callable[[], Any], repeat: int = 3) -> float:
    """Best of `repeat` runs, in ms (the first run also pays DuckDB's cold caches)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _label(store: Any, n: int) -> None:
    from services import annotate
    from store import users

    for k in range(3):
        user = users.add_user(store, f"bench-ann{k}", "annotator")
        dataset = annotate.dataset_for(store, DATASET)
        for _ in range(n // 3):
            work = annotate.next_item(store, user, dataset)
            if work is None:
                break
            annotate.submit(
                store,
                annotator=user,
                item_id=work.item.item_id,
                version_id=work.item.version_id,
                payload={"earliest_error": -1},
                request_id=uuid.uuid4().hex,
                seconds_spent=30.0 + k,
            )


@contextmanager
def _database(workdir: Path, n: int, engine: str) -> Iterator[str]:
    """A DuckDB file in workdir, or a database on a throwaway PostgreSQL server; yields its location."""
    if engine == "duckdb":
        yield str(workdir / f"browse-{n}.duckdb")
        return
    from tests.pg_support import PostgresServer, find_bin

    bin_dir = find_bin()
    if bin_dir is None:
        raise SystemExit("PostgreSQL is not installed here (apt-get install postgresql)")
    server = PostgresServer(bin_dir).start()
    try:
        yield server.new_database()
    finally:
        server.stop()


def _copy_floor(store: Any, path: Path) -> Callable[[], Any]:
    """The engine's own COPY of the items' fields and steps to a JSON file (no Python per row)."""
    fields = "i.id, i.external_id, v.question, v.reference_answer, v.earliest_error, s.steps"
    # each version's steps gathered in one pass (the engine's own list aggregate), joined to the items
    gather = "list" if store.engine.name == "duckdb" else "json_agg"
    rows = (
        f"FROM items i JOIN item_versions v ON v.id = i.current_version_id LEFT JOIN (SELECT version_id, "
        f"{gather}(text ORDER BY position) AS steps FROM steps GROUP BY version_id) s ON s.version_id = v.id"
    )
    if store.engine.name == "duckdb":
        sql = f"COPY (SELECT {fields} {rows}) TO '{path}' (FORMAT JSON)"
        return lambda: store.execute(sql)
    import psycopg

    sql = f"COPY (SELECT row_to_json(r) FROM (SELECT {fields} {rows}) AS r) TO STDOUT"

    def copy() -> None:
        with (
            psycopg.connect(store.engine.url) as con,
            open(path, "wb") as out,
            con.cursor().copy(sql) as stream,
        ):
            for block in stream:
                out.write(block)

    return copy


def measure(workdir: Path, n: int, engine: str = "duckdb") -> list[tuple[str, float, float, str]]:
    """(measure, ms, floor ms, floor's name) rows."""
    from services import browse
    from services.browse import BrowseFilter
    from services.exports import export
    from services.imports import import_file
    from store import Store, users

    source = workdir / f"items-{n}.jsonl"
    make_items(source, n)
    rows: list[tuple[str, float, float, str]] = []
    with _database(workdir, n, engine) as db, Store(db, data_dir=workdir / "files") as store:
        import_file(store, source, format="processbench", dataset=DATASET)
        _label(store, LABELS)
        admin = users.add_user(store, "bench-admin", "admin")
        everything = BrowseFilter(dataset=DATASET)
        page_floor = _timed(
            lambda: store.df(
                "SELECT i.id, v.question FROM items i JOIN item_versions v ON v.id = i.current_version_id "
                "ORDER BY i.id LIMIT 25"
            )
        )
        raw = "raw SQL page of 25"
        rows.append(
            (
                "Browse: first page (25 of all)",
                _timed(lambda: browse.search(store, admin, everything)),
                page_floor,
                raw,
            )
        )
        rows.append(
            (
                "Browse: first page, text search",
                _timed(lambda: browse.search(store, admin, BrowseFilter(text="divide by two and"))),
                page_floor,
                raw,
            )
        )
        rows.append(
            (
                "Browse: first page, state = open, sorted by state",
                _timed(lambda: browse.search(store, admin, BrowseFilter(status="open", sort="state"))),
                page_floor,
                raw,
            )
        )
        rows.append(
            (
                "Browse: the five plots of all items",
                _timed(lambda: browse.figures(store, admin, everything), 1),
                page_floor,
                raw,
            )
        )

        export_floor = _timed(_copy_floor(store, workdir / "floor.json"), 1)
        copy = f"{store.engine.name} COPY of the items to JSON"
        for fmt, name in (("items-jsonl", "items-jsonl"), ("stepgate-jsonl", "stepgate-jsonl with the log")):
            out = workdir / f"all.{fmt}"
            ms = _timed(lambda fmt=fmt, out=out: export(store, fmt, out), 1)
            rows.append((f"export all items as {name}", ms, export_floor, copy))
        ms = _timed(lambda: export(store, "log-parquet", workdir / "log.parquet"), 1)
        rows.append((f"export the annotation log ({LABELS} rows) as Parquet", ms, export_floor, copy))
        text = BrowseFilter(text="divide by two and")
        matched = len(browse.select_items(store, text).item_ids)
        ms = _timed(lambda: browse.export_view(store, admin, text, "items-jsonl", workdir / "view.jsonl"), 1)
        rows.append((f"export a text filter's {matched:,} items as items-jsonl", ms, export_floor, copy))
        ms = _timed(
            lambda: browse.export_view(store, admin, text, "stepgate-jsonl", workdir / "view.sg.jsonl"), 1
        )
        rows.append((f"export a text filter's {matched:,} items as stepgate-jsonl", ms, export_floor, copy))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=100_000, help="items in the database (default: 100000)")
    parser.add_argument("--engine", choices=("duckdb", "postgresql"), default="duckdb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(Path(tmp), args.items, args.engine)
    print(f"{args.items:,} items on {args.engine}; first Browse page target: {TARGET_MS} ms\n")
    print("| measure | time | floor | ratio | floor is |\n| --- | --- | --- | --- | --- |")
    for name, ms, floor, what in rows:
        print(f"| {name} | {ms:,.0f} ms | {floor:,.1f} ms | {ms / max(floor, 1e-6):,.1f}x | {what} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
