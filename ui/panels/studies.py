"""The QC dashboard's agreement studies: draw one (admins), list them with progress per batch, read a
study's report.

A study is drawn from kept items by default, for raters of its own list (K per item, none of whom has
seen the item); its labels never reach the gate (services.studies). A sequential study draws its
items in batches and stops at a target interval half-width or its cap; the table and the report say
which batch it is at and why it stopped. Every handler checks the role again (Gradio exposes each
event over HTTP).
"""

from __future__ import annotations

import html
import secrets
import shutil
from typing import Any

import gradio as gr
import pandas as pd

from services import reports
from services import studies as study_service
from services.errors import InvalidInput, ServiceError
from services.records import Annotator
from ui.auth import require_admin, require_reviewer, require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.progress import background, on_status
from ui.kit.qc_views import agreement_view, offer_report, qc_frame
from ui.render import escape_text

__all__ = ["build", "on_draw_study", "on_open", "on_pick_study", "on_reassign", "on_study_report"]

STRATA = [
    ("error type", "error_type"),
    ("source", "source"),
    ("final answer correct", "final_answer_correct"),
    ("no strata (simple random sample)", "none"),
]
HELP = (
    "An admin draws N items, stratified by a field, each for K raters of the list below who have not "
    "seen the item (empty list: every annotator). As the papers drew: kept items only (untick for a "
    "pilot over every item). Each rater finds their study items first in the dataset's annotation "
    "panel; their labels go to the study only, never to an item's gate state or consensus. "
    "Sequential: items are drawn in batches until the agreement interval reaches the target half-width "
    "(N is then the cap). PRMBench-V: 100 items, 2 raters; MPBench: 300 items, 3 raters."
)
_COLUMNS = {
    "study": "study",
    "dataset": "dataset",
    "n_items": "items",
    "raters": "raters",
    "items_done": "done",
    "labels": "labels",
    "progress": "progress",
    "batches": "batches",
    "per_batch": "done per batch",
    "rule": "stopping rule",
    "stopped_by": "stopped by",
    "pool": "drawn from",
    "stratify_by": "stratified by",
    "created_by": "drawn by",
}
_STOPPED = {"target": "rule: target width", "cap": "rule: cap", "pool": "no items left"}


