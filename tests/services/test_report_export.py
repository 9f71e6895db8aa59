"""The dashboard report as Markdown, CSV and JSON: the figures are in it and read back unchanged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from exports.report import (
    agreement_display,
    format_ci,
    paradox_warning,
    report_csv,
    report_json,
    report_markdown,
    write_report,
)
from qc.dashboard import DashboardReport, build_dashboard

C, W = "correct", "incorrect"


def _report() -> DashboardReport:
    """Three annotators on 20 step-review items; "original" is skewed towards "correct"."""
    rows, next_id = [], 1
    for item in range(1, 21):
        for who in ("ann", "bea", "cid"):
            original = W if (item, who) in {(3, "ann"), (7, "bea"), (11, "cid")} else C
            label = {
                "original": original,
                "modification": "reasonable" if item % 3 else "unreasonable",
                "difficulty": ("easy", "medium", "hard")[(item + (who == "cid")) % 3],
            }
            rows.append(
                {
                    "annotation_id": next_id,
                    "item_id": item,
                    "annotator": who,
                    "payload": json.dumps(label),
                    "seconds_spent": 20.0 + item,
                }
            )
            next_id += 1
    annotations = pd.DataFrame(rows)
    states = pd.DataFrame(
        {
            "item_id": range(1, 21),
            "dataset": "prm <b>",
            "status": "complete",
            "settled_at": 3,
            "final_answer_correct": None,
            "decision": None,
            "error_type": ["circular | odd", "deception"] * 10,
        }
    )
    return build_dashboard(
        annotations,
        states,
        states,
        {"rejected items": 0, "regeneration jobs": 0},
        dataset="prm <b>",
        task="step_review",
        n_boot=300,
        seed=2,
    )


def test_markdown_holds_the_coefficients_with_intervals_and_the_warning() -> None:
    report = _report()
    text = report_markdown(report)
    row = report.agreement.set_index("field").loc["original"]
    assert (
        format_ci(row["observed_agreement"], row["observed_agreement_low"], row["observed_agreement_high"])
        in text
    )
    assert format_ci(row["gwet_ac1"], row["gwet_ac1_low"], row["gwet_ac1_high"]) in text
    assert report.paradox_fields == ["original"] and "Kappa misleads" in text
    assert "## Agreement by error type" in text and "## Consensus states by dataset" in text
    assert "Outlier rules" in text and "too fast" in text
    # Dataset text cannot break the tables or carry markup.
    assert "circular \\| odd" in text and "prm &lt;b&gt;" in text and "<b>" not in text


def test_the_paradox_puts_observed_agreement_and_ac1_first() -> None:
    display = agreement_display(_report())
    coefficients = list(display.columns[6:8])
    assert coefficients == ["Observed agreement", "Gwet's AC1"]
    assert display.set_index("Field").loc["original", "Lead coefficient"] == "Observed agreement"
    assert display.set_index("Field").loc["difficulty", "Lead coefficient"] == "Krippendorff's alpha"
    assert "Gwet's AC1" in paradox_warning(_report())


def test_csv_reads_back_with_the_same_numbers() -> None:
    report = _report()
    frame = pd.read_csv(io.StringIO(report_csv(report)))
    agreement = frame[frame["section"] == "agreement"].set_index(["field", "statistic"])
    for row in report.agreement.to_dict("records"):
        for stat in ("observed_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
            got = agreement.loc[(row["field"], stat)]
            assert got["value"] == pytest.approx(row[stat], abs=1e-12, nan_ok=True)
            assert got["low"] == pytest.approx(row[f"{stat}_low"], abs=1e-12, nan_ok=True)
            assert got["n_items"] == row["n_pairable"]
    quality = frame[(frame["section"] == "annotators") & (frame["statistic"] == "agreement")]
    assert len(quality) == len(report.quality)
    pairs = frame[frame["section"] == "pairwise"]
    assert len(pairs) == 3 * 9 and set(pairs["n_items"]) == {20.0}


def test_json_reads_back_with_the_same_numbers() -> None:
    report = _report()
    body = json.loads(report_json(report))
    assert body["kappa_paradox_fields"] == ["original"] and body["n_boot"] == 300
    by_field = {r["field"]: r for r in body["agreement"]}
    for row in report.agreement.to_dict("records"):
        assert by_field[row["field"]]["observed_agreement"] == pytest.approx(row["observed_agreement"])
        assert by_field[row["field"]]["fleiss_kappa_high"] == pytest.approx(row["fleiss_kappa_high"])
    assert body["pairwise_observed_agreement"]["original"]["ann"]["bea"] == pytest.approx(
        report.pairwise["original"].loc["ann", "bea"]
    )
    assert body["gating"] == {"rejected items": 0, "regeneration jobs": 0}


def test_write_report_puts_three_whole_files_in_the_folder(tmp_path: Path) -> None:
    files = write_report(_report(), tmp_path / "exports")
    assert files.markdown.name.startswith("qc-report-dataset-prm") and files.markdown.suffix == ".md"
    assert files.markdown.read_text(encoding="utf-8").startswith("# QC report")
    assert json.loads(files.json.read_text(encoding="utf-8"))["dataset"] == "prm <b>"
    assert pd.read_csv(files.csv)["section"].iloc[0] == "agreement"
    assert not list((tmp_path / "exports").glob(".*partial"))


def test_the_report_formats_need_a_dataset_and_write_whole_reports(demo_store, tmp_path: Path) -> None:
    """report-md / report-csv / report-json through services.exports, as `app.py export` writes them."""
    from services.errors import InvalidInput
    from services.exports import export

    dataset = "qwq-earliest-error"
    assert export(demo_store, "report-md", tmp_path / "r.md", dataset=dataset).rows == 0  # no labels yet
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Consensus states by dataset" in text and "## ProcessBench Table 2" in text
    rows = export(demo_store, "report-csv", tmp_path / "r.csv", dataset=dataset).rows
    assert rows == len(pd.read_csv(tmp_path / "r.csv")) > 0
    export(demo_store, "report-json", tmp_path / "r.json", dataset=dataset)
    body = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    table2 = pd.DataFrame(body["processbench_table2"])
    assert set(table2["column"]) == {"error", "correct"}
    assert table2.loc[table2["row"] == "# Samples", "value"].sum() == 0  # nothing retained before labels
    with pytest.raises(InvalidInput, match="a report covers one dataset"):
        export(demo_store, "report-md", tmp_path / "x.md")
    assert not (tmp_path / "x.md").exists()
