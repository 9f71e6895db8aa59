"""What the import speed-ups must not change: the content hash's bytes (re-imports stay no-ops),
the objects a line reads to, and all-or-nothing when chunks are written while the file is read."""

from __future__ import annotations

import datetime
import enum
import gc
import hashlib
import json
from pathlib import Path

import pytest

from importers import parse_file
from importers.common import decode_json_line
from importers.records import ItemRecord
from services.imports import _CHUNK, ImportRejected, import_file
from store import Store
from store.datasets import get_dataset
from store.fastjson import canonical_bytes
from store.staging import content_body, content_hash
from tests.conftest import DEMO_DIR, PRMBENCH_FILE, QWQ_FILE

REAL_FILES = [
    (PRMBENCH_FILE, "prmbench"),
    (QWQ_FILE, "qwq"),
    (DEMO_DIR / "crystal_demo.jsonl", "crystal"),
    (DEMO_DIR / "step_pairs_demo.jsonl", "steppairs"),
]


def _old_hash(record: ItemRecord) -> str:
    """content_hash as it was first written (json.dumps): every stored hash was made this way."""
    return hashlib.sha256(_reference(content_body(record))).hexdigest()


def _reference(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()


@pytest.mark.parametrize(("path", "fmt"), REAL_FILES, ids=[f for _, f in REAL_FILES])
def test_content_hash_is_the_old_json_dumps_hash_on_the_real_files(path: Path, fmt: str) -> None:
    records = parse_file(path, format=fmt).records
    assert records
    assert [content_hash(r) for r in records] == [_old_hash(r) for r in records]


def test_reimporting_a_file_imported_with_the_old_hash_changes_nothing(store: Store) -> None:
    first = import_file(store, PRMBENCH_FILE, dataset="prm")
    stored = dict(
        store.fetchall(
            "SELECT i.external_id, v.content_hash FROM items i JOIN item_versions v ON v.id = i.current_version_id"
        )
    )
    records = parse_file(PRMBENCH_FILE).records
    assert stored == {r.external_id: _old_hash(r) for r in records}  # what an older stepgate stored
    again = import_file(store, PRMBENCH_FILE, dataset="prm")
    assert (again.added, again.new_versions, again.unchanged) == (0, 0, first.added)
    assert store.scalar("SELECT count(*) FROM item_versions") == first.added


@pytest.mark.parametrize(
    "value",
    [
        "plain ascii",
        "caf\u00e9 \u2264 \u03c0 \u4e2d\u6587 \U0001f600 \U0010ffff",
        'controls \x00\x01\x1f\t\n\r\x7f \\ " /',
        "\u2028\u2029\ufeff\ufffe\uffff",
        "\ud800 a lone surrogate",
        0.1,
        1e16,
        1e-05,
        -0.0,
        5e-324,
        1.7976931348623157e308,
        float("nan"),
        float("inf"),
        2**63,
        2**64,
        -(2**63) - 1,
        10**30,
        True,
        None,
        (1, "two"),
        {"\U0001f600": 1, "\uffff": 2, "\u00e9": 3, "z": 4, "A": 5},
        {1: "int keys", 2: "are written as text"},
        {"nested": [{"deep": [1.5, "x", None]}]},
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        enum.Enum("Colour", "RED").RED,
        enum.IntEnum("Level", "LOW").LOW,
        type("Text", (str,), {})("a str subclass"),
        {1, 2},
        b"bytes",
    ],
)
def test_canonical_bytes_are_json_dumps_bytes(value: object) -> None:
    body = {"value": value, "list": [value], "meta": {"x": value}}
    assert canonical_bytes(body) == _reference(body)


def test_canonical_bytes_refuse_what_json_dumps_refuses() -> None:
    with pytest.raises(TypeError):
        _reference({"mixed": {1: "an int key", "b": "a text key"}})  # sort_keys cannot order them
    with pytest.raises(TypeError):
        canonical_bytes({"mixed": {1: "an int key", "b": "a text key"}})


def test_canonical_bytes_match_for_every_character() -> None:
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for start in range(0, len(chars), 4096):
        block = chars[start : start + 4096]
        body = {"text": "".join(block), "keys": {c: i for i, c in enumerate(block[:64])}}
        assert canonical_bytes(body) == _reference(body), hex(ord(block[0]))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2}',
        b'{"big": 123456789012345678901234567890, "neg": -9223372036854775809}',
        b'{"f": 0.1, "e": 1E400, "n": NaN, "i": -Infinity}',
        b'{"s": "\\ud83d\\ude00 \\u00e9 \\u0000"}',
        b'{"lone": "\\ud800"}',
        b'{"upper": "\\uD800"}',
        b'{"x": 1,}',
        b"[1, 2]",
        b'"text"',
        b"\xff\xfe{}",
        b'{"bad utf8": "\xc3\x28"}',
        b'{"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"deep": ' + b"[" * 900 + b"]" * 900 + b"}",
        b'{"shallow": ' + b"[" * 200 + b"]" * 200 + b"}",
        b'{"ctrl": "a\tb"}',
        b'{"id": 12345678901234567}',
    ],
)
def test_a_line_reads_as_json_loads_reads_it(raw: bytes) -> None:
    got = decode_json_line(raw)
    try:
        expected = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        assert not isinstance(got, dict)
        return
    if isinstance(expected, dict) and "lone" not in expected and "upper" not in expected:
        assert isinstance(got, dict)
        assert repr(got) == repr(expected)  # repr: NaN != NaN, and 1 == 1.0 would hide a float
    else:
        assert not isinstance(got, dict)


