"""stepgate's benchmark: what an annotation team feels, measured over HTTP on 127.0.0.1.

    python bench/run.py            # 10k items, then how figures grow at 100k and 1M
    python bench/run.py --quick    # 10k items and shorter loads: under a minute
    python bench/run.py --sizes-only --sizes 10000,1000000   # the per-size rows alone
    python bench/run.py --parts    # where a next item's and a submit's time goes, beside the floor

Prints a Markdown table. Latency is measured with plain HTTP (requests, keep-alive) on the
endpoints a client uses, never through gradio_client (which adds ~140 ms per call of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StepgateClient
from bench.server import rss_mb, start_server
from bench.table import print_table

DATASET = "bench"
WORDS = (
    "the",
    "sum",
    "of",
    "both",
    "sides",
    "gives",
    "$x^2 + 3x$",
    "so",
    "we",
    "divide",
    "by",
    "two",
    "and",
    "check",
    "that",
    "value",
    "against",
    "the",
    "original",
    "equation",
    "which",
    "holds",
)


def make_items(path: Path, n: int, seed: int = 0) -> None:
    """ProcessBench-shaped JSONL: a question and 8-12 steps of ~120 characters each."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for i in range(n):
            steps = [" ".join(rng.choice(WORDS) for _ in range(22))[:120] for _ in range(rng.randint(8, 12))]
            fh.write(
                json.dumps(
                    {
                        "id": f"bench-{i}",
                        "generator": "bench",
                        "problem": f"Problem {i}: solve for x.",
                        "steps": steps,
                        "final_answer_correct": True,
                        "label": -1,
                    }
                )
                + "\n"
            )


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    arr = np.array(samples) * 1000
    return tuple(float(np.percentile(arr, q)) for q in (50, 95, 99))  # type: ignore[return-value]


def timed_import(db: Path, source: Path) -> tuple[float, int]:
    from services.imports import import_file
    from store import Store

    with Store(db) as store:
        started = time.perf_counter()
        outcome = import_file(store, source, format="processbench", dataset=DATASET)
        return time.perf_counter() - started, outcome.added


def add_users(db: Path, names: list[str]) -> None:
    from store import Store, users

    with Store(db) as store:
        for name in names:
            if users.get_user(store, name) is None:
                users.add_user(store, name, "annotator", f"{name}-password")


def label_cycle(client: StepgateClient, call: str, lat_next: list, lat_submit: list) -> bool:
    started = time.perf_counter()
    item = getattr(client, call)("next_item", DATASET)
    lat_next.append(time.perf_counter() - started)
    if item["item_id"] is None:
        return False
    started = time.perf_counter()
    getattr(client, call)(
        "submit_label", item["item_id"], item["version_id"], {"earliest_error": 0}, uuid.uuid4().hex, 5.0
    )
    lat_submit.append(time.perf_counter() - started)
    return True


def sequential(url: str, call: str, n: int) -> dict:
    client = StepgateClient(url, "seq", "seq-password")
    lat_next: list[float] = []
    lat_submit: list[float] = []
    for _ in range(n):
        label_cycle(client, call, lat_next, lat_submit)
    client.close()
    return {"next": percentiles(lat_next), "submit": percentiles(lat_submit)}


def concurrent(url: str, call: str, annotators: int, seconds: float) -> dict:
    cycles: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker(k: int) -> None:
        client = StepgateClient(url, f"con{k}", f"con{k}-password")
        lat_next: list[float] = []
        lat_submit: list[float] = []
        while time.perf_counter() < stop:
            started = time.perf_counter()
            if not label_cycle(client, call, lat_next, lat_submit):
                break
            with lock:
                cycles.append(time.perf_counter() - started)
        client.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(annotators)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    return {"cycles_per_s": len(cycles) / elapsed, "cycle": percentiles(cycles), "cycles": len(cycles)}


def over_assigned(db: Path) -> int:
    """Items labelled by more annotators than their quorum (store.integrity: the same count on both engines)."""
    from store import Store
    from store.integrity import labelled_past_target

    with Store(db) as store:
        return labelled_past_target(store)


def timed_export(db: Path, out: Path) -> float:
    from services.exports import export
    from store import Store

    with Store(db) as store:
        started = time.perf_counter()
        export(store, "items-jsonl", out / "items.jsonl")
        export(store, "log-parquet", out / "log.parquet")
        return time.perf_counter() - started


