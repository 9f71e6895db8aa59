"""What every importer shares: reading rows with their line numbers, turning a bad row into one
problem, and coercing field values that circulate in several shapes (a list, a JSON-encoded
string, a Python repr, a CSV cell).

A row parser raises LineError naming the field; the driver (`collect`) turns that, or anything
else a malformed row provokes, into exactly one ImportProblem, so one bad line never stops a file.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from importers.images import ImageError, load_image
from importers.records import ImageData, ImportProblem, ItemRecord, ParseResult


class LineError(ValueError):
    """One row cannot be imported; the message starts with the field it is about."""


class ImportFormatError(ValueError):
    """The whole file cannot be read (missing, unreadable, unknown format, missing mapped column)."""

    def __init__(self, file: str, reason: str | None = None) -> None:
        # One argument is taken as the whole message ("<file>: <reason>"), as callers outside write it.
        if reason is None:
            file, _, reason = file.partition(": ") if ": " in file else ("", "", file)
        super().__init__(f"{file}: {reason}" if file else reason)
        self.file = file
        self.reason = reason


@dataclass
class RowContext:
    """Where a row comes from and what was noticed on it that did not stop it."""

    file: str
    line: int
    base_dir: Path
    max_image_pixels: int
    max_image_bytes: int
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def images(self, value: Any, name: str) -> list[ImageData]:
        """Load one image reference or a list of them; a refused image fails the row."""
        if is_missing(value):
            return []
        refs = value if isinstance(value, list) else [value]
        out = []
        for i, ref in enumerate(refs):
            label = name if len(refs) == 1 else f"{name}[{i}]"
            try:
                out.append(
                    load_image(
                        ref, self.base_dir, max_pixels=self.max_image_pixels, max_bytes=self.max_image_bytes
                    )
                )
            except ImageError as exc:
                raise LineError(f"{label}: {exc}") from None
        return out


Row = tuple[int, dict[str, Any] | LineError]  # a line number and its object, or why it is not one
RowParser = Callable[[dict[str, Any], RowContext], ItemRecord]


# --- reading rows --------------------------------------------------------------------------------


def iter_jsonl(
    path: Path, start: int = 0, end: int | None = None, lines: list[int] | None = None, first: int = 1
) -> Iterator[Row]:
    """Yield (1-based line number, object or LineError) per non-blank line.

    Splits on b"\\n" only: JSON text may hold U+2028 and other characters str.splitlines breaks on.
    ``start``/``end``: the lines that begin in this byte range (a line start), the first numbered
    ``first``; ``lines`` receives the number of the last line read (blank ones count).
    """
    with path.open("rb") as fh:
        fh.seek(start)
        number, position = first - 1, start
        for raw in fh:
            if end is not None and position >= end:
                break
            number += 1
            if position == 0 and raw.startswith(b"\xef\xbb\xbf"):
                position += 3
                raw = raw[3:]
            position += len(raw)
            if not raw or raw.isspace():  # blank (as not raw.strip(), without copying the line)
                continue
            yield number, decode_json_line(raw)
        if lines is not None:
            lines.append(number)


# One pass of translate shows both what orjson may read otherwise than json: digits become "0" (a run
# of 19 is a number that may pass 64 bits) and "{" becomes "[" (the brackets, counted at once).
_DIGITS_AND_BRACKETS = bytes.maketrans(b"123456789{", b"000000000[")
_LONG_NUMBER = b"0" * 19
_FEW_BRACKETS = 256  # fewer brackets than this cannot nest anywhere near json's recursion limit


def decode_json_line(raw: bytes) -> dict[str, Any] | LineError:
    """One line's bytes to a JSON object, or the reason it is not one."""
    # orjson reads a line several times faster and, for these lines, to the same objects as json;
    # json decides (and words the reason) for anything else: bad lines, NaN, numbers past 64 bits
    # (orjson would read an integer of 19+ digits as a float), deep nesting (orjson reads what json
    # refuses as too deep, and what could not be written back), and unpaired escaped surrogates,
    # which orjson refuses (a pair it reads to the character json reads): no need to look for them
    # here, a search that cost more than reading the line.
    shape = raw.translate(_DIGITS_AND_BRACKETS)
    if shape.find(_LONG_NUMBER) < 0 and shape.count(b"[") < _FEW_BRACKETS:
        try:
            fast = orjson.loads(raw)
        except orjson.JSONDecodeError:
            fast = None
        if type(fast) is dict:
            return fast
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LineError(f"encoding: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return LineError(f"json: not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return LineError("json: nested too deeply to read")
    if not isinstance(obj, dict):
        return LineError(f"json: expected a JSON object {{...}}, got {json_type(obj)}")
    if b"\\ud" in raw or b"\\uD" in raw:  # only escaped surrogates can smuggle in unpaired ones
        bad = _unencodable_field(obj)
        if bad is not None:
            return LineError(f"{bad}: holds an unpaired surrogate escape (\\ud800-\\udfff), not a character")
    return obj


def _unencodable_field(obj: dict[str, Any]) -> str | None:
    """The first field whose text cannot be written as UTF-8 (a lone surrogate would break storage)."""
    for key, value in obj.items():
        try:
            json.dumps({key: value}, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return key.encode("utf-8", "backslashreplace").decode("utf-8")
    return None


def table_columns(path: Path, delimiter: str = ",") -> list[str]:
    """A CSV file's header (empty for an empty file)."""
    with path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
        try:
            return [h.strip() for h in next(csv.reader(fh, delimiter=delimiter))]
        except StopIteration:
            return []
        except csv.Error as exc:
            raise ImportFormatError(path.name, f"the CSV header cannot be read ({exc})") from None


def iter_csv(path: Path, delimiter: str = ",") -> tuple[list[str], Iterator[Row]]:
    """The header and the rows of a CSV file; rows are numbered as a spreadsheet does (header = 1).

    Bytes that are not UTF-8 are carried as surrogates so that only the row holding them fails.
    """
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 27))  # step texts exceed the 128 KB default
    header = table_columns(path, delimiter)

    def rows() -> Iterator[Row]:
        with path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            next(reader, None)
            number = 1
            while True:
                number += 1
                try:
                    cells = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    yield number, LineError(f"csv: row cannot be read ({exc})")
                    continue
                if any(c.strip() for c in cells):
                    yield number, csv_row(header, cells)

    return header, rows()


def parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq  # heavy; only Parquet imports need it

    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a file that is not Parquet
        raise ImportFormatError(path.name, f"cannot be read as Parquet ({exc})") from None


def iter_parquet(path: Path) -> tuple[list[str], Iterator[Row]]:
    """The columns and rows of a Parquet file; rows are numbered from 1 (Parquet has no lines)."""
    import pyarrow.parquet as pq  # heavy; only Parquet imports need it

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a file that is not Parquet
        raise ImportFormatError(path.name, f"cannot be read as Parquet ({exc})") from None
    columns = list(parquet.schema_arrow.names)

    def rows() -> Iterator[Row]:
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=2048):
                for row in batch.to_pylist():
                    number += 1
                    yield number, row
        except Exception as exc:  # a corrupt row group: the rest of the file cannot be trusted
            raise ImportFormatError(
                path.name, f"Parquet data cannot be read after row {number} ({exc})"
            ) from None
        finally:
            parquet.close()

    return columns, rows()


def csv_row(header: list[str], cells: list[str]) -> dict[str, Any] | LineError:
    if len(cells) > len(header):
        return LineError(f"csv: row has {len(cells)} cells but the header has {len(header)} columns")
    row: dict[str, Any] = {}
    for name, cell in zip(header, cells, strict=False):
        if _has_surrogates(cell):
            bad = next(ord(c) - 0xDC00 for c in cell if 0xDC80 <= ord(c) <= 0xDCFF)
            return LineError(f"{name}: not valid UTF-8 (byte 0x{bad:02x})")
        row[name] = cell
    return row


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# --- the driver ----------------------------------------------------------------------------------