def studies_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The studies table: progress, batches, the rule and why it stopped, in words."""
    if not len(frame):
        return pd.DataFrame(columns=list(_COLUMNS.values()))
    rules = [
        f"±{t:g} in batches of {int(b)}, cap {int(c)}" if pd.notna(t) else "fixed N"
        for t, b, c in zip(frame["target"], frame["batch_size"], frame["cap"], strict=True)
    ]
    stopped = [
        _STOPPED.get(s, "-") if pd.notna(t) and isinstance(s, str) else ("running" if pd.notna(t) else "-")
        for s, t in zip(frame["stopped_by"], frame["target"], strict=True)
    ]
    shown = frame.assign(
        progress=[f"{p:.0%}" for p in frame["progress"]],
        labels=[f"{g}/{n}" for g, n in zip(frame["labels"], frame["labels_needed"], strict=True)],
        rule=rules,
        stopped_by=stopped,
        pool=["kept items" if k else "all items (pilot)" for k in frame["kept_only"]],
        stratify_by=frame["stratify_by"].fillna("-"),
        created_by=frame["created_by"].fillna("-"),
    )
    return shown[list(_COLUMNS)].rename(columns=_COLUMNS).astype(str)


def on_open(ctx: AppContext, request: gr.Request) -> tuple:
    """Page load: reviewers get the studies; admins also the form and the list of possible raters."""
    user = require_user(ctx, request)
    if not user.can_see_labels:
        return gr.update(visible=False), None, gr.skip(), gr.skip(), gr.update(visible=False), gr.skip()
    listed = study_service.list_studies(ctx.store, user)
    names = listed["study"].tolist()
    raters = study_service.rater_choices(ctx.store, user) if user.is_admin else []
    return (
        gr.update(visible=user.is_admin),
        studies_view(listed),
        gr.update(choices=names, value=names[-1] if names else None),
        gr.update(choices=raters),
        gr.update(visible=user.is_admin),
        gr.update(choices=raters, value=None),
    )


def _names(raters: list[str] | str | None) -> list[str] | None:
    """The rater list as picked (a list) or typed (comma-separated); empty: every annotator."""
    if isinstance(raters, str):
        raters = [r.strip() for r in raters.split(",")]
    picked = [r for r in (raters or []) if r]
    return picked or None


def on_draw_study(
    ctx: AppContext,
    dataset: str | None,
    name: str,
    n_items: float | None,
    stratify: str,
    raters: float | None,
    seed: float | None,
    rater_names: list[str] | str | None,
    kept_only: bool,
    sequential: bool,
    target: float | None,
    batch: float | None,
    request: gr.Request,
) -> tuple:
    """Admins only: draw the sample and assign its raters; a bad request stores nothing."""
    admin = require_admin(ctx, request)
    try:
        rule = None
        if sequential:
            if target is None or batch is None:
                raise InvalidInput("give the target half-width and the batch size")
            rule = study_service.Sequential(target=float(target), batch=int(batch))
        study = study_service.draw_study(
            ctx.store,
            admin,
            dataset=dataset,
            name=name,
            n_items=None if n_items is None else int(n_items),
            raters=None if raters is None else int(raters),
            stratify_by=None if stratify == "none" else stratify,
            seed=int(seed or 0),
            kept_only=bool(kept_only),
            rater_names=_names(rater_names),
            sequential=rule,
        )
    except ServiceError as exc:
        gr.Warning(f"Study not drawn: {exc}")
        return (f"Study not drawn: {escape_text(str(exc))}", *([gr.skip()] * 5))
    listed = study_service.list_studies(ctx.store, admin)
    first = " (its first batch)" if study.rule else ""
    message = (
        f"Drew **{escape_text(study.name)}**{first}: {escape_text(study_service.describe(study))}. Each item "
        "now waits for its raters, first in their annotation panel; no item's gate state changed."
    )
    picker = gr.update(choices=listed["study"].tolist(), value=study.name)
    return message, studies_view(listed), picker, "", "", gr.update(visible=False)


def on_study_report(ctx: AppContext, study: str | None, n_boot: int | None, request: gr.Request) -> tuple:
    """The study's agreement over its own labels; its progress per batch and, if sequential, why it
    stopped (or that it runs) and which interval it reports."""
    user = require_reviewer(ctx, request)
    if not study:
        return "Pick a study first.", "", gr.skip(), gr.update(visible=False), None, None, None, None
    try:
        report = reports.study_report(ctx.store, user, study, n_boot=int(n_boot or 1000))
        links = (*offer_report(ctx, user, report), _offer_labels(ctx, user, study))
    except ServiceError as exc:
        return escape_text(str(exc)), "", gr.skip(), gr.update(visible=False), None, None, None, None
    progress = report.progress or {}
    summary = (
        f"Study **{escape_text(study)}** on {escape_text(report.tables.dataset)}: "
        f"{escape_text(str(progress.get('note', '')))} Agreement over the study's own labels only."
    )
    if report.warning:
        summary += f"\n\n⚠ {html.escape(report.warning, quote=False)}"
    listed = study_service.list_studies(ctx.store, user)
    return summary, agreement_view(report), studies_view(listed), gr.update(visible=True), *links


def on_pick_study(ctx: AppContext, study: str | None, request: gr.Request) -> dict:
    """Admins: the picked study's removed raters who still hold pending items (whom to replace)."""
    user = require_user(ctx, request)
    if not user.is_admin or not study:
        return gr.update(choices=[], value=None)
    try:
        removed = study_service.removed_raters(ctx.store, user, study)
    except ServiceError:
        return gr.update(choices=[], value=None)
    return gr.update(choices=removed, value=removed[0] if removed else None)


def on_reassign(
    ctx: AppContext, study: str | None, from_rater: str | None, to_rater: str | None, request: gr.Request
) -> tuple:
    """Admins only: a removed rater's pending study items go to an annotator who has not seen them."""
    admin = require_admin(ctx, request)
    try:
        if not study or not from_rater or not to_rater:
            raise InvalidInput("pick the study, the removed rater and the annotator who takes their items")
        done = study_service.reassign(ctx.store, admin, study, from_rater, to_rater)
    except ServiceError as exc:
        gr.Warning(f"Nothing reassigned: {exc}")
        return f"Nothing reassigned: {escape_text(str(exc))}", gr.skip(), gr.skip()
    listed = study_service.list_studies(ctx.store, admin)
    removed = study_service.removed_raters(ctx.store, admin, study)
    return (
        escape_text(done.summary()),
        studies_view(listed),
        gr.update(choices=removed, value=removed[0] if removed else None),
    )