def timed_browse(db: Path) -> dict[str, float]:
    """The Browse panel's use cases in-process (ms): the first page, a filtered page, Figure 7's counts."""
    from services import browse
    from services.browse import BrowseFilter
    from store import Store, users

    with Store(db) as store:
        admin = users.get_user(store, "bench-admin") or users.add_user(store, "bench-admin", "admin")
        out = {}
        for name, call in (
            ("first page", lambda: browse.search(store, admin, BrowseFilter(dataset=DATASET))),
            ("last page", lambda: browse.search(store, admin, BrowseFilter(dataset=DATASET), page=10**9)),
            ("text search", lambda: browse.search(store, admin, BrowseFilter(text="divide by two and"))),
            ("error position 3", lambda: browse.search(store, admin, BrowseFilter(error_position=3))),
            ("Figure 7 counts", lambda: browse.distribution(store, admin, BrowseFilter(dataset=DATASET))),
        ):
            started = time.perf_counter()
            call()
            out[name] = (time.perf_counter() - started) * 1000
        return out


def timed_bundle_export(db: Path, out: Path) -> float:
    from services.exports import export
    from store import Store

    with Store(db) as store:
        started = time.perf_counter()
        export(store, "stepgate-jsonl", out / "all.stepgate.jsonl")
        return time.perf_counter() - started


def timed_qc(items: int, annotators: int = 5) -> float:
    import pandas as pd

    from qc.report import agreement_report

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, items)
    noisy = np.where(
        rng.random((items, annotators)) < 0.8, truth[:, None], rng.integers(0, 3, (items, annotators))
    )
    frame = pd.DataFrame(
        {
            "item": np.repeat(np.arange(items), annotators),
            "annotator": np.tile(np.arange(annotators), items),
            "field": "label",
            "value": noisy.ravel(),
        }
    )
    started = time.perf_counter()
    agreement_report(frame, {"label": "nominal"}, n_boot=1000, seed=0)
    return time.perf_counter() - started


def encoder_throughput(workdir: Path, n: int = 512) -> tuple[float, float, str]:
    """Steps/s through services.matching.embed: cold (a fresh encoder and an empty cache; the one-off
    ONNX export is done before timing) and cached (the same steps again, read from the store)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from services.encoder import Encoder, EncoderSettings
    from services.matching import embed
    from store import Store

    settings = EncoderSettings(export_dir=workdir / "encoders")
    Encoder(settings).encode(["warm the export"])  # the export happens once per machine, not per run
    rngs = [random.Random(i) for i in range(n)]
    texts = [f"Step {i}: " + " ".join(rng.choice(WORDS) for _ in range(22)) for i, rng in enumerate(rngs)]
    encoder = Encoder(settings)
    with Store(workdir / f"encoder-{uuid.uuid4().hex}.duckdb") as store:
        started = time.perf_counter()
        embed(store, encoder, texts)
        cold = n / (time.perf_counter() - started)
        started = time.perf_counter()
        embed(store, encoder, texts)
        cached = n / (time.perf_counter() - started)
    return cold, cached, f"{encoder.name}, {encoder.backend}"


# --- floors: what the same work costs done by the engine or library alone, measured in the same run ---
# The machine may be shared: a figure means most beside its floor, taken minutes apart under the same load.


def _duckdb_seconds(db: Path, *statements: str) -> float:
    """Seconds DuckDB alone takes to run the statements on a database file."""
    import duckdb

    con = duckdb.connect(str(db))
    try:
        started = time.perf_counter()
        for sql in statements:
            con.execute(sql)
        return time.perf_counter() - started
    finally:
        con.close()


def import_floor(workdir: Path, source: Path, n: int, ours: float, label: str) -> tuple[str, str]:
    """DuckDB reading the same file by itself (read_json into one table, one transaction, no checks)."""
    floor = _duckdb_seconds(
        workdir / f"floor-import-{n}.duckdb",
        "BEGIN TRANSACTION",
        f"CREATE TABLE items AS SELECT * FROM read_json('{source}', format = 'newline_delimited')",
        "COMMIT",
    )
    return (
        f"floor: DuckDB read_json of the same {label} file",
        f"{n / floor:,.0f} items/s ({floor:.1f} s); stepgate's import at {floor / ours:.0%} of it",
    )


def export_floor(db: Path, workdir: Path, ours: float, label: str) -> tuple[str, str]:
    """DuckDB writing the same rows by itself: items with their steps as JSON lines, the log as Parquet."""
    floor = _duckdb_seconds(
        db,
        "COPY (SELECT i.external_id, v.*, s.steps FROM items i "
        "JOIN item_versions v ON v.id = i.current_version_id LEFT JOIN (SELECT version_id, "
        "list(text ORDER BY role, position) AS steps FROM steps GROUP BY version_id) s ON s.version_id = v.id "
        f"ORDER BY i.id) TO '{workdir / 'floor-items.jsonl'}' (FORMAT json)",
        f"COPY annotations TO '{workdir / 'floor-log.parquet'}' (FORMAT parquet)",
    )
    return (
        f"floor: DuckDB COPY of the same {label} items + log",
        f"{floor:.2f} s; stepgate {ours / floor:.1f}x it",
    )


_GRADIO_ALONE = """
import sys, time
import gradio as gr
if len(sys.argv) > 2:  # and one DuckDB connection to a database file, as any app over DuckDB holds
    import duckdb
    con = duckdb.connect(sys.argv[2])
