"""The QC report as Markdown, CSV and JSON: formats the report services.reports hands it.

The formatting functions are pure (a report in, text out); the writers put the text on disk whole
or not at all. CSV is tidy (one number per row: section, group, field, statistic, value, low,
high, n_items) so that it reads back into any tool; JSON holds the same tables.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from exports.cells import spreadsheet_row
from exports.errors import ExportError

__all__ = [
    "COEFFICIENT_NAMES",
    "ReportFiles",
    "ReportTables",
    "agreement_display",
    "coefficient_order",
    "finite_number",
    "format_ci",
    "md_cell",
    "md_table",
    "paradox_warning",
    "report_csv",
    "report_json",
    "report_markdown",
    "report_records",
    "table2_display",
    "write_report",
    "write_report_csv",
    "write_report_json",
    "write_report_md",
]

COEFFICIENT_NAMES = {
    "observed_agreement": "Observed agreement",
    "gwet_ac1": "Gwet's AC1",
    "pabak": "PABAK",
    "krippendorff_alpha": "Krippendorff's alpha",
    "fleiss_kappa": "Fleiss' kappa",
    "mean_cohen_kappa": "Cohen's kappa (mean over pairs)",
    "within_1_step": "Within ±1 step",
}
_CHANCE_FIRST = (
    "krippendorff_alpha",
    "fleiss_kappa",
    "mean_cohen_kappa",
    "observed_agreement",
    "gwet_ac1",
    "pabak",
)
_AGREEMENT_FIRST = (
    "observed_agreement",
    "gwet_ac1",
    "pabak",
    "krippendorff_alpha",
    "fleiss_kappa",
    "mean_cohen_kappa",
)
TABLE2_NOTE = (
    "Columns split each subset by the consensus label (error: a step is wrong; correct: label -1); "
    "shares are of the column's retained items (discarded items left out); % Process errors is of the "
    "subset's items with a correct final answer; 3/n = settled with exactly n annotators."
)


class ReportTables(Protocol):
    """What the formatters read: qc.dashboard.ReportTables has these (exports imports no qc)."""

    @property
    def scope(self) -> str: ...
    @property
    def dataset(self) -> str: ...
    @property
    def task(self) -> str: ...
    @property
    def n_boot(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def n_labels(self) -> int: ...
    @property
    def annotators(self) -> list[str]: ...
    @property
    def agreement(self) -> pd.DataFrame: ...
    @property
    def by_error_type(self) -> pd.DataFrame: ...
    @property
    def by_position(self) -> pd.DataFrame: ...
    @property
    def pairwise(self) -> dict[str, pd.DataFrame]: ...
    @property
    def shared(self) -> dict[str, pd.DataFrame]: ...
    @property
    def quality(self) -> pd.DataFrame: ...
    @property
    def states_by_dataset(self) -> pd.DataFrame: ...
    @property
    def table2(self) -> pd.DataFrame: ...
    @property
    def gating(self) -> pd.DataFrame: ...
    @property
    def generated_at(self) -> str: ...
    @property
    def outlier_rules(self) -> str: ...
    @property
    def paradox_fields(self) -> list[str]: ...
    @property
    def ci(self) -> float: ...
    @property
    def ci_label(self) -> str: ...
    @property
    def interval_coverage(self) -> str: ...


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    csv: Path
    json: Path


# ---- pure formatting -----------------------------------------------------------------------


def finite_number(value: Any) -> float | None:
    """A cell's value as a float, None where it is missing or NaN (so exports print 'n/a', not 'nan')."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


# How the figures are computed where the definitions in use differ (qc.agreement's conventions).
METHOD_NOTES = (
    "Fleiss' kappa with missing ratings: P-bar over items with at least two ratings, category shares "
    "pooled over all their ratings (Fleiss 1971 with varying raters, as statsmodels); irrCAC averages "
    "each item's own shares instead, which differs when items have different numbers of ratings.",
    "Gwet's AC1: observed agreement over items with at least two ratings; its chance term uses every "
    "item with at least one rating, single-rated items included (Gwet 2014), over the field's whole "
    "label set (q), not only the labels used.",
    "PABAK: k is the field's label set; a two-rater PABAK on two sequences counts only compared pairs.",
    "Krippendorff's alpha at ratio level refuses negative values (ProcessBench's -1 is a category).",
)