def _offer_labels(ctx: AppContext, user: Annotator, study: str) -> str:
    """The study's own labels as CSV, for this reviewer only (ui.kit.downloads)."""
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    try:
        path = folder / f"study-labels-{secrets.token_hex(4)}.csv"
        study_service.export_labels(ctx.store, user, study, path, "csv")
        return download_link_html(offer_download(ctx, user, path, "study-labels.csv"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build(ctx: AppContext, dataset: gr.Dropdown, n_boot: gr.Radio) -> None:
    with gr.Accordion("Agreement studies", open=True, elem_id="qc-studies"):
        with gr.Column(visible=False, elem_id="qc-study-admin") as admin:
            gr.Markdown(HELP, elem_classes=["qc-note"])
            with gr.Row(equal_height=True):
                name = gr.Textbox(
                    label="Study name", placeholder="e.g. PRMBench-V IAA", scale=2, elem_id="qc-study-name"
                )
                n_items = gr.Number(
                    100, label="Items (N; cap if sequential)", precision=0, minimum=1, elem_id="qc-study-n"
                )
                by = gr.Dropdown(STRATA, value="error_type", label="Stratify by", elem_id="qc-study-by")
                k = gr.Number(2, label="Raters (K)", precision=0, minimum=2, maximum=10, elem_id="qc-study-k")
                seed = gr.Number(0, label="Seed", precision=0, elem_id="qc-study-seed")
            with gr.Row(equal_height=True):
                raters = gr.Dropdown(
                    [],
                    multiselect=True,
                    label="Raters (empty: every annotator)",
                    scale=3,
                    elem_id="qc-study-raters",
                )
                kept = gr.Checkbox(
                    True, label="Kept items only (as the papers drew)", elem_id="qc-study-kept"
                )
            with gr.Row(equal_height=True):
                sequential = gr.Checkbox(
                    False, label="Sequential: stop at a target interval width", elem_id="qc-study-sequential"
                )
                target = gr.Number(0.05, label="Target half-width", minimum=0.001, elem_id="qc-study-target")
                batch = gr.Number(20, label="Batch size", precision=0, minimum=1, elem_id="qc-study-batch")
                draw = gr.Button(
                    "Draw study", variant="primary", elem_id="qc-study-draw", elem_classes=["qc-action"]
                )
        status = gr.Markdown("", elem_id="qc-study-status")
        table = qc_frame("qc-studies-table", show_label=False)
        with gr.Row(equal_height=True):
            pick = gr.Dropdown([], label="Study", scale=3, elem_id="qc-study-pick")
            show = gr.Button(
                "Show study report", scale=1, elem_id="qc-study-show", elem_classes=["qc-action"]
            )
        with gr.Row(equal_height=True, visible=False, elem_id="qc-study-reassign") as reassign_row:
            removed = gr.Dropdown(
                [], label="Removed rater with pending items", scale=2, elem_id="qc-study-reassign-from"
            )
            successor = gr.Dropdown([], label="Give their items to", scale=2, elem_id="qc-study-reassign-to")
            reassign = gr.Button(
                "Reassign pending items", scale=1, elem_id="qc-study-reassign-go", elem_classes=["qc-action"]
            )
        summary = gr.Markdown("", elem_id="qc-study-summary")
        agreement = gr.HTML("", elem_id="qc-study-agreement")
        with gr.Row(visible=False, elem_id="qc-study-downloads") as downloads:
            md = gr.HTML("", elem_id="qc-study-download-md")
            csv = gr.HTML("", elem_id="qc-study-download-csv")
            json_link = gr.HTML("", elem_id="qc-study-download-json")
            labels = gr.HTML("", elem_id="qc-study-download-labels")
    private: dict[str, Any] = {"api_visibility": "private"}
    opened = [admin, table, pick, raters, reassign_row, successor]
    gr.on(None, bind(on_open, ctx), None, opened, **background(), **private)
    pick.change(bind(on_pick_study, ctx), [pick], [removed], **background(), **private)
    reassign.click(bind(on_reassign, ctx), [pick, removed, successor], [status, table, removed], **private)
    draw.click(
        bind(on_draw_study, ctx),
        [dataset, name, n_items, by, k, seed, raters, kept, sequential, target, batch],
        [status, table, pick, summary, agreement, downloads],
        **private,
        **on_status(status, "full"),
    )
    show.click(
        bind(on_study_report, ctx),
        [pick, n_boot],
        [summary, agreement, table, downloads, md, csv, json_link, labels],
        **private,
        **on_status(summary, "full"),
    )