def collect_chunks(
    result: ParseResult,
    file: str,
    rows: Iterable[Row],
    parse_row: RowParser,
    *,
    id_field: str,
    base_dir: Path,
    max_image_pixels: int,
    max_image_bytes: int,
    size: int = 5000,
    first_seen: dict[str, int] | None = None,
) -> Iterator[list[ItemRecord]]:
    """collect, ``size`` records at a time, so that a large file is written while it is read; the
    problems, warnings and lines read gather in ``result`` as the rows go by (its records stay as
    they are). Duplicate ids are found across the whole file, as collect finds them.

    ``first_seen``: id -> line of the ids met so far (a part of a file read elsewhere), filled here."""
    records: list[ItemRecord] = []
    problems, warnings = result.problems, result.warnings
    first_seen = {} if first_seen is None else first_seen
    # One context for the whole file, its line and warnings renewed per row (not a new object a row).
    ctx = RowContext(file, 0, base_dir, max_image_pixels, max_image_bytes)
    for line, obj in rows:
        result.lines_read += 1
        if isinstance(obj, LineError):
            problems.append(ImportProblem(file, line, str(obj)))
            continue
        ctx.line = line
        if ctx.warnings:
            ctx.warnings = []  # a bad row's warnings go with it
        try:
            record = parse_row(obj, ctx)
        except LineError as exc:
            problems.append(ImportProblem(file, line, str(exc)))
            continue
        except Exception as exc:  # a malformed row must never abort the file
            problems.append(ImportProblem(file, line, f"row cannot be read ({type(exc).__name__}: {exc})"))
            continue
        first = first_seen.get(record.external_id)
        if first is not None:
            problems.append(
                ImportProblem(
                    file, line, f"{id_field}: duplicate id {record.external_id!r}, first seen on line {first}"
                )
            )
            continue
        first_seen[record.external_id] = line
        record.line = line
        records.append(record)
        if ctx.warnings:
            warnings.extend(ImportProblem(file, line, w) for w in ctx.warnings)
        if len(records) >= size:
            yield records
            records = []
    if records:
        yield records


# --- coercion ------------------------------------------------------------------------------------


def is_missing(value: Any) -> bool:
    """None, NaN (pandas' missing) and blank text (CSV's missing) all mean "not given"."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value or value.isspace()
    return isinstance(value, float) and math.isnan(value)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def pick(obj: dict[str, Any], *names: str) -> tuple[str, Any]:
    """The first of several alternative fields that is present; (first name, None) if none is."""
    for name in names:
        value = obj.get(name)
        if not is_missing(value):
            return name, value
    return names[0], None


def get_text(
    obj: dict[str, Any], name: str, *, required: bool = False, numbers_ok: bool = False
) -> str | None:
    return coerce_text(obj.get(name), name, required=required, numbers_ok=numbers_ok)


def coerce_text(value: Any, name: str, *, required: bool = False, numbers_ok: bool = False) -> str | None:
    """Text as it is; numbers accepted where answers are often numeric (e.g. ground_truth 29)."""
    if type(value) is str and value and not value.isspace():
        return value  # the common case, kept fast
    if is_missing(value):
        if required:
            raise LineError(f"{name}: missing" if value is None else f"{name}: is empty")
        return None
    if isinstance(value, str):
        return value
    if numbers_ok and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise LineError(f"{name}: expected text, got {json_type(value)}")


def coerce_id(value: Any, name: str) -> str:
    if is_missing(value):
        raise LineError(f"{name}: missing")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise LineError(f"{name}: expected text or an integer id, got {json_type(value)}")
    return str(value).strip()


def _parse_list_text(text: str, name: str) -> list[Any] | None:
    """A list written as JSON or as a Python repr (PRMBench copies carry both); None if neither."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        try:
            # literal_eval only builds literals, never runs code; deep nesting fails cleanly.
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise LineError(
                f"{name}: text starting with '[' is neither a JSON list nor a Python list"
            ) from None
    if not isinstance(value, list):
        raise LineError(f"{name}: expected a list, got {json_type(value)}")
    return value


def coerce_steps(value: Any, name: str, *, text_ok: bool = False, allow_empty: bool = False) -> list[str]:
    """Step texts from a list, a JSON or Python-repr string of a list, or (text_ok) plain text.

    Plain text is split on blank lines when it has any (steps spanning lines survive), else on
    newlines.
    """
    if type(value) is list and value and all(type(s) is str for s in value):
        return value  # the common case, kept fast
    if is_missing(value):
        if allow_empty:
            return []
        raise LineError(f"{name}: missing")
    if isinstance(value, str):
        parsed = _parse_list_text(value, name)
        if parsed is None:
            if not text_ok:
                raise LineError(f"{name}: expected a list of step texts, got text that is not a list")
            parts = re.split(r"\n\s*\n", value) if re.search(r"\n\s*\n", value) else value.split("\n")
            parsed = [p.strip() for p in parts if p.strip()]
        value = parsed
    elif hasattr(value, "tolist") and not isinstance(value, list):
        value = value.tolist()  # numpy arrays from Parquet via pandas
    if not isinstance(value, list):
        raise LineError(f"{name}: expected a list of step texts, got {json_type(value)}")
    for i, step in enumerate(value):
        if not isinstance(step, str):
            raise LineError(f"{name}: step {i + 1} is {json_type(step)}, expected text")
    if not value and not allow_empty:
        raise LineError(f"{name}: has no steps")
    return value