with gr.Blocks() as demo:
    gr.Markdown("floor")
demo.launch(server_name="127.0.0.1", server_port=int(sys.argv[1]), prevent_thread_lock=True, quiet=True)
print("up", flush=True)
time.sleep(600)
"""


def gradio_floor(duckdb_file: Path | None = None) -> tuple[str, str]:
    """Gradio alone, one Markdown in a Blocks: its own start-up time and resident memory; with
    ``duckdb_file``, Gradio and one open DuckDB database, the floor of any Gradio app over DuckDB."""
    import subprocess

    import requests

    from bench.server import free_port

    port = free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    extra = [str(duckdb_file)] if duckdb_file is not None else []
    process = subprocess.Popen(
        [sys.executable, "-c", _GRADIO_ALONE, str(port), *extra], env=env, stdout=subprocess.DEVNULL
    )
    try:
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/gradio_api/info", timeout=2).ok:
                    break
            except requests.RequestException:
                if process.poll() is not None or time.perf_counter() - started > 120:
                    raise RuntimeError("Gradio alone did not start") from None
                time.sleep(0.05)
        seconds = time.perf_counter() - started
        what = "Gradio alone (one Markdown)" if duckdb_file is None else "Gradio and one DuckDB file open"
        return (f"floor: {what}, start / memory", f"{seconds:.1f} s / {rss_mb(process.pid):.0f} MB")
    finally:
        process.kill()
        process.wait(timeout=20)


def qc_floor(items: int, n_boot: int = 1000) -> tuple[str, str]:
    """Only drawing the seeded replicates (the draws every interval rests on, fixed by the seed)."""
    from qc.bootstrap import resample_indices

    started = time.perf_counter()
    for _ in resample_indices(items, n_boot, 0):
        pass
    return (
        f"floor: drawing the {n_boot} seeded replicates of {items:,} items",
        f"{time.perf_counter() - started:.2f} s",
    )


def first_next_item(url: str, label: str) -> tuple[str, str]:
    """The first annotator after a start: their first next-item loads the dataset's pool from the log."""
    client = StepgateClient(url, "seq", "seq-password")
    started = time.perf_counter()
    client.run("next_item", DATASET)
    seconds = time.perf_counter() - started
    client.close()
    return (f"first next-item after start, pool loaded ({label})", f"{seconds * 1000:.0f} ms")


def run_size(workdir: Path, n: int, quick: bool, rows: list[tuple[str, str]], label: str) -> None:
    source = workdir / f"items-{n}.jsonl"
    make_items(source, n)
    db = workdir / f"bench-{n}.duckdb"
    seconds, added = timed_import(db, source)
    rows.append((f"import {label} step-labelling items", f"{added / seconds:,.0f} items/s ({seconds:.1f} s)"))
    rows.append(import_floor(workdir, source, n, seconds, label))
    add_users(db, ["seq", *(f"con{k}" for k in range(8))])
    server = start_server(db, "--no-demo", "--team")
    try:
        rows.append((f"cold start over {label} items", f"{server.started_in:.1f} s"))
        rows.append((f"memory after start ({label})", f"{rss_mb(server.process.pid):.0f} MB"))
        rows.append(first_next_item(server.url, label))
        calls = [("run", "unqueued")] if quick else [("run", "unqueued"), ("call", "queued")]
        for call, path in calls:
            seq = sequential(server.url, call, 300 if not quick else 150)
            n50, n95, n99 = seq["next"]
            s50, s95, s99 = seq["submit"]
            rows.append(
                (
                    f"next-item p50/p95/p99, sequential, {path} ({label})",
                    f"{n50:.1f} / {n95:.1f} / {n99:.1f} ms",
                )
            )
            rows.append(
                (f"submit p50/p95/p99, sequential, {path} ({label})", f"{s50:.1f} / {s95:.1f} / {s99:.1f} ms")
            )
            con = concurrent(server.url, call, 8, 8 if quick else 20)
            c50, c95, c99 = con["cycle"]
            rows.append(
                (
                    f"8 annotators, {path} ({label})",
                    f"{con['cycles_per_s']:.1f} label cycles/s; cycle p50/p95/p99 {c50:.0f} / {c95:.0f} / {c99:.0f} ms",
                )
            )
        rows.append((f"memory peak ({label})", f"{rss_mb(server.process.pid, 'VmHWM'):.0f} MB"))
    finally:
        server.stop()
    rows.append((f"items over their quorum ({label})", str(over_assigned(db))))
    exported = timed_export(db, workdir)
    rows.append((f"export all {label} items + annotation log", f"{exported:.2f} s"))
    rows.append(export_floor(db, workdir, exported, label))
    rows.append(
        (
            f"stepgate-jsonl export of all {label} items with the log",
            f"{timed_bundle_export(db, workdir):.2f} s",
        )
    )
    for name, ms in timed_browse(db).items():
        rows.append((f"Browse: {name} ({label})", f"{ms:.0f} ms"))