def interval_note(report: Any) -> str:
    """Which interval stands beside which figure, and where a percentile interval can mislead."""
    return (
        f"Wilson score intervals for observed agreement and agreement within one step; {report.n_boot} "
        f"bootstrap replicates for the {report.interval_coverage}"
    )


def format_ci(value: Any, low: Any = None, high: Any = None) -> str:
    """'0.823 [0.790, 0.860]'; 'n/a' where the figure is undefined (too few items, one label only)."""
    v = finite_number(value)
    if v is None:
        return "n/a"
    lo, hi = finite_number(low), finite_number(high)
    return f"{v:.3f}" if lo is None or hi is None else f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def coefficient_order(paradox: bool) -> tuple[str, ...]:
    """Chance-corrected coefficients first, unless prevalence is skewed: then OA and AC1 lead."""
    return _AGREEMENT_FIRST if paradox else _CHANCE_FIRST


def agreement_display(report: ReportTables) -> pd.DataFrame:
    """The agreement table as text: lead figure first, then every coefficient with its interval."""
    table = report.agreement
    order = coefficient_order(bool(report.paradox_fields))
    columns = [
        "Field",
        "Level",
        "Items",
        "Annotators",
        "Lead coefficient",
        f"Lead value [{report.ci_label} CI]",
        *(COEFFICIENT_NAMES[c] for c in order),
    ]
    rows = []
    for row in table.to_dict("records"):
        level = (
            f"{row['level']}, binary"
            if row["level"] == "nominal" and row["n_categories"] == 2
            else row["level"]
        )
        lead = row["lead"]
        cells = [
            row["field"],
            level,
            int(row["n_pairable"]),
            int(row["n_annotators"]),
            COEFFICIENT_NAMES[lead],
            format_ci(row[lead], row[f"{lead}_low"], row[f"{lead}_high"]),
        ]
        cells += [format_ci(row[c], row[f"{c}_low"], row[f"{c}_high"]) for c in order]
        rows.append(cells)
    out = pd.DataFrame(rows, columns=columns)
    within = table[table["field"] == "earliest_error"] if len(table) else table
    if len(within):
        r = within.iloc[0]
        out[COEFFICIENT_NAMES["within_1_step"]] = [
            format_ci(r["within_1_step"], r["within_1_step_low"], r["within_1_step_high"])
            if f == "earliest_error"
            else ""
            for f in out["Field"]
        ]
    return out


def paradox_warning(report: ReportTables) -> str:
    """Plain words for the kappa paradox, or '' when no field is skewed."""
    fields = report.paradox_fields
    if not fields:
        return ""
    rows = report.agreement.set_index("field")
    parts = [f"{f} ({rows.loc[f, 'max_prevalence']:.0%} of labels share one value)" for f in fields]
    return (
        "Kappa misleads here: " + "; ".join(parts) + ". With one label this common, chance agreement is "
        "already high, so kappa comes out low even when annotators agree (the kappa paradox). Read observed "
        "agreement and Gwet's AC1 instead: they lead the table, as PRMBench-V reports observed agreement."
    )


def md_cell(value: Any) -> str:
    """A value as one Markdown table cell: numbers to 3 places, text escaped, one line, pipes escaped."""
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    text = html.escape(str(value), quote=False)
    return re.sub(r"[\r\n]+", " ", text).replace("|", "\\|")