def coerce_int(value: Any, name: str) -> int:
    """An integer from an int, an integral float (pandas) or digit text (CSV); booleans refused."""
    if isinstance(value, bool):
        raise LineError(f"{name}: expected an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        return int(value)
    if is_missing(value):
        raise LineError(f"{name}: missing")
    shown = repr(value) if isinstance(value, str | float) else json_type(value)
    raise LineError(f"{name}: expected an integer, got {shown[:40]}")


def coerce_int_list(value: Any, name: str) -> list[int]:
    """Step numbers from a list, a JSON/Python list string, or comma-separated text ("5, 6")."""
    if is_missing(value):
        return []
    if isinstance(value, str):
        parsed = _parse_list_text(value, name)
        value = parsed if parsed is not None else [v for v in value.split(",") if v.strip()]
    elif hasattr(value, "tolist") and not isinstance(value, list):
        value = value.tolist()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise LineError(f"{name}: expected a list of step numbers, got {json_type(value)}")
    out = []
    for item in value:
        try:
            out.append(coerce_int(item, name))
        except LineError:
            shown = repr(item) if isinstance(item, str | float) else json_type(item)
            raise LineError(f"{name}: {shown[:40]} is not a step number") from None
    return out


_TRUE = {"true", "1", "yes", "y", "t", "correct"}
_FALSE = {"false", "0", "no", "n", "f", "incorrect"}


def coerce_bool(value: Any, name: str) -> bool | None:
    """True/False from a boolean, 0/1 or the strings exports write ("true", "false", "yes", ...)."""
    if is_missing(value):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TRUE:
            return True
        if key in _FALSE:
            return False
        raise LineError(f"{name}: expected true or false, got {value[:40]!r}")
    raise LineError(f"{name}: expected true or false, got {json_type(value)}")


def coerce_float(value: Any, name: str) -> float | None:
    if is_missing(value):
        return None
    if isinstance(value, bool):
        raise LineError(f"{name}: expected a number, got a boolean")
    try:
        number = float(value) if isinstance(value, int | float | str) else None
    except ValueError:
        number = None
    if number is None or not math.isfinite(number):
        shown = repr(value)[:40] if isinstance(value, str | float) else json_type(value)
        raise LineError(f"{name}: expected a finite number, got {shown}")
    return number


def coerce_options(value: Any, name: str) -> list[str]:
    """Answer options from a list, a {"A": "..."} object, or a JSON/Python list string."""
    if is_missing(value):
        return []
    if isinstance(value, dict):
        return [f"{k}. {v}" for k, v in value.items()]
    if isinstance(value, str):
        parsed = _parse_list_text(value, name)
        if parsed is None:
            raise LineError(f"{name}: expected a list of options, got text that is not a list")
        value = parsed
    if not isinstance(value, list):
        raise LineError(f"{name}: expected a list of options, got {json_type(value)}")
    return [coerce_text(item, f"{name}[{i}]", numbers_ok=True) or "" for i, item in enumerate(value)]


def check_step_index(index: int, name: str, steps: list[str], steps_name: str) -> None:
    """A 0-based step index (or -1, no error) must point into the steps it describes."""
    if not -1 <= index < len(steps):
        raise LineError(
            f"{name}: {index} is outside -1..{len(steps) - 1} "
            f"(0-based, -1 = no error; {steps_name} has {len(steps)} steps)"
        )


def content_id(*parts: Any) -> str:
    """A stable id from an item's content, for files that carry none: re-importing finds the same item."""
    digest = hashlib.sha1(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return "sha1:" + digest.hexdigest()[:16]


def extra_fields(obj: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """Fields stepgate does not model, kept in meta so an export can write them back."""
    return {k: v for k, v in obj.items() if k not in known}
