"""Exports: read what a format needs from the store and hand it to the format in exports/.

The command line (`app.py export`) and the panels' export buttons call `export`. Who may export
what is the caller's check today (admins in Data; annotators only their own log rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exports import EXPORT_FORMATS, FORMATS, ExportError, write_whole
from services.errors import InvalidInput, NotAllowed, NotFound, ServiceError
from services.reports import build_dataset_report
from store.annotations import annotations_frame
from store.datasets import get_dataset
from store.items import items_frame

if TYPE_CHECKING:
    from store import Store

__all__ = ["EXPORT_FORMATS", "Written", "export"]


@dataclass(frozen=True)
class Written:
    path: Path
    rows: int


def _data(
    store: Store, reads: str, dataset_id: int | None, dataset: str | None, annotator: str | None
) -> Any:
    if reads == "log":
        # The log is append-only: the export carries every row, not only the current versions.
        frame = annotations_frame(store, dataset_id, current_versions_only=False)
        if annotator is not None:
            frame = frame[frame["annotator"] == annotator].reset_index(drop=True)
        return frame
    if reads == "items":
        return items_frame(store, dataset_id)
    if dataset is None:
        raise InvalidInput("the report covers one dataset: give --dataset NAME")
    return build_dataset_report(store, dataset)


def export(
    store: Store, fmt: str, out: Path, *, dataset: str | None = None, annotator: str | None = None
) -> Written:
    """Write one export; the file appears whole or not at all.

    With `annotator`, only the annotation log can be written, holding that annotator's rows only:
    what an annotator may download on a blind task. Raises a ServiceError saying what to fix.
    """
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    spec = FORMATS[fmt]
    if annotator is not None and spec.reads != "log":
        raise NotAllowed(
            f"{fmt} holds every annotator's decisions: only log formats can be limited to one annotator"
        )
    dataset_id = None
    if dataset is not None:
        found = get_dataset(store, dataset)
        if found is None:
            raise NotFound(f"no dataset named {dataset!r}")
        dataset_id = found.id
    out = Path(out)
    if not out.parent.exists():
        raise InvalidInput(f"the folder {out.parent} does not exist")
    data = _data(store, spec.reads, dataset_id, dataset, annotator)
    try:
        rows = write_whole(fmt, data, out)
    except ExportError as exc:
        raise ServiceError(str(exc)) from exc
    return Written(out, rows)
