"""PostgreSQL reads whole results through COPY into Arrow (store/engines.py): the same data gives the same
frames, the same QC report and the same export files, byte for byte, on DuckDB and on PostgreSQL."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from services.demo import populate_demo
from services.errors import ServiceError
from services.exports import FORMATS, export
from services.reports import build_dataset_report, write_files
from store import Store
from store.annotations import annotations_frame
from store.datasets import list_datasets
from store.items import items_frame, items_frames
from store.state import states_frame
from store.studies import list_studies
from tests.gold_support import DATASET, GOOD, WRONG, label_items

# A report's own time (qc/dashboard.py generated_at): made a moment apart on each engine.
_GENERATED = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d UTC")

pytestmark = pytest.mark.usefixtures("postgres_server")


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory, postgres_server) -> dict[str, Store]:
    """The demo, labelled by three annotators (agreeing on most items), moved through stepgate's own
    format into a DuckDB file and a PostgreSQL database: the same rows, timestamps included."""
    from store import users

    folder = tmp_path_factory.mktemp("twins")
    with Store(folder / "source.duckdb", data_dir=folder / "source-files") as source:
        populate_demo(source)
        for k, name in enumerate(("ann", "bea", "cid")):
            users.add_user(source, name, "annotator", f"{name}-password")
            label_items(source, name, 10, lambda item, k=k: WRONG if (item + k) % 4 == 0 else GOOD)
        export(source, "stepgate-jsonl", folder / "all.jsonl", manifest=False)
    from services.imports import import_file

    stores = {
        "duckdb": Store(folder / "twin.duckdb", data_dir=folder / "files"),
        "postgresql": Store(postgres_server.new_database(), data_dir=folder / "files"),
    }
    for store in stores.values():
        import_file(store, folder / "all.jsonl")
    yield stores
    for store in stores.values():
        store.close()


def test_the_twins_hold_labels_to_compare(twins: dict[str, Store]) -> None:
    for store in twins.values():
        assert store.scalar("SELECT count(*) FROM annotations") == 30


@pytest.mark.parametrize(
    "read",
    [
        lambda s: annotations_frame(s),
        lambda s: annotations_frame(s, rulings=True, current_versions_only=False),
        lambda s: states_frame(s),
        lambda s: items_frame(s),
        lambda s: list_studies(s),
    ],
    ids=["log", "raw log", "states", "items", "studies"],
)
def test_store_frames_are_the_same_on_both_engines(twins: dict[str, Store], read) -> None:
    duck, pg = read(twins["duckdb"]), read(twins["postgresql"])
    pd.testing.assert_frame_equal(pg, duck, check_exact=True)


def test_items_read_in_frames_are_the_items_read_whole_on_postgresql(twins: dict[str, Store]) -> None:
    pg = twins["postgresql"]
    frames = list(items_frames(pg, rows=7))
    assert len(frames) > 2 and all(len(f) == 7 for f in frames[:-1])
    whole = pd.concat(frames, ignore_index=True)  # a frame's text column of only NULLs holds objects
    pd.testing.assert_frame_equal(whole, items_frame(twins["duckdb"]), check_exact=True, check_dtype=False)


def test_qc_report_files_are_byte_identical_on_both_engines(twins: dict[str, Store], tmp_path: Path) -> None:
    for dataset in [d.name for d in list_datasets(twins["duckdb"])]:
        written = {}
        for engine, store in twins.items():
            folder = tmp_path / engine / dataset
            folder.mkdir(parents=True)
            from services.reports import _report

            write_files(_report(build_dataset_report(store, dataset, n_boot=200, seed=0)), folder)
            written[engine] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        assert written["duckdb"], dataset
        assert written["postgresql"] == written["duckdb"], dataset


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_export_is_byte_identical_on_both_engines(
    twins: dict[str, Store], tmp_path: Path, fmt: str
) -> None:
    dataset = DATASET if FORMATS[fmt].reads == "report" else None
    out: dict[str, bytes | str] = {}
    for engine, store in twins.items():
        path = tmp_path / f"{engine}.{FORMATS[fmt].suffix}"
        try:
            export(store, fmt, path, dataset=dataset, manifest=False)
            out[engine] = path.read_bytes()
        except ServiceError as exc:  # a format that does not fit the demo refuses alike on both
            out[engine] = str(exc)
    if FORMATS[fmt].reads == "report":  # made a moment apart: the minute of its time may turn between
        out = {e: d if isinstance(d, str) else _GENERATED.sub(b"generated_at", d) for e, d in out.items()}
    assert out["postgresql"] == out["duckdb"]


# --- the COPY path's own edges: text that looks like numbers, NULL beside '', quotes, newlines ---

_ROWS = [
    (1, "42", "", 1.5, True, datetime(2026, 1, 2, 3, 4, 5, 123456), None, '{"a": [1, 2]}'),
    (2, 'say "hi", then\nleave', None, None, None, datetime(2026, 1, 2, 3, 4, 5), 7, None),
    (3, "ünï ✓ , ;", "x", -0.1, False, None, None, "[]"),
]


@pytest.fixture(scope="module")
def edge_twins(twins: dict[str, Store]) -> dict[str, Store]:
    for store in twins.values():
        with store.writing() as tx:
            tx.execute(
                "CREATE TABLE edge_rows (id INTEGER, code VARCHAR, note VARCHAR, score DOUBLE, "
                "ok BOOLEAN, stamped TIMESTAMP, n INTEGER, doc VARCHAR)"
            )
            tx.executemany("INSERT INTO edge_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?)", _ROWS)
    return twins


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM edge_rows ORDER BY id",
        "SELECT id, code FROM edge_rows WHERE id > 99 ORDER BY id",
        "SELECT id, note FROM edge_rows WHERE note IS NULL ORDER BY id",
        "SELECT count(*) AS n, sum(score) AS total, avg(id) AS mean FROM edge_rows",
        "SELECT id, CAST(stamped AS DATE) AS day FROM edge_rows ORDER BY id",
        "SELECT id, note, n FROM edge_rows WHERE id IN (SELECT unnest(CAST(? AS BIGINT[]))) ORDER BY id",
    ],
)
def test_edge_values_read_alike_on_both_engines(edge_twins: dict[str, Store], sql: str) -> None:
    params = [[1, 3]] if "?" in sql else None
    duck, pg = edge_twins["duckdb"].df(sql, params), edge_twins["postgresql"].df(sql, params)
    pd.testing.assert_frame_equal(pg, duck, check_exact=True)
    duck_cols = edge_twins["duckdb"].columns(sql, params)
    pg_cols = edge_twins["postgresql"].columns(sql, params)
    assert list(pg_cols) == list(duck_cols)
    for name in duck_cols:
        assert pg_cols[name].dtype == duck_cols[name].dtype, name
        assert pd.Series(pg_cols[name]).equals(pd.Series(duck_cols[name])), name


def test_json_and_arrays_read_as_python_values_on_postgresql(edge_twins: dict[str, Store]) -> None:
    pg = edge_twins["postgresql"]
    frame = pg.df(
        "SELECT id, CAST(doc AS JSONB) AS doc, ARRAY[code, note] AS pair FROM edge_rows ORDER BY id"
    )
    assert frame["doc"].tolist() == [{"a": [1, 2]}, None, []]
    assert frame["pair"].tolist() == [["42", ""], ['say "hi", then\nleave', None], ["ünï ✓ , ;", "x"]]
    assert json.dumps(frame["doc"][0]) == '{"a": [1, 2]}'


def test_a_whole_read_left_half_way_leaves_the_connection_usable(edge_twins: dict[str, Store]) -> None:
    pg = edge_twins["postgresql"]
    chunks = pg.df_chunks("SELECT * FROM annotations ORDER BY id", None, 2)
    assert len(next(chunks)) == 2
    chunks.close()
    assert pg.scalar("SELECT count(*) FROM edge_rows") == 3


def test_a_read_inside_a_write_sees_the_write_on_postgresql(edge_twins: dict[str, Store]) -> None:
    pg = edge_twins["postgresql"]
    with pytest.raises(RuntimeError), pg.writing() as tx:
        tx.execute("INSERT INTO edge_rows (id, code) VALUES (4, 'new')")
        assert tx.df("SELECT code FROM edge_rows WHERE id = 4")["code"].tolist() == ["new"]
        raise RuntimeError("roll back")
    assert pg.df("SELECT code FROM edge_rows WHERE id = 4").empty


def test_results_of_only_json_or_of_other_types_read_whole_on_postgresql(
    edge_twins: dict[str, Store],
) -> None:
    pg = edge_twins["postgresql"]
    only_json = pg.df("SELECT CAST(doc AS JSONB) AS doc FROM edge_rows ORDER BY id")
    assert only_json["doc"].tolist() == [{"a": [1, 2]}, None, []]
    other = pg.df("SELECT id, CAST(stamped AS TIMESTAMPTZ) AS at_utc FROM edge_rows ORDER BY id")
    assert other["id"].tolist() == [1, 2, 3] and other["at_utc"].notna().tolist() == [True, True, False]