def _processbench_lines(n: int, bad_at: int | None = None, duplicate_at: int | None = None) -> str:
    lines = []
    for i in range(n):
        obj = {"id": f"p-{i}", "problem": f"Problem {i}", "steps": ["a", "b"], "label": -1}
        if i == duplicate_at:
            obj["id"] = "p-0"
        line = json.dumps(obj)
        lines.append("{not json" if i == bad_at else line)
    return "\n".join(lines) + "\n"


def test_a_bad_line_after_the_first_chunk_stores_nothing(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "late.jsonl"
    path.write_text(_processbench_lines(_CHUNK + 200, bad_at=_CHUNK + 100))
    with pytest.raises(ImportRejected) as refused:
        import_file(store, path, format="processbench", dataset="late")
    assert refused.value.good == _CHUNK + 199 and f"late.jsonl:{_CHUNK + 101}" in str(refused.value)
    assert get_dataset(store, "late") is None
    assert store.scalar("SELECT count(*) FROM items") == 0
    assert store.scalar("SELECT count(*) FROM steps") == 0
    assert gc.isenabled()


def test_a_late_duplicate_id_is_found_across_chunks(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(_processbench_lines(_CHUNK + 50, duplicate_at=_CHUNK + 10))
    with pytest.raises(ImportRejected, match="duplicate id 'p-0', first seen on line 1"):
        import_file(store, path, format="processbench", dataset="dup")
    assert store.scalar("SELECT count(*) FROM items") == 0
    outcome = import_file(store, path, format="processbench", dataset="dup", skip_bad=True)
    assert (outcome.added, len(outcome.skipped)) == (_CHUNK + 49, 1)
    assert outcome.report_path is not None and "duplicate id" in outcome.report_path.read_text()
    assert store.scalar("SELECT count(DISTINCT version_id) FROM steps") == _CHUNK + 49


def test_bad_lines_are_said_before_a_dataset_of_another_task(store: Store, tmp_path: Path) -> None:
    import_file(store, PRMBENCH_FILE, dataset="taken")
    path = tmp_path / "other.jsonl"
    path.write_text(_processbench_lines(20, bad_at=5))
    with pytest.raises(ImportRejected):
        import_file(store, path, format="processbench", dataset="taken")
    path.write_text(_processbench_lines(20))
    with pytest.raises(Exception, match="holds step_review items"):
        import_file(store, path, format="processbench", dataset="taken")
    assert gc.isenabled()


def test_chunked_import_stores_every_step_in_order(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    rows = [
        {"id": f"m-{i}", "problem": "q", "steps": [f"{i}.{k}" for k in range(1 + i % 7)], "label": -1}
        for i in range(_CHUNK + 321)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outcome = import_file(store, path, format="processbench", dataset="many")
    assert outcome.added == len(rows)
    got = store.fetchall(
        "SELECT i.external_id, array_agg(s.text ORDER BY s.position), array_agg(s.position ORDER BY s.position) "
        "FROM items i JOIN steps s ON s.version_id = i.current_version_id GROUP BY i.external_id"
    )
    assert {e: (t, p) for e, t, p in got} == {
        r["id"]: (r["steps"], list(range(len(r["steps"])))) for r in rows
    }
    assert store.scalar("SELECT count(DISTINCT role) FROM steps") == 1


def test_a_changed_item_gets_a_new_current_version_and_fresh_state(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(_processbench_lines(_CHUNK + 30))
    import_file(store, path, format="processbench", dataset="v")
    store.execute("UPDATE item_state SET status = 'complete'")  # as if every item had been labelled
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[3]["steps"] = ["a", "b", "c"]
    rows[_CHUNK + 7]["problem"] = "changed"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outcome = import_file(store, path, format="processbench", dataset="v")
    assert (outcome.added, outcome.new_versions, outcome.unchanged) == (0, 2, _CHUNK + 28)
    current = dict(
        store.fetchall(
            "SELECT i.external_id, v.version FROM items i JOIN item_versions v ON v.id = i.current_version_id"
        )
    )
    assert {e for e, version in current.items() if version == 2} == {"p-3", f"p-{_CHUNK + 7}"}
    states = dict(
        store.fetchall("SELECT i.external_id, s.status FROM items i JOIN item_state s ON s.item_id = i.id")
    )
    assert len(states) == _CHUNK + 30
    assert {e for e, status in states.items() if status == "open"} == {"p-3", f"p-{_CHUNK + 7}"}
    assert store.fetchall(
        "SELECT array_agg(text ORDER BY position) FROM steps s JOIN items i ON s.version_id = i.current_version_id "
        "WHERE i.external_id = 'p-3'"
    ) == [(["a", "b", "c"],)]
