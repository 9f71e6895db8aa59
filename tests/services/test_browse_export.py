"""Exports of a Browse filter: only the filter's items (and their log rows, versions, images), a
manifest naming the filter and the database state, progress along the way, the command line's
--filter, and the annotation log as plain columns that pandas (and `datasets`' Parquet loader, which
reads through pyarrow) take as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from exports.log import log_table
from services import browse
from services.browse import BrowseFilter
from services.errors import InvalidInput, NotAllowed
from services.exports import export
from services.imports import import_file
from store import Store
from store.users import add_user, get_user
from tests.browser_support import cli
from tests.conftest import PRMBENCH_FILE
from tests.services.test_stepgate_format import _label

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

LABEL = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


@pytest.fixture
def prm(store: Store) -> Store:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    _label(store, "ann", "prm", 6, LABEL)
    _label(store, "bea", "prm", 4, {**LABEL, "difficulty": "hard"})
    add_user(store, "adj", "adjudicator")
    return store


def _user(store: Store, name: str):
    user = get_user(store, name)
    assert user is not None
    return user


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_export_of_a_filter_holds_its_items_and_its_manifest_names_filter_and_state(
    prm: Store, tmp_path: Path
) -> None:
    f = BrowseFilter(dataset="prm", error_type="circular")
    matched = browse.search(prm, _user(prm, "adj"), f).total
    heard: list[tuple[float, str]] = []
    out = tmp_path / "circular.jsonl"
    written = browse.export_view(
        prm, _user(prm, "adj"), f, "items-jsonl", out, progress=lambda d, w: heard.append((d, w))
    )
    rows = _lines(out)
    assert written.rows == len(rows) == matched and {r["error_type"] for r in rows} == {"circular"}
    manifest = json.loads(written.manifest.read_text()) if written.manifest else {}
    assert manifest["filter"]["items"]["error_type"] == "circular" and manifest["filter"]["dataset"] == "prm"
    assert manifest["filter"]["items_matched"] == matched
    assert "error_type=circular" in manifest["filter"]["items"]["link"]
    assert manifest["database"]["items"] == 394 and manifest["database"]["annotations"] == 10
    assert manifest["exported_at"] and manifest["stepgate_version"]
    fractions = [d for d, _ in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(heard) >= 4


def test_the_log_of_a_filter_keeps_only_its_items_rows(prm: Store, tmp_path: Path) -> None:
    export(prm, "log-jsonl", tmp_path / "all.jsonl")
    everything = _lines(tmp_path / "all.jsonl")
    assert len(everything) == 10
    f = BrowseFilter(annotator="ann")
    ids = set(browse.select_items(prm, f).item_ids)
    out = tmp_path / "ann.jsonl"
    written = browse.export_view(prm, _user(prm, "adj"), f, "log-jsonl", out)
    expected = [r for r in everything if r["item_id"] in ids]
    assert written.rows == len(expected) == 6 and _lines(out) == expected
    nothing = browse.export_view(prm, _user(prm, "adj"), BrowseFilter(text="no such words"), "log-jsonl", out)
    assert nothing.rows == 0 and out.read_text() == ""


def test_a_filtered_stepgate_export_imports_into_a_new_database_with_only_those_items(
    prm: Store, tmp_path: Path
) -> None:
    f = BrowseFilter(annotator="bea")
    out = tmp_path / "bea.jsonl"
    browse.export_view(prm, _user(prm, "adj"), f, "stepgate-jsonl", out)
    with Store(tmp_path / "copy.duckdb") as copy:
        outcome = import_file(copy, out)
        assert outcome.annotations == 4 and outcome.added == 4
        assert len(browse.select_items(copy, BrowseFilter(annotator="bea")).item_ids) == 4
        again = tmp_path / "again.jsonl"
        export(copy, "stepgate-jsonl", again)
    assert [r for r in _lines(again) if r.get("kind") != "header"] == [
        r for r in _lines(out) if r.get("kind") != "header"
    ]


def test_annotators_cannot_export_a_view_and_the_report_is_not_a_views(prm: Store, tmp_path: Path) -> None:
    with pytest.raises(NotAllowed):
        browse.export_view(prm, _user(prm, "ann"), BrowseFilter(), "log-csv", tmp_path / "x.csv")
    with pytest.raises(InvalidInput, match="whole dataset"):
        browse.export_view(
            prm, _user(prm, "adj"), BrowseFilter(dataset="prm"), "report-md", tmp_path / "r.md"
        )
    assert not list(tmp_path.glob("x.csv*")) and not list(tmp_path.glob("r.md*"))


def test_the_log_loads_with_pandas_in_each_format_as_plain_columns(prm: Store, tmp_path: Path) -> None:
    frames = {}
    for fmt, read in (("log-parquet", pd.read_parquet), ("log-csv", pd.read_csv), ("log-jsonl", None)):
        out = tmp_path / f"log.{fmt}"
        export(prm, fmt, out)
        frames[fmt] = read(out) if read else pd.read_json(out, lines=True)
    columns = list(frames["log-parquet"].columns)
    assert columns == list(frames["log-csv"].columns) == list(frames["log-jsonl"].columns)
    for name in ("annotation_id", "annotator", "item_id", "seconds_spent", "created_at", "label_difficulty"):
        assert name in columns
    for fmt, frame in frames.items():
        assert len(frame) == 10, fmt
        assert sorted(frame["label_difficulty"]) == ["easy"] * 6 + ["hard"] * 4, fmt
        assert list(frame["seconds_spent"]) == list(frames["log-parquet"]["seconds_spent"]), fmt
    # What datasets.load_dataset("parquet", ...) reads: an Arrow table with one plain type a column
    # (no nested struct or list, no pandas index column).
    table = pq.read_table(tmp_path / "log.log-parquet")
    assert "__index_level_0__" not in table.column_names
    for column in table.schema:
        assert not pa.types.is_nested(column.type), column
    # And datasets itself, as a user would load the file (a packaged builder: nothing from the hub).
    from datasets import load_dataset

    loaded = load_dataset(
        "parquet",
        data_files=str(tmp_path / "log.log-parquet"),
        split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    assert loaded.num_rows == 10 and loaded.column_names == columns
    assert sorted(loaded["label_difficulty"]) == ["easy"] * 6 + ["hard"] * 4


def test_nested_payload_fields_become_plain_columns() -> None:
    frame = pd.DataFrame(
        {"annotation_id": [1, 2], "payload": [json.dumps({"features": ["a", "b"], "c": {"x": True}}), "{}"]}
    )
    table = log_table(frame)
    assert table["label_features"].iloc[0] == '["a", "b"]' and bool(table["label_c.x"][0]) is True


def test_the_command_line_exports_a_browse_view(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db)
    out = tmp_path / "view.jsonl"
    done = cli(
        "export",
        "--format",
        "items-jsonl",
        "--out",
        str(out),
        "--filter",
        "?tab=browse&error_type=circular",
        db=db,
    )
    assert "the filter matches" in done.stdout
    manifest = json.loads((tmp_path / "view.jsonl.manifest.json").read_text())
    assert manifest["filter"]["items"]["error_type"] == "circular"
    assert manifest["filter"]["items_matched"] == len(out.read_text().splitlines()) > 0


def test_the_panel_offers_the_views_export_to_its_reviewer_only(prm: Store) -> None:
    import gradio as gr

    from ui.context import AppContext
    from ui.kit.downloads import find_download
    from ui.panels import browse as panel

    ctx = AppContext(store=prm)
    view = ("prm", "", "", "circular", "", None, "", "", "id", "")
    done = panel.on_export(ctx, "log-csv", *view, gr.Request(username="adj"))
    html = done["export_file"]["value"]
    assert "Wrote" in done["export_status"] and html.count("<a ") == 2
    token = html.split("/stepgate/download/")[1].split('"')[0]
    found = find_download(ctx, token)
    assert found is not None and found[2] == "adj" and found[1].startswith("browse-log-csv-")
    refused = panel.on_export(ctx, "log-csv", *view, gr.Request(username="ann"))
    assert "adjudicators and admins" in refused["export_status"]
    assert refused["export_file"]["visible"] is False
    odd = panel.on_export(ctx, "report-md", *view, gr.Request(username="adj"))
    assert "choose a format" in odd["export_status"]
    assert not list(ctx.store.data_dir.joinpath("private").glob("*/*.partial"))
