"""QC dashboard section "Gold items and calibration": admins mark gold items; reviewers watch each
annotator's gold accuracy (Wilson interval), recent accuracy against the alert, agreement with
consensus and time per item, with the accuracy-over-time plot. Everything comes from services.gold.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from services import gold
from services.errors import ServiceError
from ui.auth import require_admin, require_reviewer
from ui.binding import bind
from ui.context import AppContext
from ui.kit.table import Table

__all__ = ["build", "on_calibration", "on_import", "on_mark", "on_mark_study"]

HELP = (
    "Gold items carry an accepted label. With the dataset setting gold_percent above 0, that share of "
    "each annotator's items is gold, handed out like any other item; answers on them never settle an "
    "item and stay out of the agreement figures unless gold_in_agreement is 1."
)
_COLUMNS = {
    "annotator": "annotator",
    "gold_answers": "gold answers",
    "correct": "right",
    "accuracy": "gold accuracy",
    "lower": "95% low",
    "upper": "95% high",
    "recent_answers": "recent answers",
    "recent_accuracy": "recent accuracy",
    "flagged": "alert",
    "consensus_agreement": "agreement with consensus",
    "dawid_skene_accuracy": "Dawid-Skene accuracy",
    "median_seconds": "median s/gold item",
    "median_seconds_all": "median s/item",
}


def _text(message: str) -> str:
    return html.escape(message, quote=False)


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    shown = frame[[c for c in _COLUMNS if c in frame.columns]].rename(columns=_COLUMNS)
    for name in ("gold answers", "right", "recent answers"):
        if name in shown:
            shown[name] = ["n/a" if pd.isna(v) else str(int(v)) for v in shown[name]]
    for name in shown.columns:
        if pd.api.types.is_float_dtype(shown[name]):
            shown[name] = ["n/a" if pd.isna(v) else f"{v:.3f}" for v in shown[name]]
    if "alert" in shown:
        shown["alert"] = ["⚠ below" if v else "" for v in shown["alert"]]
    return shown.astype(str)


def on_mark(ctx: AppContext, dataset: str | None, refs: str, label: str, request: gr.Request) -> str:
    """Admins: mark the named items gold (their accepted label, or the label typed)."""
    admin = require_admin(ctx, request)
    try:
        outcome = gold.mark_items(
            ctx.store, admin, dataset or "", refs.replace("\n", ",").split(","), label=label.strip() or None
        )
    except ServiceError as exc:
        return f"Not marked: {_text(str(exc))}"
    return _text(outcome.summary())


def on_mark_study(ctx: AppContext, study: str | None, request: gr.Request) -> str:
    """Admins: every settled item of the study becomes gold."""
    admin = require_admin(ctx, request)
    try:
        return _text(gold.mark_study(ctx.store, admin, study or "").summary())
    except ServiceError as exc:
        return f"Not marked: {_text(str(exc))}"


def on_calibration(
    ctx: AppContext, dataset: str | None, annotator: str | None, request: gr.Request
) -> tuple[Any, ...]:
    """Reviewers: the calibration table, the plot (one annotator or all), the gold list, the alerts."""
    user = require_reviewer(ctx, request)
    try:
        result = gold.calibration(ctx.store, user, dataset or "")
        listed = gold.gold_frame(ctx.store, user, dataset or "")
    except ServiceError as exc:
        return _text(str(exc)), gr.skip(), gr.skip(), gr.skip(), gr.skip()
    names = [str(n) for n in result.table["annotator"]] if len(result.table) else []
    pick = annotator if annotator in names else None
    alerts = result.alerts()
    status = f"{result.gold_items} gold item(s) in {_text(result.dataset)}. Alert rule: {_text(result.rule.describe())}."
    if alerts:
        status += "\n\n" + "\n\n".join(f"⚠ {_text(a)}" for a in alerts)
    return (
        status,
        _table(result.table),
        result.figure(pick),
        gr.update(choices=[("everyone", "")] + [(n, n) for n in names], value=pick or ""),
        listed.astype(str),
    )


def on_import(
    ctx: AppContext,
    dataset: str | None,
    file: str | None,
    id_column: str,
    label_column: str,
    request: gr.Request,
) -> str:
    """Admins: gold labels from a column of a JSONL or CSV file (the dataset's own file too)."""
    admin = require_admin(ctx, request)
    if not file:
        return "Not marked: choose a JSONL or CSV file first."
    try:
        outcome = gold.import_gold(
            ctx.store,
            admin,
            dataset or "",
            Path(file),
            id_column=id_column.strip() or "id",
            label_column=label_column.strip() or "label",
        )
    except ServiceError as exc:
        return f"Not marked: {_text(str(exc))}"
    return _text(outcome.summary())


def build(ctx: AppContext, dataset: gr.Dropdown) -> None:
    with gr.Accordion("Gold items and calibration", open=False, elem_id="qc-gold"):
        gr.Markdown(HELP, elem_classes=["qc-note"])
        with gr.Row(equal_height=True):
            refs = gr.Textbox(
                label="Items to mark gold (ids, comma-separated)", scale=3, elem_id="gold-items"
            )
            label = gr.Textbox(
                label="Label (JSON, optional: else the accepted one)", scale=2, elem_id="gold-label"
            )
            mark = gr.Button(
                "Mark gold", variant="primary", scale=1, elem_id="gold-mark", elem_classes=["qc-action"]
            )
        with gr.Row(equal_height=True):
            study = gr.Textbox(label="Study whose agreed items become gold", scale=3, elem_id="gold-study")
            mark_study = gr.Button("Mark the study's items gold", scale=1, elem_id="gold-mark-study")
        with gr.Row(equal_height=True):
            column_file = gr.File(
                label="Or a file with a gold column (JSONL or CSV)",
                file_types=[".jsonl", ".json", ".csv"],
                height=110,
                scale=2,
                elem_id="gold-file",
            )
            id_column = gr.Textbox(
                value="id",
                label="Id column (joined as imported, e.g. idx:classification)",
                elem_id="gold-id-column",
            )
            label_column = gr.Textbox(value="label", label="Gold column", elem_id="gold-label-column")
            mark_file = gr.Button("Mark from the column", scale=1, elem_id="gold-mark-file")
        mark_status = gr.Markdown("", elem_id="gold-mark-status")
        with gr.Row(equal_height=True):
            annotator = gr.Dropdown(
                [("everyone", "")], value="", label="Plot for", scale=2, elem_id="gold-annotator"
            )
            show = gr.Button("Show calibration", scale=1, elem_id="gold-show", elem_classes=["qc-action"])
        status = gr.Markdown("", elem_id="gold-status")
        table = Table(interactive=False, show_label=False, elem_id="gold-table", elem_classes=["qc-table"])
        plot = gr.Plot(format="png", show_label=False, elem_id="gold-plot")
        listed = Table(interactive=False, label="Gold items", elem_id="gold-list", elem_classes=["qc-table"])
    private = {"api_visibility": "private"}
    mark.click(bind(on_mark, ctx), [dataset, refs, label], [mark_status], **private)
    mark_study.click(bind(on_mark_study, ctx), [study], [mark_status], **private)
    mark_file.click(
        bind(on_import, ctx), [dataset, column_file, id_column, label_column], [mark_status], **private
    )
    gr.on(
        [show.click, annotator.input],
        bind(on_calibration, ctx),
        [dataset, annotator],
        [status, table, plot, annotator, listed],
        **private,
    )
