"""Turn a source file into records and problems, without touching the database.

`parse_file` reads PRMBench, ProcessBench, CRYSTAL, the QwQ annotation export, step pairs, and
plain JSONL/CSV/Parquet with a column mapping. A bad line never stops a file: it becomes exactly
one ImportProblem naming the field. Only a file that cannot be read at all raises ImportFormatError.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from importers import crystal, prmbench, processbench, qwq, stepgate, steppairs, tabular
from importers.common import (
    ImportFormatError,
    Row,
    collect_chunks,
    decode_json_line,
    iter_csv,
    iter_jsonl,
    iter_parquet,
    parquet_columns,
    table_columns,
)
from importers.images import MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS
from importers.records import ItemRecord, ParseResult

__all__ = [
    "BUNDLE",
    "FORMATS",
    "ImportFormatError",
    "detect_format",
    "parse_file",
    "splittable",
    "stream_file",
]

_SCHEMAS: dict[str, ModuleType] = {
    "prmbench": prmbench,
    "processbench": processbench,
    "crystal": crystal,
    "qwq": qwq,
    "steppairs": steppairs,
}
TABULAR = ("jsonl", "csv", "parquet")  # plain tables read through a column mapping
BUNDLE = "stepgate"  # stepgate's own export: read whole by importers.stepgate, not row by row
FORMATS = (BUNDLE, *_SCHEMAS, *TABULAR)
# items-jsonl is a flat view for analysis (current versions only): said so instead of asking for a mapping.
_ITEMS_VIEW_KEYS = frozenset({"external_id", "version_reason", "steps", "status"})
_DETECT_LINES = 50  # non-blank lines searched for a first JSON object


def detect_format(path: str | os.PathLike[str]) -> str:
    """Name the format from the first JSON object's keys (or a CSV header / Parquet schema).

    A table whose columns match a known schema (e.g. a PRMBench CSV export) gets that schema;
    otherwise "jsonl", "csv" or "parquet", which need a column mapping.
    """
    path = _readable(Path(path))
    container = _container(path, None)
    if container == "jsonl":
        keys = _first_object_keys(path)
    else:
        keys = set(table_columns(path, _delimiter(path)) if container == "csv" else parquet_columns(path))
    return _schema_for(keys) or container


def parse_file(
    path: str | os.PathLike[str],
    format: str | None = None,
    mapping: dict[str, str] | None = None,
    *,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    max_image_bytes: int = MAX_IMAGE_BYTES,
    base_dir: str | os.PathLike[str] | None = None,
) -> ParseResult:
    """Read one file into a ParseResult; images resolve inside base_dir (default: the file's folder).

    With a mapping and no format, the file is read as a plain table. Raises ImportFormatError
    for a missing or unreadable file, an unknown format, an empty file or an unusable mapping.
    """
    result, chunks = stream_file(
        path,
        format,
        mapping,
        max_image_pixels=max_image_pixels,
        max_image_bytes=max_image_bytes,
        base_dir=base_dir,
    )
    for chunk in chunks:
        result.records.extend(chunk)
    return result


def splittable(path: str | os.PathLike[str], format: str | None, mapping: dict[str, str] | None) -> bool:
    """The file can be read in parts by byte range (JSONL of a known schema): see stream_file's part."""
    return not mapping and format in _SCHEMAS and _container(Path(path), format) == "jsonl"


def stream_file(
    path: str | os.PathLike[str],
    format: str | None = None,
    mapping: dict[str, str] | None = None,
    *,
    size: int = 5000,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    max_image_bytes: int = MAX_IMAGE_BYTES,
    base_dir: str | os.PathLike[str] | None = None,
    part: tuple[int, int | None, int] = (0, None, 1),
    lines: list[int] | None = None,
    first_seen: dict[str, int] | None = None,
    result: ParseResult | None = None,
) -> tuple[ParseResult, Iterator[list[ItemRecord]]]:
    """parse_file ``size`` records at a time, so that a large file is written while it is read.

    ``part``: (start, end, number of the line at start) of a JSONL file, to read only the lines that
    begin between the byte offsets start and end; ``lines`` and ``first_seen`` as iter_jsonl and
    collect_chunks take them; ``result``: the result of the file's earlier part, to gather into.

    What cannot be read at all is refused here, as parse_file refuses it; the records come from
    the iterator, and the result gathers the problems, warnings and lines read as it is consumed
    (its records stay empty). A file that stops being readable part way raises ImportFormatError
    from the iterator: a caller writing chunks in one transaction then stores nothing.
    """
    path = _readable(Path(path))
    name = path.name
    if format is None:
        format = _container(path, None) if mapping else detect_format(path)
    if format not in FORMATS:
        raise ImportFormatError(name, f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    if format == BUNDLE:
        raise ImportFormatError(name, "a stepgate export is imported whole (services.imports.import_file)")
    if mapping and format not in TABULAR:
        raise ImportFormatError(name, f"a column mapping applies to {', '.join(TABULAR)}, not to {format}")
    container = _container(path, format)
    try:
        if container == "jsonl":
            columns: list[str] = []
            rows = iter_jsonl(path, part[0], part[1], lines, part[2])
        else:
            columns, rows = _open_table(path, container)
        if part[:2] == (0, None):  # a part of a file may hold no rows (the caller says if none has)
            rows = _non_empty(name, rows, header_only=bool(columns))
        if format in _SCHEMAS:
            module = _SCHEMAS[format]
            parse_row, id_field = module.parse_row, module.ID_FIELD
        else:
            if container == "jsonl":
                first, rows = _peek_object(rows)
                columns = list(first) if first else []
            if not mapping and set(columns) >= _ITEMS_VIEW_KEYS:
                raise ImportFormatError(
                    name,
                    "is an items-jsonl export: a flat view for analysis (current versions only), not "
                    "made to come back in. To move or copy a database, export with --format "
                    "stepgate-jsonl and import that file",
                )
            checked = tabular.check_mapping(name, mapping, columns)
            parse_row, id_field = tabular.make_row_parser(checked), tabular.id_label(checked)
    except OSError as exc:
        raise ImportFormatError(name, f"cannot be read ({exc.strerror or exc})") from None
    if result is None:
        result = ParseResult(format=format, records=[], problems=[])
    chunks = collect_chunks(
        result,
        name,
        rows,
        parse_row,
        id_field=id_field,
        base_dir=Path(base_dir) if base_dir is not None else path.parent,
        max_image_pixels=max_image_pixels,
        max_image_bytes=max_image_bytes,
        size=size,
        first_seen=first_seen,
    )
    return result, _reading(name, chunks)


def _reading(name: str, chunks: Iterator[list[ItemRecord]]) -> Iterator[list[ItemRecord]]:
    try:
        yield from chunks
    except OSError as exc:
        raise ImportFormatError(name, f"cannot be read ({exc.strerror or exc})") from None


def _readable(path: Path) -> Path:
    if not path.exists():
        raise ImportFormatError(str(path), "file not found")
    if not path.is_file():
        raise ImportFormatError(str(path), "is not a regular file")
    if not os.access(path, os.R_OK):
        raise ImportFormatError(str(path), "is not readable (permission denied)")
    return path


def _container(path: Path, format: str | None) -> str:
    """How the file is laid out (jsonl, csv or parquet), whatever schema its rows follow."""
    if format in TABULAR:
        return format  # the caller said how the file is laid out
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    return "jsonl"


def _open_table(path: Path, container: str) -> tuple[list[str], Iterator[Row]]:
    return iter_parquet(path) if container == "parquet" else iter_csv(path, _delimiter(path))


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _schema_for(keys: set[str]) -> str | None:
    """The schema whose telltale fields these keys carry; None for a plain table."""
    if stepgate.HEADER_KEY in keys:
        return BUNDLE
    if "custom" in keys and ("evaluation" in keys or "data_id" in keys):
        return "qwq"
    if "original_process" in keys or "modified_process" in keys:
        return "prmbench"
    if {"steps", "label"} <= keys and ("problem" in keys or "generator" in keys):
        return "processbench"
    if {"predicted", "reference"} <= keys:
        return "steppairs"
    if "question" in keys and (
        keys & {"candidate_steps", "reference_steps"}
        or ("steps" in keys and keys & {"image", "images", "answer"})
    ):
        return "crystal"
    return None


def _first_object_keys(path: Path) -> set[str]:
    name, seen = path.name, 0
    with path.open("rb") as fh:
        for raw in fh:
            stripped = raw.strip().removeprefix(b"\xef\xbb\xbf")
            if not stripped:
                continue
            obj = decode_json_line(stripped)
            if isinstance(obj, dict):
                return set(obj)
            if seen == 0 and stripped.startswith(b"["):
                raise ImportFormatError(
                    name, "holds a JSON array; JSONL (one JSON object per line) is expected"
                )
            seen += 1
            if seen >= _DETECT_LINES:
                break
    if seen == 0:
        raise ImportFormatError(name, "the file is empty, so there is nothing to import")
    raise ImportFormatError(
        name, f"no JSON object in its first {seen} non-blank lines; cannot tell the format"
    )


def _non_empty(name: str, rows: Iterator[Row], *, header_only: bool) -> Iterator[Row]:
    """The rows, or ImportFormatError if there are none: an empty file is a mistake worth saying."""
    first = next(rows, None)
    if first is None:
        reason = (
            "the file has column names but no data rows"
            if header_only
            else "the file is empty, so there is nothing to import"
        )
        raise ImportFormatError(name, reason)
    return itertools.chain([first], rows)


def _peek_object(rows: Iterator[Row]) -> tuple[dict | None, Iterator[Row]]:
    """The first row that is a JSON object (its keys are the columns), without consuming the rows."""
    buffered: list[Row] = []
    for row in rows:
        buffered.append(row)
        if isinstance(row[1], dict):
            return row[1], itertools.chain(buffered, rows)
    return None, iter(buffered)
