"""Exports: one module per output format; each formats the frames it is handed and writes a file.

services.exports reads the frames from the store and picks the format here. A format says what
it reads ("log": the annotation log, "items": every item's current version with its state,
"report": a QC report, "bundle": everything stepgate's own format carries) and how it writes it. Nothing here reads the store or computes QC.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from exports.errors import ExportError

__all__ = ["EXPORT_FORMATS", "FORMATS", "ExportError", "Format", "write_whole"]


@dataclass(frozen=True)
class Format:
    name: str
    reads: Literal["log", "items", "report", "bundle"]
    write: Callable[[Any, Path], int]  # (what it reads, path) -> rows written
    suffix: str
    # Takes "items" as an iterable of frames (a whole database's items, read while it is written).
    streams: bool = False


def _formats() -> dict[str, Format]:
    from exports import gated, log, report, stepgate

    table: list[tuple[str, Literal["log", "items", "report", "bundle"], Callable[[Any, Path], int], str]] = [
        ("stepgate-jsonl", "bundle", stepgate.write_stepgate, "jsonl"),
        ("log-parquet", "log", log.write_parquet, "parquet"),
        ("log-csv", "log", log.write_csv, "csv"),
        ("log-jsonl", "log", log.write_jsonl, "jsonl"),
        ("prmbench", "items", gated.write_prmbench, "jsonl"),
        ("processbench", "items", gated.write_processbench, "jsonl"),
        ("processbench-all", "items", gated.write_processbench_all, "jsonl"),
        ("items-jsonl", "items", gated.write_items_jsonl, "jsonl"),
        ("crystal", "items", gated.write_crystal, "jsonl"),
        ("report-md", "report", report.write_report_md, "md"),
        ("report-csv", "report", report.write_report_csv, "csv"),
        ("report-json", "report", report.write_report_json, "json"),
    ]
    streaming = {"items-jsonl"}
    return {
        name: Format(name, reads, write, suffix, streams=name in streaming)
        for name, reads, write, suffix in table
    }


FORMATS: dict[str, Format] = _formats()
EXPORT_FORMATS: tuple[str, ...] = tuple(FORMATS)


def write_whole(fmt: str, data: Any, out: Path) -> int:
    """Write ``data`` as ``fmt`` to ``out``: the file appears whole or not at all (written beside, renamed)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    out = Path(out)
    if not out.parent.exists():
        raise ExportError(f"the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.partial")
    try:
        rows = FORMATS[fmt].write(data, tmp)
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return rows
