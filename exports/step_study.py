"""The step-match study's report as files: CRYSTAL's Table S1 in Markdown (to read) and CSV (to load).

services.step_match builds the report (a StudyReport) and hands it here. Both files open by naming the
encoder the similarities came from and, when it is not CRYSTAL's all-distilroberta-v1, say so in the
same words as the panel: figures from another encoder are not the paper's and must not be compared
with them by accident.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import pandas as pd

from exports.cells import spreadsheet_row
from exports.report import md_cell, md_table

__all__ = ["STUDY_REPORT_FORMATS", "study_report_csv", "study_report_markdown", "write_study_report"]

STUDY_REPORT_FORMATS = {"md": "Markdown", "csv": "CSV"}
_CSV_COLUMNS = ["section", "group", "statistic", "value"]
_SECTIONS = (("table_s1", "table"), ("sampling_band", "sampling"), ("model", "models"))


def _num(value: Any, fmt: str = ".3f") -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, fmt)


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.reset_index().rename(columns={"index": "band"})


def study_report_markdown(report: Any) -> str:
    humans, cal = report.humans, report.calibration
    lines = [
        f"# Step-match study {md_cell(report.dataset)}: CRYSTAL Table S1",
        "",
        f"- **Encoder:** {md_cell(report.encoder)}",
        f"- {md_cell(report.note)}",
        f"- Pairs: {report.pairs}, with a human label (majority of annotators; ties left out): {report.labelled}",
        f"- Human-human agreement over {humans.pairs} pairs with two or more labels ({humans.annotators} "
        f"annotators): observed {_num(humans.observed)}, Fleiss' kappa {_num(humans.fleiss_kappa)}, "
        f"Cohen's kappa {_num(humans.cohen_kappa)}",
    ]
    if cal is not None and not math.isnan(cal.threshold):
        lines.append(
            f"- Calibrated threshold for {md_cell(report.encoder)}: {cal.threshold:.2f} (95% interval "
            f"{_num(cal.low, '.2f')}-{_num(cal.high, '.2f')}), kappa {_num(cal.kappa)}; Match F1 "
            f"{_num(report.f1_at_tau)} at 0.35, {_num(report.f1_calibrated)} at {cal.threshold:.2f}"
        )
    lines += ["", "## Human vs encoder by similarity band (Table S1)", "", md_table(_shown(report.table))]
    lines += ["## By sampling band", "", md_table(_shown(report.sampling))]
    lines += ["## By model", "", md_table(_shown(report.models))]
    lines += ["## False and missed matches", "", md_table(report.disagreements)]
    return "\n".join(lines)


def study_report_csv(report: Any) -> str:
    """Long form: one row per (section, group, statistic); the encoder and its note come first."""
    rows: list[dict[str, Any]] = [
        {"section": "study", "group": "", "statistic": "dataset", "value": report.dataset},
        {"section": "study", "group": "", "statistic": "encoder", "value": report.encoder},
        {"section": "study", "group": "", "statistic": "encoder_note", "value": report.note},
        {"section": "study", "group": "", "statistic": "pairs", "value": report.pairs},
        {"section": "study", "group": "", "statistic": "labelled", "value": report.labelled},
    ]
    humans = report.humans
    for name in ("pairs", "annotators", "observed", "fleiss_kappa", "cohen_kappa"):
        rows.append(
            {"section": "human_human", "group": "", "statistic": name, "value": getattr(humans, name)}
        )
    for section, attribute in _SECTIONS:
        frame = getattr(report, attribute)
        # records keep each column's type (iterrows would make every count a float)
        for group, values in zip(frame.index, frame.to_dict(orient="records"), strict=True):
            for statistic, value in values.items():
                rows.append({"section": section, "group": group, "statistic": statistic, "value": value})
    cal = report.calibration
    if cal is not None:
        for name in ("threshold", "low", "high", "kappa", "agreement"):
            rows.append(
                {"section": "calibration", "group": "", "statistic": name, "value": getattr(cal, name)}
            )
        rows += [
            {"section": "calibration", "group": "", "statistic": "f1_at_0.35", "value": report.f1_at_tau},
            {
                "section": "calibration",
                "group": "",
                "statistic": "f1_calibrated",
                "value": report.f1_calibrated,
            },
        ]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        value = row["value"]
        writer.writerow(
            spreadsheet_row({**row, "value": "" if isinstance(value, float) and math.isnan(value) else value})
        )
    return buffer.getvalue()


def write_study_report(report: Any, fmt: str, out: Path) -> Path:
    """Write the report as `fmt` (md | csv) to `out`, whole or not at all."""
    text = study_report_markdown(report) if fmt == "md" else study_report_csv(report)
    tmp = out.with_name(f".{out.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
