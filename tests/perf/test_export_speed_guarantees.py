"""What the export speed-up must not change: every value json.dumps wrote, now as strict JSON
(NaN, which json.dumps wrote for a missing text, is null)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from exports.gated import _rows
from services.exports import _data, export
from services.imports import import_file
from store import Store
from store.items import items_frame, items_frames
from tests.services.test_stepgate_format import _label

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _without_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _without_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nan(v) for v in value]
    return value


def _as_before(store: Store) -> list[Any]:
    """items-jsonl's lines as the first writer made them: to_dict, then json.dumps per record."""
    frame = _rows(_data(store, "items", None, None, None), None)
    records = frame.drop(columns=["item_id", "image_files"]).to_dict(orient="records")
    for record in records:
        record["steps"] = {k: list(v) for k, v in (record["steps"] or {}).items()}
    return [_without_nan(json.loads(json.dumps(r, ensure_ascii=False, default=str))) for r in records]


def test_items_jsonl_holds_the_values_it_held_as_strict_json(demo_store: Store, tmp_path: Path) -> None:
    _label(
        demo_store,
        "ann",
        "prmbench-step-review",
        3,
        {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    out = tmp_path / "items.jsonl"
    export(demo_store, "items-jsonl", out)
    lines = [_strict(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines == _as_before(demo_store)
    labelled = [line for line in lines if line["labels"]]
    assert len(labelled) == 3 and labelled[0]["labels"][0]["seconds_spent"] == 12.5
    assert any(line["source"] is None for line in lines)  # a missing text: null, where NaN was written


def test_gated_exports_write_strict_json(demo_store: Store, tmp_path: Path) -> None:
    for fmt in ("prmbench", "processbench-all", "crystal", "items-jsonl"):
        out = tmp_path / f"{fmt}.jsonl"
        export(demo_store, fmt, out)
        for line in out.read_text(encoding="utf-8").splitlines():
            _strict(line)


def test_items_read_in_frames_are_the_items_frame(demo_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"m-{i}", "problem": "q", "steps": [str(i), "b"], "label": -1}) + "\n"
            for i in range(5000)
        )
    )
    import_file(demo_store, path, format="processbench", dataset="many")
    _label(
        demo_store,
        "ann",
        "prmbench-step-review",
        2,
        {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    frames = list(items_frames(demo_store, rows=2048))
    assert len(frames) >= 3
    whole = items_frame(demo_store)
    joined = pd.concat(frames, ignore_index=True)
    assert len(joined) == len(whole) == 5000 + 578
    for column in whole.columns:  # a frame whose texts are all missing holds None where the whole has NaN
        assert [repr(_without_nan(v)) for v in joined[column]] == [
            repr(_without_nan(v)) for v in whole[column]
        ]
    assert any(files for files in joined["image_files"])  # the CRYSTAL demo's images are found
    out = tmp_path / "items.jsonl"
    export(demo_store, "items-jsonl", out)
    assert [_strict(line) for line in out.read_text(encoding="utf-8").splitlines()] == _as_before(demo_store)


# Texts where DuckDB's JSON and orjson's could differ: every control character (DuckDB writes six of
# them as \u000B..\u001F, orjson in lower case), a backslash before u00 in the text, quotes, non-ASCII.
_TRICKY = [
    "".join(chr(c) for c in range(1, 32)) + "\x7f",  # (PostgreSQL holds no NUL)
    "a \\u000B is not an escape here, nor \\\\u00e9",
    'say "hi" \\ / é ✓ 𝔸 \u2028 \u00a0 end',
    "",
]


def _items_jsonl_as_orjson_wrote_it(store: Store) -> bytes:
    """items-jsonl as the writer before the database wrote JSON made it: orjson per record."""
    import orjson

    frame = _rows(_data(store, "items", None, None, None), None).drop(columns=["item_id", "image_files"])
    lines = []
    for record in frame.to_dict(orient="records"):
        record = {k: _without_nan(None if v is pd.NA else v) for k, v in record.items()}
        record["steps"] = {k: list(v) for k, v in (record["steps"] or {}).items()}
        lines.append(
            orjson.dumps(
                record,
                default=str,
                option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS,
            )
        )
    return b"".join(lines)


def test_items_jsonl_is_byte_for_byte_what_orjson_wrote(demo_store: Store, tmp_path: Path) -> None:
    from services.annotate import now_utc
    from store.gold import mark_gold

    path = tmp_path / "tricky.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"t-{i}",
                    "generator": text,
                    "problem": text or "q",
                    "steps": [text, f"step {i}", text],
                    "label": -1,
                    **({"final_answer_correct": False, "extra": {"x": 1.5, "y": [text]}} if i % 2 else {}),
                }
            )
            + "\n"
            for i, text in enumerate(_TRICKY * 2)
        ),
        encoding="utf-8",
    )
    import_file(demo_store, path, format="processbench", dataset="tricky")
    _label(
        demo_store,
        "ann",
        "prmbench-step-review",
        3,
        {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    with demo_store.writing() as tx:
        mark_gold(tx, 1, {"original": "correct"}, "manual", None, now_utc())
    out = tmp_path / "items.jsonl"
    export(demo_store, "items-jsonl", out, manifest=False)
    written = out.read_bytes()
    assert written == _items_jsonl_as_orjson_wrote_it(demo_store)
    assert b"\\n\\u000b\\f" in written and b"\\u000B\\f" not in written and b'"gold":true' in written
    assert b'"steps":{"modified":[' in written  # PRMBench's two roles, in order
    # A Browse filter's items (one query) are written as the whole export writes them.
    from services.exports import ItemSelection

    picked = tmp_path / "picked.jsonl"
    order = items_frame(demo_store)["item_id"].tolist()
    ids = [order[-1], order[0], order[-3], order[1]]
    export(demo_store, "items-jsonl", picked, manifest=False, items=ItemSelection(ids))
    lines = written.splitlines(keepends=True)
    assert picked.read_bytes() == b"".join(lines[order.index(i)] for i in sorted(ids))


def test_items_read_as_json_in_spans_are_the_items_read_whole(demo_store: Store) -> None:
    """Each span reads its own items' steps and labels (by id range): none lost or doubled at the edges."""
    from exports.gated import ITEM_OBJECTS
    from store.items import items_json_frames

    for k, name in enumerate(("ann", "bea")):
        _label(
            demo_store,
            name,
            "prmbench-step-review",
            40 + k,
            {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
        )

    def flat(rows: int) -> list[tuple]:
        return [
            row
            for frame in items_json_frames(demo_store, objects=ITEM_OBJECTS, rows=rows)
            for row in zip(
                frame.item_ids,
                frame.objects["head"],
                frame.objects["tail"],
                frame.meta,
                frame.steps,
                frame.labels,
                strict=True,
            )
        ]

    whole, spans = flat(10**6), flat(7)
    assert len(whole) == 578 and sum(len(row[5]) for row in whole) == 81
    assert spans == whole
