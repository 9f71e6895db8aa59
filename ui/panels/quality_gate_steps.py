"""The quality gate's candidate steps as an editable table: each step edited in place, marked
incorrect or not, moved, inserted or deleted, or all of them as text, one per line (CRYSTAL's
Figure S3). Pure table work: nothing here is stored until the panel's draft or save."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from tasks.quality_gate import parse_steps_text
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.messages import refusal, said

__all__ = [
    "COLUMNS",
    "on_delete_step",
    "on_insert_step",
    "on_move_step",
    "on_select_step",
    "on_steps_from_text",
    "on_text_open",
    "steps_of",
    "table_of",
]

COLUMNS = ["Step", "Incorrect"]


def _note(message: str, warn: bool = False) -> str:
    return refusal(message) if warn else said(message)


def table_of(steps: list[str], incorrect: set[int] | None = None) -> pd.DataFrame:
    """The steps as the editable table: one row a step, its 'Incorrect' mark (1-based numbers)."""
    marked = incorrect or set()
    return pd.DataFrame([[s, (i + 1) in marked] for i, s in enumerate(steps)], columns=COLUMNS)


def steps_of(table: Any) -> tuple[list[str], set[int]]:
    """The table back to (steps, incorrect step numbers): empty rows dropped, numbers after them."""
    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table or [], columns=COLUMNS)
    steps: list[str] = []
    incorrect: set[int] = set()
    for _, row in frame.iterrows():
        text = str(row.iloc[0] if len(row) else "").strip()
        if not text or text == "nan":
            continue
        steps.append(text)
        if len(row) > 1 and str(row.iloc[1]).lower() in ("true", "1"):
            incorrect.add(len(steps))
    return steps, incorrect


def on_select_step(ctx: AppContext, table: Any, evt: gr.SelectData, request: gr.Request) -> dict[str, Any]:
    """A click in the table picks the step that the move, insert and delete buttons act on."""
    require_user(ctx, request)
    row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
    return {"selected": int(row), "step_note": said(f"Step {int(row) + 1} selected.")}


def _edited(table: Any, selected: Any, change: str) -> dict[str, Any]:
    steps, incorrect = steps_of(table)
    rows = [[s, (i + 1) in incorrect] for i, s in enumerate(steps)]
    at = int(selected) if isinstance(selected, int | float) and 0 <= int(selected) < len(rows) else None
    if change != "insert" and at is None:
        return {"step_note": _note("Click a step in the table first.", warn=True)}
    if change == "insert":
        at = len(rows) - 1 if at is None else at
        rows.insert(at + 1, ["(new step: type it here)", False])
        at, note = at + 1, f"Step {at + 2} added: double-click it to type."
    elif change == "delete":
        assert at is not None
        rows.pop(at)
        at, note = (min(at, len(rows) - 1) if rows else None), f"Step {at + 1} deleted."
    else:
        assert at is not None
        to = at + (-1 if change == "up" else 1)
        if not 0 <= to < len(rows):
            return {"step_note": said("That step cannot move further.")}
        rows[at], rows[to] = rows[to], rows[at]
        at, note = to, f"Step moved to {to + 1}."
    return {"table": pd.DataFrame(rows, columns=COLUMNS), "selected": at, "step_note": said(note)}


def on_move_step(
    ctx: AppContext, table: Any, selected: Any, direction: str, request: gr.Request
) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "up" if direction == "up" else "down")


def on_insert_step(ctx: AppContext, table: Any, selected: Any, request: gr.Request) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "insert")


def on_delete_step(ctx: AppContext, table: Any, selected: Any, request: gr.Request) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "delete")


def on_text_open(ctx: AppContext, table: Any, request: gr.Request) -> dict[str, Any]:
    """The figure's text area: the current steps, one per line."""
    require_user(ctx, request)
    return {"steps_text": "\n".join(steps_of(table)[0])}


def on_steps_from_text(ctx: AppContext, text: str, table: Any, request: gr.Request) -> dict[str, Any]:
    """Replace the steps by the text area's lines (marks kept for steps whose text is unchanged)."""
    require_user(ctx, request)
    steps = parse_steps_text(text or "")
    if not steps:
        return {"step_note": _note("The text holds no step: one step per line.", warn=True)}
    old, incorrect = steps_of(table)
    wrong = {old[i - 1] for i in incorrect}
    marked = {i + 1 for i, s in enumerate(steps) if s in wrong}
    return {
        "table": table_of(steps, marked),
        "selected": None,
        "step_note": said(f"{len(steps)} steps from the text."),
    }
