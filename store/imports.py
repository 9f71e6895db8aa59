"""Import a file end to end: parse, refuse or report bad lines, write the good ones in one transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from store.bulk import Spill, no_cyclic_gc, stage_records, write_staged
from store.bundles import write_bundle
from store.datasets import get_or_create_dataset
from store.errors import StoreRequestError
from store.importers import BUNDLE, ImportFormatError, detect_format, stream_file
from store.importers.stepgate import parse_bundle
from store.items import WriteSummary, existing_versions, write_records
from store.records import ImportProblem, ItemRecord
from tasks import EARLIEST_ERROR, QUALITY_GATE, STEP_MATCH, STEP_REVIEW

if TYPE_CHECKING:
    from store.db import Store

__all__ = [
    "TASK_OF_FORMAT",
    "ImportOutcome",
    "ImportRejected",
    "import_file",
    "import_records",
    "write_skip_report",
]

_CHUNK = 20_000  # records written per step (a progress bar moves on long imports); ~50 MB of records

TASK_OF_FORMAT = {
    "prmbench": STEP_REVIEW,
    "processbench": EARLIEST_ERROR,
    "qwq": EARLIEST_ERROR,
    "crystal": QUALITY_GATE,
    "steppairs": STEP_MATCH,
}


class ImportRejected(StoreRequestError):
    """The file had bad lines and partial import was not asked for: nothing was stored."""

    def __init__(self, path: Path, problems: list[ImportProblem], good: int) -> None:
        self.path, self.problems, self.good = path, problems, good
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(
            f"{path}: {len(problems)} bad line(s), so nothing was imported ({good} good line(s) held back). "
            f"Fix them, or import the good lines with --skip-bad (a report of the skipped lines is written).\n"
            f"{shown}{more}"
        )


@dataclass
class ImportOutcome:
    path: Path
    format: str
    dataset: str
    task: str
    added: int = 0
    new_versions: int = 0
    unchanged: int = 0
    annotations: int = 0  # annotation log rows brought in (stepgate exports only)
    skipped: list[ImportProblem] = field(default_factory=list)
    warnings: list[ImportProblem] = field(default_factory=list)
    report_path: Path | None = None
    notes: list[str] = field(default_factory=list)  # what happened next (services add these)

    def summary(self) -> str:
        text = (
            f"{self.path.name} ({self.format}) -> dataset {self.dataset!r} [{self.task}]: "
            f"{self.added} new item(s), {self.new_versions} new version(s), {self.unchanged} unchanged"
        )
        if self.annotations:
            text += f", {self.annotations} annotation(s)"
        if self.skipped:
            text += f"; {len(self.skipped)} bad line(s) skipped, listed in {self.report_path}"
        if self.warnings:
            text += f"; {len(self.warnings)} warning(s) (kept with a change), listed in {self.report_path}"
        return "; ".join([text, *self.notes])


def write_skip_report(
    path: Path,
    source: Path,
    problems: list[ImportProblem],
    warnings: list[ImportProblem] = (),  # type: ignore[assignment]
) -> None:
    """A tab-separated list: every skipped line, then every line kept with a change, and why."""
    lines = [
        f"# {source}: {len(problems)} line(s) skipped, {len(warnings)} kept with a warning",
        "kind\tfile\tline\treason",
    ]
    lines += [f"skipped\t{p.file}\t{p.line}\t{p.reason}" for p in problems]
    lines += [f"warning\t{p.file}\t{p.line}\t{p.reason}" for p in warnings]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def import_file(
    store: Store,
    path: str | Path,
    *,
    format: str | None = None,
    dataset: str | None = None,
    task: str | None = None,
    mapping: dict[str, str] | None = None,
    skip_bad: bool = False,
    report_path: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportOutcome:
    """All good lines or nothing, unless skip_bad: then the good lines and a report of the rest."""
    path = Path(path)
    if format == BUNDLE or (format is None and not mapping and detect_format(path) == BUNDLE):
        with no_cyclic_gc():
            return _import_bundle(store, path, dataset, progress)
    with no_cyclic_gc():
        return _import_rows(store, path, format, dataset, task, mapping, skip_bad, report_path, progress)


def _import_rows(
    store: Store,
    path: Path,
    format: str | None,
    dataset: str | None,
    task: str | None,
    mapping: dict[str, str] | None,
    skip_bad: bool,
    report_path: str | Path | None,
    progress: Callable[[int], None] | None,
) -> ImportOutcome:
    try:
        parsed, chunks = stream_file(path, format=format, mapping=mapping, size=_CHUNK)
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    the_task = task or TASK_OF_FORMAT.get(parsed.format) or EARLIEST_ERROR
    name = dataset or path.stem
    outcome = ImportOutcome(path=path, format=parsed.format, dataset=name, task=the_task)
    good = 0
    # Two phases, so that annotators' submits wait only for the writes: the file is read, checked and
    # hashed without the write lock, into Arrow chunks kept on disk (a million items never sit in
    # memory at once); then they are written under the lock in one transaction. A bad line found late,
    # without skip_bad, is found before anything is written: a file is imported whole or not at all.
    with Spill() as spill:
        for chunk in chunks:
            good += len(chunk)
            if parsed.problems and not skip_bad:
                continue  # the file will be refused: read on only to list every bad line
            spill.add(stage_records(chunk))
        if parsed.problems and not skip_bad:
            raise ImportRejected(path, parsed.problems, good)
        with store.writing() as tx:
            dataset_ = get_or_create_dataset(tx, name, the_task, parsed.format)
            # Read once: ids are unique within a file, so no chunk can meet an item an earlier one added.
            known = existing_versions(tx, dataset_.id)
            for staged in spill:
                written = write_staged(tx, dataset_, staged, known)
                outcome.added += written.added
                outcome.new_versions += written.new_versions
                outcome.unchanged += written.unchanged
                if progress:
                    progress(len(staged))
        warnings = list(parsed.warnings)
        if parsed.problems or warnings:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            report = (
                Path(report_path)
                if report_path
                else store.data_dir / "import-reports" / f"{path.stem}-{stamp}.tsv"
            )
            report.parent.mkdir(parents=True, exist_ok=True)
            write_skip_report(report, path, parsed.problems, warnings)
            outcome.skipped, outcome.warnings, outcome.report_path = parsed.problems, warnings, report
    return outcome


def _import_bundle(
    store: Store, path: Path, dataset: str | None, progress: Callable[[int], None] | None
) -> ImportOutcome:
    """A stepgate export: every dataset in it, with versions, states and log, in one transaction."""
    bundle = parse_bundle(path)
    with store.writing() as tx:
        written = write_bundle(tx, bundle, rename=dataset)
    if progress:
        progress(written.items)
    tasks = sorted({d["task"] for d in bundle.datasets})
    return ImportOutcome(
        path=path,
        format=BUNDLE,
        dataset=", ".join(written.datasets),
        task=", ".join(tasks),
        added=written.items,
        new_versions=written.versions - written.items,
        annotations=written.annotations,
        notes=[f"{written.studies} agreement study(ies) with {written.study_labels} study label(s)"]
        if written.studies
        else [],
    )


def import_records(
    store: Store, records: list[ItemRecord], *, dataset: str, task: str, source_format: str
) -> WriteSummary:
    """Records made by a service (a sampled study, say) stored as a dataset, in one transaction."""
    with store.writing() as tx:
        return write_records(tx, dataset, task, records, source_format)
