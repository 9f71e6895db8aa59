"""Earliest error's "View statistics": counts and label distributions, the user's own or, for roles
that may see labels, everyone's and ProcessBench's Table 2 shares."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from services import annotate, statistics
from services.errors import ServiceError
from tasks import EARLIEST_ERROR
from ui import step_list
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.render import escape_text

__all__ = ["on_statistics", "stats_section"]

_SUMMARY_COLUMNS = {"items": "items labelled", "labels": "labels given", "median_seconds": "median seconds"}


def _readable_distribution(table: pd.DataFrame) -> pd.DataFrame:
    """Label columns in the annotator's words and in step order: All correct, Step 1, Step 2, ..."""
    labels = sorted(
        (c for c in table.columns if c != "annotator"),
        key=lambda c: int(c) if c.lstrip("-").isdigit() else 10**9,
    )
    names = {c: step_list.label_title(int(c)) if c.lstrip("-").isdigit() else c for c in labels}
    return table[["annotator", *labels]].rename(columns=names)


def on_statistics(ctx: AppContext, dataset: str | None, request: gr.Request) -> dict[str, Any]:
    """Counts and label distributions: the user's own, or everyone's and ProcessBench's Table 2 shares
    for roles that may see labels."""
    user = require_user(ctx, request)
    try:
        chosen = annotate.dataset_for(ctx.store, dataset or "", EARLIEST_ERROR)
    except ServiceError as exc:
        return {"stats_note": refusal(str(exc))}
    stats = statistics.panel_statistics(ctx.store, user, chosen, ["earliest_error"])
    overall = f"**{escape_text(chosen.name)}** · labels: {stats.labels} · items labelled: {stats.items}."
    if stats.everyone:
        note = (
            overall
            + f" Annotators: {stats.annotators}. Every annotator's row is shown (your role may see labels)."
        )
    else:
        note = overall + " Your own labels only: annotators work blind."
    distribution = _readable_distribution(stats.distributions["earliest_error"])
    summary = stats.summary.rename(columns=_SUMMARY_COLUMNS)
    shares = (
        gr.update(value=stats.settlement.rename(columns={"state": "settled"}), visible=True)
        if stats.settlement is not None
        else gr.update(value=None, visible=False)
    )
    return {"stats_note": note, "summary": summary, "distribution": distribution, "shares": shares}


def stats_section() -> tuple[gr.Accordion, gr.Button, Outputs]:
    """The section's components (the panel places it and wires its events)."""
    with gr.Accordion("View statistics (v)", open=False, elem_id="ee-stats") as stats:
        stats_note = gr.Markdown(elem_id="ee-stats-note")
        summary = Table(label="Labels per annotator", interactive=False, elem_id="ee-stats-annotators")
        distribution = Table(
            label="Label distribution (latest label per item)",
            interactive=False,
            elem_id="ee-stats-labels",
        )
        shares = Table(
            label="Items settled at 3/3, 3/4, 3/5 or discarded (ProcessBench Table 2)",
            interactive=False,
            elem_id="ee-stats-shares",
        )
        refresh = gr.Button("Refresh statistics", size="sm", elem_id="ee-stats-refresh")
    return (
        stats,
        refresh,
        Outputs(stats_note=stats_note, summary=summary, distribution=distribution, shares=shares),
    )
