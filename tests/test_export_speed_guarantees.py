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
from store import Store
from store.imports import import_file
from store.items import items_frame, items_frames
from tests.test_stepgate_format import _label

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
