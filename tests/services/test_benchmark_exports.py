"""The benchmark formats carry every field of their source line, checked field by field, plus the gate.

PRMBench on the real public file; ProcessBench on lines in its published format (id, generator,
problem, steps, final_answer_correct, label), gated by three blind annotators.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from importers import parse_file
from services import annotate
from services.demo import DEMO_DIR
from services.exports import export, manifest_path
from services.imports import import_file
from store import Store
from store.datasets import get_dataset
from store.users import add_user
from tests.conftest import PRMBENCH_FILE


def _label_all(store: Store, dataset: str, names: list[str], payload_for) -> None:
    ds = get_dataset(store, dataset)
    assert ds is not None
    for name in names:
        user = add_user(store, name, "annotator")
        n = 0
        while (work := annotate.next_item(store, user, ds)) is not None and work.state != "done":
            annotate.submit(
                store,
                annotator=user,
                item_id=work.item.item_id,
                version_id=work.item.version_id,
                payload=payload_for(name, work.item),
                request_id=f"{name}-{n}",
                seconds_spent=7.0,
            )
            n += 1
            if n >= 6:
                break


def test_prmbench_lines_carry_every_source_field_and_the_judgements(store: Store, tmp_path: Path) -> None:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    label = {"original": "correct", "modification": "reasonable", "difficulty": "medium"}
    _label_all(store, "prm", ["ann"], lambda *_: label)
    out = tmp_path / "prm.jsonl"
    written = export(store, "prmbench", out, dataset="prm")
    exported = [json.loads(x) for x in out.read_text().splitlines()]
    assert written.rows == len(exported) == 6
    source = {}
    for line in PRMBENCH_FILE.read_text().splitlines():
        obj = json.loads(line)
        source[(obj["idx"], obj["classification"])] = obj
    for record in exported:
        original = source[(record["idx"], record["classification"])]
        for key, value in original.items():
            if key in ("error_steps", "modified_steps"):
                assert record[key] == sorted(value), key  # stepgate writes step numbers ascending
            else:
                assert record[key] == value, key
        assert set(record) == set(original) | {"stepgate"}
        gate = record["stepgate"]
        assert gate["status"] == "complete" and gate["version"] == 1
        assert gate["judgements"] == [
            {"annotator": "ann", **label, "seconds_spent": 7.0, "at": gate["judgements"][0]["at"]}
        ]
    manifest = json.loads(manifest_path(out).read_text())
    assert manifest["filter"] == {"dataset": "prm"} and manifest["rows"] == 6
    assert manifest["database"]["items"] == 394 and manifest["database"]["states"]["complete"] == 6


def test_an_exported_prmbench_file_imports_back_with_the_same_fields(store: Store, tmp_path: Path) -> None:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    _label_all(
        store,
        "prm",
        ["ann"],
        lambda *_: {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    out = tmp_path / "prm.jsonl"
    export(store, "prmbench", out, dataset="prm")
    again = {r.external_id: r for r in parse_file(out).records}
    first = {r.external_id: r for r in parse_file(PRMBENCH_FILE).records}
    for key, record in again.items():
        mine = first[key]
        assert (record.question, record.steps, record.error_steps, record.rationale) == (
            mine.question,
            mine.steps,
            mine.error_steps,
            mine.rationale,
        )
        assert {k: v for k, v in record.meta.items() if k != "extra"} == mine.meta


PB_LINES = [
    {
        "id": "gsm8k-0",
        "generator": "Qwen2-7B-Instruct",
        "problem": "Tom has 3 apples and buys 2 more. How many?",
        "steps": ["Tom starts with 3.", "He buys 2, so 3 + 2 = 6.", "The answer is 6."],
        "final_answer_correct": False,
        "label": 1,
    },
    {
        "id": "math-7",
        "generator": "Llama-3.1-8B-Instruct",
        "problem": "What is 2 + 2?",
        "steps": ["2 + 2 = 4.", "The answer is 4."],
        "final_answer_correct": True,
        "label": -1,
    },
]


def test_processbench_consensus_and_discarded_items_field_by_field(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "pb.jsonl"
    source.write_text("".join(json.dumps(x) + "\n" for x in PB_LINES))
    import_file(store, source, dataset="pb")
    # Three agree on gsm8k-0 (step 2, 0-based 1); on math-7 everyone picks a different step: discarded.
    picks = {"a1": (1, -1), "a2": (1, 0), "a3": (1, 1), "a4": (None, -1), "a5": (None, 0)}

    def pick(name, item):
        first, second = picks[name]
        return {"earliest_error": first if item.external_id == "gsm8k-0" else second}

    _label_all(store, "pb", ["a1", "a2", "a3"], pick)
    _label_all(store, "pb", ["a4", "a5"], pick)
    states = dict(
        store.fetchall("SELECT i.external_id, s.status FROM item_state s JOIN items i ON i.id = s.item_id")
    )
    assert states == {"gsm8k-0": "consensus", "math-7": "discarded"}

    gated = tmp_path / "gated.jsonl"
    export(store, "processbench", gated, dataset="pb")
    lines = [json.loads(x) for x in gated.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["gsm8k-0"]
    for key, value in PB_LINES[0].items():
        assert lines[0][key] == value, key
    assert lines[0]["stepgate"]["source_label"] == 1 and len(lines[0]["stepgate"]["judgements"]) == 3

    everything = tmp_path / "all.jsonl"
    export(store, "processbench-all", everything, dataset="pb")
    both = {x["id"]: x for x in map(json.loads, everything.read_text().splitlines())}
    discarded = both["math-7"]
    assert discarded["label"] is None and discarded["stepgate"]["status"] == "discarded"
    assert "agreed" in discarded["stepgate"]["discard_reason"]
    for key, value in PB_LINES[1].items():
        if key != "label":  # the gate's label: none agreed
            assert discarded[key] == value, key


@pytest.mark.parametrize("fmt", ["log-parquet"])
def test_parquet_exports_load_with_pandas_as_they_are(store: Store, tmp_path: Path, fmt: str) -> None:
    import_file(store, DEMO_DIR / "prmbench_demo.jsonl", dataset="prm")
    _label_all(
        store,
        "prm",
        ["ann"],
        lambda *_: {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
    )
    out = tmp_path / "log.parquet"
    written = export(store, fmt, out, dataset="prm")
    frame = pd.read_parquet(out)
    assert len(frame) == written.rows == 6 and {"annotator", "label_difficulty"} <= set(frame.columns)