def io_rows(workdir: Path, n: int, rows: list[tuple[str, str]], label: str) -> None:
    """Import and export only (--io-only), each beside its DuckDB floor and the load average then."""
    source = workdir / f"items-{n}.jsonl"
    make_items(source, n)
    db = workdir / f"bench-{n}.duckdb"
    load = _load()
    seconds, added = timed_import(db, source)
    rows.append(
        (f"import {label} step-labelling items", f"{added / seconds:,.0f} items/s ({seconds:.1f} s); {load}")
    )
    rows.append(import_floor(workdir, source, n, seconds, label))
    load = _load()
    exported = timed_export(db, workdir)
    rows.append((f"export all {label} items + annotation log (no labels)", f"{exported:.2f} s; {load}"))
    rows.append(export_floor(db, workdir, exported, label))
    source.unlink()


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} / {five:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="10k items only, shorter loads (under a minute)")
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="item counts to grow through (full run)"
    )
    parser.add_argument(
        "--io-only", action="store_true", help="only the import and export rows, at every size of --sizes"
    )
    parser.add_argument(
        "--sizes-only",
        action="store_true",
        help="only the rows taken at each size (import, start, memory, labelling, export), with their floors",
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="only the parts of a next item and a submit (session, access, lease, SQL, Gradio) beside the floor",
    )
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    if args.parts:
        from bench.parts import rows as part_rows

        with tempfile.TemporaryDirectory() as tmp:
            print_table(part_rows(Path(tmp)))
        return 0
    if args.io_only:
        with tempfile.TemporaryDirectory() as tmp:
            for n in [int(s) for s in args.sizes.split(",")]:
                io_rows(Path(tmp), n, rows, f"{n // 1000}k")
        print_table(rows)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        empty = start_server(workdir / "empty.duckdb", "--no-demo")
        rows.append(("cold start over an empty database", f"{empty.started_in:.1f} s"))
        rows.append(("memory after start (empty database)", f"{rss_mb(empty.process.pid):.0f} MB"))
        empty.stop()
        rows.append(gradio_floor())
        rows.append(gradio_floor(workdir / "floor-gradio.duckdb"))
        sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",")]
        for n in sizes:
            run_size(workdir, n, args.quick or n > 10_000, rows, f"{n // 1000}k")
        if args.sizes_only:
            print_table(rows)
            return 0
        cold, cached, which = encoder_throughput(workdir)
        rows.append((f"encoding steps ({which}, CPU), cold / cached", f"{cold:,.0f} / {cached:,.0f} steps/s"))
    rows.append(
        ("QC report, 100,000 items x 5 annotators, 1000 bootstrap replicates", f"{timed_qc(100_000):.1f} s")
    )
    rows.append(qc_floor(100_000))
    from bench.perturb import rows as perturbation_rows  # image perturbations per second beside a floor

    rows += perturbation_rows()
    from bench.human_pace import human_pace_rows  # a team at human pace, beside a trivial Gradio handler

    rows += human_pace_rows((50, 100, 200, 300), window=5.0) if args.quick else human_pace_rows(window=20.0)
    # --- replicas: 32 annotators on one process (DuckDB, PostgreSQL) and on 4 replicas over PostgreSQL ---
    from bench.replicas import replica_rows

    with tempfile.TemporaryDirectory() as tmp:
        rows += replica_rows(Path(tmp), seconds=8.0 if args.quick else 20.0)
    from bench.pg_reads import rows as postgres_rows  # QC and exports over PostgreSQL beside DuckDB

    rows += postgres_rows((10_000,) if args.quick else (10_000, 100_000))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
