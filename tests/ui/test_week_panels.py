"""A team's first week in the reviewers' and admins' panels (issue 29), through the handlers on a real store:
archived datasets stay out of the reviewers' pickers; messages read without doubled words."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gradio as gr

from services import datasets as dataset_service
from services import scores as score_service
from store import Store, users
from tests.services.test_predictions import settle, write_jsonl
from ui.context import AppContext
from ui.panels import dashboard, scores

ROOT = Path(__file__).resolve().parents[2]


def _as(name: str) -> gr.Request:
    return gr.Request(username=name)


def test_reviewer_pickers_leave_out_archived_datasets(demo_store: Store) -> None:
    lead = users.add_user(demo_store, "lead", "admin")
    users.add_user(demo_store, "judge", "adjudicator")
    ctx = AppContext(store=demo_store)
    dataset_service.archive(demo_store, lead, "qwq-earliest-error")
    for shown in (
        dashboard.on_show(ctx, None, 50, _as("judge"))["dataset"],
        scores.on_show(ctx, None, None, None, _as("judge"))["dataset"],
    ):
        assert shown["choices"], "the other datasets are still offered"
        assert "qwq-earliest-error" not in [c[0] if isinstance(c, tuple) else c for c in shown["choices"]]


def test_no_message_doubles_a_small_word() -> None:
    """ "at at column" read as a typo (issue 29): no string the app shows repeats a small word."""
    doubled = re.compile(r"\b(at|the|to|of|a|an|is|and|for|on|with|by|from|it)\s+\1\b", re.IGNORECASE)
    found = []
    for folder in ("ui", "services", "importers", "exports", "tasks", "store"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and doubled.search(node.value)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found


def test_scores_shows_only_the_sections_a_dataset_fills(demo_store: Store, tmp_path: Path) -> None:
    """Issue 29: no placeholder tables and no other benchmark's tables. Without predictions every section
    is hidden; with ProcessBench predictions on an earliest-error dataset, ProcessBench's sections show and
    PRMBench-V's and MPBench's stay hidden, and no models column is all "n/a"."""
    lead = users.add_user(demo_store, "lead", "admin")
    ctx = AppContext(store=demo_store)
    empty = scores.on_show(ctx, "prmbench-step-review", None, None, _as("lead"))
    assert "No predictions" in empty["status"]
    assert all(empty[name]["visible"] is False for name in scores.SECTIONS)
    assert "python app.py" not in empty["status"]
    assert (
        empty["preset"]["choices"] == [] and empty["presets_box"]["visible"] is False
    )  # no study, no Table 2

    gold = settle(demo_store)  # six kept items, three annotators agreeing
    predictions = write_jsonl(tmp_path / "all-correct.jsonl", [{"id": e, "earliest_error": -1} for e in gold])
    score_service.import_predictions(
        demo_store, lead, predictions, model="all-correct", dataset="qwq-earliest-error"
    )
    shown = scores.on_show(ctx, "qwq-earliest-error", None, None, _as("lead"))
    visible = {name for name in scores.SECTIONS if shown[name]["visible"]}
    assert {"models_box", "failures_box"} <= visible
    assert not visible & {"prmbench_v_box", "mpbench_box", "convention"}
    table = shown["models"]
    assert "model" in table.columns and not (table == "n/a").all().any()
    assert "PRMBench-V acc." not in table.columns
    assert [key for _, key in shown["preset"]["choices"]] == ["processbench_table2"]
    made, _ = scores.on_preset(
        ctx, "processbench_table2", "qwq-earliest-error", None, "markdown", _as("lead")
    )
    assert made["visible"] is True
