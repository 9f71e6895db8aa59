"""Exports: one module per output format; reads through store functions, writes files."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store import Store

__all__ = ["EXPORT_FORMATS", "ExportError", "Written", "export"]


class ExportError(ValueError):
    """An export that cannot be written, said with what and where."""


@dataclass(frozen=True)
class Written:
    path: Path
    rows: int


def _writers() -> dict:
    from exports import gated, log, report

    return {
        "log-parquet": log.write_parquet,
        "log-csv": log.write_csv,
        "log-jsonl": log.write_jsonl,
        "prmbench": gated.write_prmbench,
        "processbench": gated.write_processbench,
        "items-jsonl": gated.write_items_jsonl,
        "report-md": report.write_report_md,
        "report-csv": report.write_report_csv,
        "report-json": report.write_report_json,
    }


EXPORT_FORMATS = (
    "log-parquet",
    "log-csv",
    "log-jsonl",
    "prmbench",
    "processbench",
    "items-jsonl",
    "report-md",
    "report-csv",
    "report-json",
)


def export(
    store: Store, fmt: str, out: Path, *, dataset: str | None = None, annotator: str | None = None
) -> Written:
    """Write one export; the file appears whole or not at all (written beside, then renamed).

    With `annotator`, only the annotation log can be written, holding that annotator's rows only:
    what an annotator may download on a blind task.
    """
    from store.datasets import get_dataset

    writers = _writers()
    if fmt not in writers:
        raise ExportError(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    dataset_id = None
    if dataset is not None:
        found = get_dataset(store, dataset)
        if found is None:
            raise ExportError(f"no dataset named {dataset!r}")
        dataset_id = found.id
    if annotator is not None:
        if not fmt.startswith("log-"):
            raise ExportError(
                f"{fmt} holds every annotator's decisions: only log formats can be limited to one annotator"
            )
        from exports import log

        writer = {"log-parquet": log.write_parquet, "log-csv": log.write_csv, "log-jsonl": log.write_jsonl}[
            fmt
        ]
        writers = {fmt: partial(log.only_annotator, writer, annotator)}
    out = Path(out)
    if not out.parent.exists():
        raise ExportError(f"the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.partial")
    try:
        rows = writers[fmt](store, tmp, dataset_id)
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return Written(out, rows)
