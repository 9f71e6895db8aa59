"""The import use case: a file parsed (importers), checked, staged without the write lock (store.staging),
written in one transaction (store.bulk, store.bundles), and its bad lines refused or reported.

Who may import is checked by services.data, which calls import_file; what follows an import there.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from importers import BUNDLE, ImportFormatError, detect_format, splittable, stream_file
from importers.images import MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS
from importers.records import ImportProblem, ItemRecord, ParseResult
from importers.stepgate import parse_bundle
from services.import_part import RESULT
from services.import_part import run as run_part
from store.bulk import WriteSummary, no_cyclic_gc, write_chunks, write_records
from store.bundles import write_bundle
from store.datasets import get_or_create_dataset
from store.items import existing_versions
from store.staging import Spill, stage_records
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
_SPLIT_BYTES = 48 << 20  # a JSONL file this large is read in two processes (~35k items of 8-12 steps)
_FIRST_SHARE = 0.55  # of the file read here: the other process starts later (it imports the store)
_FORK_SPLIT_BYTES = 4 << 20  # the same when this process can be forked (it starts at once): ~3k items
_ANALYZE_AFTER = 1000  # items an import adds before the planner's statistics are refreshed (PostgreSQL)
_GROWN_BY_IMPORT = ("items", "item_versions", "steps", "item_state", "images", "version_images")

TASK_OF_FORMAT = {
    "prmbench": STEP_REVIEW,
    "processbench": EARLIEST_ERROR,
    "qwq": EARLIEST_ERROR,
    "crystal": QUALITY_GATE,
    "steppairs": STEP_MATCH,
}


class ImportRejected(ValueError):
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
        with no_cyclic_gc(), store.all_cores():
            return _import_bundle(store, path, dataset, progress)
    with no_cyclic_gc(), store.all_cores():
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
    spill = Spill()
    try:
        parsed, good = _stage_file(path, format, mapping, skip_bad, spill)
    except OSError as exc:
        spill.close()
        raise ImportFormatError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    except BaseException:
        spill.close()
        raise
    the_task = task or TASK_OF_FORMAT.get(parsed.format) or EARLIEST_ERROR
    name = dataset or path.stem
    outcome = ImportOutcome(path=path, format=parsed.format, dataset=name, task=the_task)
    # Two phases, so that annotators' submits wait only for the writes: the file is read, checked and
    # hashed without the write lock, into Arrow chunks kept on disk (a million items never sit in
    # memory at once); then they are written under the lock in one transaction. A bad line found late,
    # without skip_bad, is found before anything is written: a file is imported whole or not at all.
    with spill:
        if parsed.problems and not skip_bad:
            raise ImportRejected(path, parsed.problems, good)
        with store.writing() as tx:
            dataset_ = get_or_create_dataset(tx, name, the_task, parsed.format)
            # Read once: ids are unique within a file, so no chunk can meet an item an earlier one added.
            known = existing_versions(tx, dataset_.id)
            written = write_chunks(tx, dataset_, spill, known, progress)
            outcome.added, outcome.new_versions, outcome.unchanged = (
                written.added,
                written.new_versions,
                written.unchanged,
            )
        if outcome.added + outcome.new_versions >= _ANALYZE_AFTER:
            store.analyze(_GROWN_BY_IMPORT)
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


def _stage_file(
    path: Path, format: str | None, mapping: dict[str, str] | None, skip_bad: bool, spill: Spill
) -> tuple[ParseResult, int]:
    """Read, check and stage the file into ``spill``: the result (problems, warnings) and the number
    of good lines. A large JSONL file of a known schema is read in two parts at once, the second in
    another process (services.import_part): the two cores each parse and hash half of it."""
    if format is None and not mapping:
        format = detect_format(path)
    split = _split_point(path) if splittable(path, format, mapping) else None
    worker = _start_part(path, format, split, skip_bad, spill) if split is not None else None
    try:
        lines: list[int] = []
        seen: dict[str, int] = {}
        parsed, chunks = stream_file(
            path,
            format=format,
            mapping=mapping,
            size=_CHUNK,
            part=(0, split, 1),
            lines=lines,
            first_seen=seen,
        )
        good = _stage_chunks(parsed, chunks, skip_bad, spill)
        if split is None:
            return parsed, good
        part = _finish_part(worker, spill.folder)
        if part is not None and not seen.keys() & part["first_seen"].keys():
            parsed.problems += part["problems"]
            parsed.warnings += part["warnings"]
            parsed.lines_read += part["lines_read"]
            if not parsed.problems or skip_bad:
                spill.adopt(part["bases"], part["records"])
            good += part["good"]
        else:  # the part could not be read apart (or holds an id the first part has): read it here
            _, rest = stream_file(
                path,
                format=format,
                size=_CHUNK,
                part=(split, None, lines[0] + 1),
                first_seen=seen,
                result=parsed,
            )
            good += _stage_chunks(parsed, rest, skip_bad, spill)
        if not parsed.lines_read:
            raise ImportFormatError(path.name, "the file is empty, so there is nothing to import")
        return parsed, good
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait()


def _stage_chunks(
    parsed: ParseResult, chunks: Iterator[list[ItemRecord]], skip_bad: bool, spill: Spill
) -> int:
    good = 0
    for chunk in chunks:
        good += len(chunk)
        if parsed.problems and not skip_bad:
            continue  # the file will be refused: read on only to list every bad line
        spill.add(stage_records(chunk))
    return good


def _split_point(path: Path) -> int | None:
    """Where the second part of a file worth reading in two parts begins (a line start), or None."""
    size = path.stat().st_size
    forks = _can_fork()
    if size < (_FORK_SPLIT_BYTES if forks else _SPLIT_BYTES) or (os.cpu_count() or 1) < 2:
        return None
    with path.open("rb") as fh:
        fh.seek(int(size * (0.5 if forks else _FIRST_SHARE)))
        fh.readline()
        split = fh.tell()
    return split if split < size else None


class _Forked:
    """The part read in a forked copy of this process, waited for as a subprocess.Popen is."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def _waited(self, flags: int) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, flags)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._waited(os.WNOHANG)

    def wait(self) -> int | None:
        return self._waited(0)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)


def _can_fork() -> bool:
    """A copy of this process starts at once, its modules loaded; only safe while it runs one thread
    (a lock another thread holds would stay held in the copy). A server starts a new interpreter."""
    return hasattr(os, "fork") and threading.active_count() == 1


def _start_part(
    path: Path, format: str | None, split: int, skip_bad: bool, spill: Spill
) -> _Forked | subprocess.Popen[bytes]:
    args = {
        "path": str(path),
        "format": format,
        "start": split,
        "folder": str(spill.folder),
        "size": _CHUNK,
        "skip_bad": skip_bad,
        "base_dir": str(path.parent),
        "max_image_pixels": MAX_IMAGE_PIXELS,
        "max_image_bytes": MAX_IMAGE_BYTES,
    }
    if _can_fork():
        pid = os.fork()
        if pid == 0:  # the copy: read the part, say what was found, and leave without cleaning up
            code = 1
            try:
                run_part(args)
                code = 0
            finally:
                os._exit(code)
        return _Forked(pid)
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "services.import_part", json.dumps(args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _finish_part(worker: _Forked | subprocess.Popen[bytes] | None, folder: Path) -> dict[str, Any] | None:
    """What the other process found, or None when it failed (the part is then read here)."""
    if worker is None or worker.wait() != 0:
        return None
    result = folder / RESULT
    if not result.exists():
        return None
    found = pickle.loads(result.read_bytes())  # written by our own process, in our own folder
    return None if "error" in found else found


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
