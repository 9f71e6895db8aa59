"""Garbage mixed into valid files never escapes as an exception: each non-blank bad line is exactly
one problem with its own line number, and the valid lines still parse."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from importers import ImportFormatError, parse_file
from importers.common import LineError, coerce_int_list, coerce_steps
from tests.conftest import QWQ_FILE

QWQ = QWQ_FILE
_QWQ_FIRST = json.loads(QWQ.read_text(encoding="utf-8").splitlines()[0])


def good_row(fmt: str, i: int) -> dict:
    steps = [f"step {k}" for k in range(4)]
    if fmt == "processbench":
        return {
            "id": f"good-{i}",
            "generator": "g",
            "problem": "p",
            "steps": steps,
            "final_answer_correct": True,
            "label": i % 5 - 1,
        }
    if fmt == "prmbench":
        return {
            "idx": f"good-{i}",
            "classification": "confidence",
            "question": "q",
            "original_process": steps,
            "modified_process": steps,
            "modified_steps": [2],
            "error_steps": [2, 3],
            "reason": "r",
        }
    if fmt == "steppairs":
        return {"id": f"good-{i}", "predicted": "a", "reference": "b", "similarity": 0.5}
    if fmt == "crystal":
        return {"id": f"good-{i}", "question": "q", "answer": "4", "candidate_steps": steps}
    return {**_QWQ_FIRST, "data_id": f"good-{i}"}


FORMATS = ("processbench", "prmbench", "steppairs", "crystal", "qwq")
FIELDS = sorted({k for fmt in FORMATS for k in good_row(fmt, 0)} | {"image", "images", "options", "custom"})
DELETE = object()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def _dumps(value, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def garbage_line(draw, fmt: str) -> bytes:
    kind = draw(st.sampled_from(("bytes", "json", "fields", "mutated", "truncated")))
    if kind == "bytes":
        return draw(st.binary(max_size=120)).replace(b"\n", b" ")
    if kind == "json":
        return _dumps(draw(json_values), draw(st.booleans()))
    if kind == "fields":
        return _dumps(draw(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8)), True)
    row = good_row(fmt, draw(st.integers(100, 10_000)))
    if kind == "truncated":
        text = _dumps(row, True)
        return text[: draw(st.integers(0, len(text) - 1))]
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(row)))
        value = draw(json_values | st.just(DELETE))
        if value is DELETE:
            row.pop(key)
        else:
            row[key] = value
    return _dumps(row, draw(st.booleans()))


def _is_json_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


@st.composite
def files(draw):
    fmt = draw(st.sampled_from(FORMATS))
    good = [_dumps(good_row(fmt, i), True) for i in range(draw(st.integers(1, 4)))]
    garbage = draw(st.lists(garbage_line(fmt), max_size=8))
    return fmt, good, garbage


@settings(max_examples=200, deadline=None)
@given(files())
def test_garbage_lines_become_one_problem_each_and_good_lines_still_parse(case):
    fmt, good, garbage = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.jsonl"
        path.write_bytes(b"\n".join(good + garbage) + b"\n")
        try:
            result = parse_file(path, fmt)
        except ImportFormatError:
            raise AssertionError("a file with valid lines must not fail as a whole") from None

    problem_lines = [p.line for p in result.problems]
    record_lines = [r.line for r in result.records]
    assert len(problem_lines) == len(set(problem_lines))
    assert not set(problem_lines) & set(record_lines)
    for number in range(1, len(good) + 1):
        assert number in record_lines, f"good line {number} did not parse: {result.problems}"
    for offset, raw in enumerate(garbage):
        number = len(good) + 1 + offset
        if not raw.strip():
            assert number not in problem_lines and number not in record_lines
        elif not _is_json_object(raw):
            assert number in problem_lines
        else:
            assert (number in problem_lines) != (number in record_lines)
    assert result.lines_read == len(result.records) + len(result.problems)
    assert all(p.reason and p.file == "data.jsonl" for p in result.problems)


cells = st.text(max_size=30) | st.sampled_from(
    ["", "[]", "['a', 'b']", '["x"]', "-1", "0", "7", "nan", "[1, 'a']"]
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(cells, min_size=0, max_size=5), max_size=8))
def test_garbage_csv_rows_become_one_problem_each(rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["id", "prompt", "steps", "label"])
    writer.writerow(["good", "Q", '["s1", "s2"]', "0"])
    for row in rows:
        writer.writerow(row)
    mapping = {"external_id": "id", "question": "prompt", "steps": "steps", "earliest_error": "label"}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.csv"
        path.write_text(buf.getvalue(), encoding="utf-8", errors="surrogatepass")
        result = parse_file(path, mapping=mapping)
    assert result.records[0].external_id == "good" and result.records[0].line == 2
    outcomes = [p.line for p in result.problems] + [r.line for r in result.records]
    assert len(outcomes) == len(set(outcomes)) == result.lines_read


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60) | st.builds(repr, json_values) | st.builds(json.dumps, json_values))
def test_list_coercion_only_ever_raises_a_line_error(text):
    for coerce in (coerce_steps, coerce_int_list):
        try:
            coerce(text, "field")
        except LineError as exc:
            assert str(exc).startswith("field")
