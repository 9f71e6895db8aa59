"""A team's first week in the reviewers' and admins' panels (issue 29), through the handlers on a real store:
archived datasets stay out of the reviewers' pickers; messages read without doubled words."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gradio as gr

from services import datasets as dataset_service
from store import Store, users
from ui.context import AppContext
from ui.panels import dashboard, scores

ROOT = Path(__file__).resolve().parent.parent


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