def md_table(frame: pd.DataFrame) -> str:
    """A frame as a Markdown table of md_cell cells ("_none yet_" when empty)."""
    if frame.empty:
        return "_none yet_\n"
    lines = ["| " + " | ".join(md_cell(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _table2_cell(row: str, value: Any) -> str:
    v = finite_number(value)
    if v is None:
        return "n/a"
    if row == "# Samples":
        return f"{v:.0f}"
    return f"{v:.1f}" if row.startswith("#") else f"{v:.1f}%"


def table2_display(table2: pd.DataFrame) -> pd.DataFrame:
    """ProcessBench's Table 2 as printed: counts, one decimal, percent signs; "GSM8K error" columns."""
    if table2.empty:
        return pd.DataFrame()
    out = pd.DataFrame({"": [str(r) for r in table2.index]})
    for subset, column in table2.columns:
        out[f"{subset} {column}"] = [_table2_cell(str(r), v) for r, v in table2[(subset, column)].items()]
    return out


def _table2_records(table2: pd.DataFrame) -> list[dict[str, Any]]:
    """One record per cell: row, subset, column, value (unrounded; None where undefined)."""
    if table2.empty:
        return []
    return [
        {"row": str(row), "subset": str(subset), "column": str(column), "value": finite_number(value)}
        for (subset, column) in table2.columns
        for row, value in table2[(subset, column)].items()
    ]


def report_markdown(report: ReportTables) -> str:
    """The whole report as one Markdown page."""
    out = [
        f"# QC report: {md_cell(report.scope)}\n",
        f"Dataset **{md_cell(report.dataset)}** ({report.task}); {report.n_labels} labels by "
        f"{len(report.annotators)} annotators; {report.ci_label} intervals ({interval_note(report)}); "
        f"generated {report.generated_at}.\n",
        "## Agreement per field\n",
    ]
    notes: list[str] = getattr(report, "notes", [])  # a study's progress; if sequential, why it stopped
    out[-1:-1] = [f"{md_cell(note)}\n" for note in notes]
    warning = paradox_warning(report)
    if warning:
        out.append(f"> **Warning.** {warning}\n")
    out.append(md_table(agreement_display(report)))
    if len(report.by_position):
        out += ["\n## Earliest error: agreement by step position\n", md_table(report.by_position)]
    out += ["\n## Agreement by error type\n", md_table(report.by_error_type)]
    for field, matrix in report.pairwise.items():
        out += [
            f"\n## Pairwise observed agreement: {md_cell(field)}\n",
            md_table(matrix.reset_index(names="annotator")),
        ]
    out += ["\n## Annotators\n", md_table(report.quality), f"\nOutlier rules: {report.outlier_rules}\n"]
    out += ["\n## Consensus states by dataset\n", md_table(report.states_by_dataset)]
    if not report.table2.empty:
        out += ["\n## ProcessBench Table 2\n", f"{TABLE2_NOTE}\n", md_table(table2_display(report.table2))]
    if len(report.gating):
        out += ["\n## Rejections and regeneration\n", md_table(report.gating)]
    out += ["\n## Methods\n", *(f"- {note}" for note in METHOD_NOTES)]
    return "\n".join(out)


def _tidy(
    frame: pd.DataFrame, section: str, group: str | None, stats: list[str], n: str | None
) -> list[dict]:
    rows = []
    for row in frame.to_dict("records"):
        for stat in stats:
            rows.append(
                {
                    "section": section,
                    "group": str(row[group]) if group else "",
                    "field": str(row.get("field", "")),
                    "statistic": stat,
                    "value": finite_number(row.get(stat)),
                    "low": finite_number(row.get(f"{stat}_low")),
                    "high": finite_number(row.get(f"{stat}_high")),
                    "n_items": finite_number(row.get(n)) if n else None,
                }
            )
    return rows


def report_records(report: ReportTables) -> list[dict[str, Any]]:
    """Every number of the report, one per record (what the CSV holds)."""
    rows = _tidy(report.agreement, "agreement", None, [*COEFFICIENT_NAMES], "n_pairable")
    rows = [r for r in rows if r["statistic"] != "within_1_step" or r["field"] == "earliest_error"]
    rows += _tidy(
        report.by_error_type,
        "by_error_type",
        "group",
        ["observed_agreement", "gwet_ac1", "fleiss_kappa", "krippendorff_alpha"],
        "n_items",
    )
    rows += _tidy(
        report.by_position, "by_position", "position", ["observed_agreement", "within_1_step"], "n_items"
    )
    quality = (
        report.quality.assign(group=report.quality["annotator"]) if len(report.quality) else report.quality
    )
    rows += _tidy(quality, "annotators", "group", ["median_seconds", "agreement", "kappa"], "compared")
    for field, matrix in report.pairwise.items():
        for a in matrix.index:
            for b in matrix.columns:
                rows.append(
                    {
                        "section": "pairwise",
                        "group": f"{a} ~ {b}",
                        "field": field,
                        "statistic": "observed_agreement",
                        "value": finite_number(matrix.loc[a, b]),
                        "low": None,
                        "high": None,
                        "n_items": finite_number(report.shared[field].loc[a, b]),
                    }
                )
    by = "dataset"
    stats = [c for c in report.states_by_dataset.columns if c != by]
    rows += _tidy(report.states_by_dataset, "states_by_dataset", by, stats, None)
    rows += [
        {
            "section": "processbench_table2",
            "group": r["subset"],
            "field": r["column"],
            "statistic": r["row"],
            "value": r["value"],
            "low": None,
            "high": None,
            "n_items": None,
        }
        for r in _table2_records(report.table2)
    ]
    rows += [
        {
            "section": "gating",
            "group": "",
            "field": "",
            "statistic": w,
            "value": float(c),
            "low": None,
            "high": None,
            "n_items": None,
        }
        for w, c in zip(report.gating["what"], report.gating["count"], strict=True)
    ]
    return rows


_CSV_COLUMNS = ["section", "group", "field", "statistic", "value", "low", "high", "n_items", "ci"]


def report_csv(report: ReportTables) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(
        spreadsheet_row(
            {
                **{k: ("" if v is None else v) for k, v in r.items()},
                "ci": report.ci if r.get("low") is not None else "",
            }
        )
        for r in report_records(report)
    )
    return buffer.getvalue()


def _json_frame(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records", date_format="iso", default_handler=str))


def report_json(report: ReportTables) -> str:
    """The report's tables as JSON (NaN becomes null)."""
    body = {
        "scope": report.scope,
        "dataset": report.dataset,
        "task": report.task,
        "n_boot": report.n_boot,
        "ci": report.ci,
        "seed": report.seed,
        "generated_at": report.generated_at,
        "n_labels": report.n_labels,
        "annotators": report.annotators,
        "kappa_paradox_fields": report.paradox_fields,
        "agreement": _json_frame(report.agreement),
        "by_error_type": _json_frame(report.by_error_type),
        "by_position": _json_frame(report.by_position),
        "annotator_quality": _json_frame(report.quality),
        "outlier_rules": report.outlier_rules,
        "pairwise_observed_agreement": {
            f: json.loads(m.to_json(orient="index")) for f, m in report.pairwise.items()
        },
        "pairwise_shared_items": {f: json.loads(m.to_json(orient="index")) for f, m in report.shared.items()},
        "states_by_dataset": _json_frame(report.states_by_dataset),
        "processbench_table2": _table2_records(report.table2),
        "gating": dict(zip(report.gating["what"], (int(c) for c in report.gating["count"]), strict=True)),
    }
    return json.dumps(body, indent=2, ensure_ascii=False)


# ---- writing -------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "report"


def write_report(report: ReportTables, folder: Path) -> ReportFiles:
    """The three report files in ``folder``, named after the report's scope."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot make the folder {folder}: {exc.strerror or exc}") from exc
    stem = f"qc-report-{_slug(report.scope)}"
    return ReportFiles(
        markdown=_write(folder / f"{stem}.md", report_markdown(report)),
        csv=_write(folder / f"{stem}.csv", report_csv(report)),
        json=_write(folder / f"{stem}.json", report_json(report)),
    )


def write_report_md(report: ReportTables, out: Path) -> int:
    """exports.FORMATS' report-md: the Markdown report; returns the agreement rows."""
    Path(out).write_text(report_markdown(report), encoding="utf-8")
    return len(report.agreement)


def write_report_csv(report: ReportTables, out: Path) -> int:
    text = report_csv(report)
    Path(out).write_text(text, encoding="utf-8")
    return text.count("\n") - 1


def write_report_json(report: ReportTables, out: Path) -> int:
    Path(out).write_text(report_json(report), encoding="utf-8")
    return len(report.agreement)
