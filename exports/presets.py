"""A paper preset's table as Markdown, CSV and LaTeX: formats what services.presets hands it.

Row names carry their format, as ProcessBench's Table 2 prints them: "# " a count (a whole number,
else one decimal, e.g. "# Steps"), "% " a share in percent with one decimal, anything else a
coefficient with three decimals. CSV keeps every value unrounded (one cell per line), so the
figures read back exactly; Markdown and LaTeX print them as the paper does.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pandas as pd

from exports.cells import spreadsheet_row
from exports.report import finite_number

__all__ = ["FORMATS", "format_cell", "preset_csv", "preset_latex", "preset_markdown", "preset_text"]

FORMATS = {"markdown": ".md", "csv": ".csv", "latex": ".tex"}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def format_cell(row: str, value: Any) -> str:
    """One cell as the paper prints it; 'n/a' where undefined (an empty column, an unpublished figure)."""
    v = finite_number(value)
    if v is None:
        return "n/a"
    if row.startswith("#"):
        return f"{v:.0f}" if v == int(v) else f"{v:.1f}"
    if row.startswith("%"):
        return f"{v:.1f}%"
    return f"{v:.3f}"


def _headers(table: pd.DataFrame) -> list[str]:
    return [" ".join(str(p) for p in c) if isinstance(c, tuple) else str(c) for c in table.columns]


def _rows(table: pd.DataFrame) -> list[tuple[str, list[str]]]:
    return [(str(row), [format_cell(str(row), v) for v in table.loc[row]]) for row in table.index]


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def preset_markdown(table: pd.DataFrame, title: str, note: str = "") -> str:
    lines = [f"# {_md(title)}", ""]
    if note:
        lines += [_md(note), ""]
    lines.append("| | " + " | ".join(_md(h) for h in _headers(table)) + " |")
    lines.append("|---|" + "---:|" * len(table.columns))
    lines += ["| " + _md(row) + " | " + " | ".join(cells) + " |" for row, cells in _rows(table)]
    return "\n".join(lines) + "\n"


def preset_csv(table: pd.DataFrame) -> str:
    """Tidy: row, column, value (unrounded; empty where undefined)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["row", "column", "value"])
    for row in table.index:
        for header, value in zip(_headers(table), table.loc[row], strict=True):
            number = finite_number(value)
            writer.writerow(spreadsheet_row([row, header, "" if number is None else repr(number)]))
    return buffer.getvalue()


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def preset_latex(table: pd.DataFrame, title: str, note: str = "") -> str:
    """A booktabs tabular in a table environment, every text escaped for LaTeX."""
    spec = "l" + "r" * len(table.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{_latex(title)}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & " + " & ".join(_latex(h) for h in _headers(table)) + r" \\",
        r"\midrule",
    ]
    lines += [
        _latex(row) + " & " + " & ".join(_latex(c) for c in cells) + r" \\" for row, cells in _rows(table)
    ]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if note:
        lines.append(rf"\par\smallskip\footnotesize {_latex(note)}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def preset_text(table: pd.DataFrame, title: str, note: str, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {sorted(FORMATS)}, got {fmt!r}")
    if fmt == "csv":
        return preset_csv(table)
    return preset_latex(table, title, note) if fmt == "latex" else preset_markdown(table, title, note)
