"""Step review beside the sample: drafts kept per user on the server, "View statistics" and "Export data" (the
last buttons of PRMBench-V's Figure 13).

Annotators work blind: drafts are keyed by annotator, and statistics and exports hold their own
labels only. Adjudicators and admins get every annotator's labels, the raw log and the gated items.
"""

from __future__ import annotations

import html
import re
import secrets
import shutil
from datetime import datetime
from typing import Any

import gradio as gr

from services import annotate, drafts, statistics
from services.errors import ServiceError
from services.exports import export
from services.records import Annotator
from tasks import STEP_REVIEW
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.table import Table
from ui.render import escape_text

__all__ = [
    "EXPORTS",
    "build",
    "draft_for",
    "draft_key",
    "export_choices",
    "on_export",
    "on_stats",
    "remember_dataset",
    "remembered_dataset",
]

# key -> (label, exports format, file suffix, reviewers only); "mine-*" hold the user's own rows only.
EXPORTS: dict[str, tuple[str, str, str, bool]] = {
    "mine-csv": ("My labels (CSV)", "log-csv", "csv", False),
    "mine-jsonl": ("My labels (JSONL)", "log-jsonl", "jsonl", False),
    "log-csv": ("All annotators' labels, raw log (CSV)", "log-csv", "csv", True),
    "log-jsonl": ("All annotators' labels, raw log (JSONL)", "log-jsonl", "jsonl", True),
    "log-parquet": ("All annotators' labels, raw log (Parquet)", "log-parquet", "parquet", True),
    # The step-review spec keeps a sample as PRMBench-V did: most annotators said Correct and Reasonable.
    "prmbench": ("Kept samples, PRMBench JSONL (majority Correct + Reasonable)", "prmbench", "jsonl", True),
    "items-jsonl": ("Every sample with its gate decision (JSONL)", "items-jsonl", "jsonl", True),
}
PANEL = "step_review"  # drafts are kept per user and panel, on the server
DRAFT_FIELDS = ("original", "modification", "difficulty", "note")
DRAFT_LISTS = ("original_features", "modified_features")


def draft_key(work: dict[str, Any]) -> str:
    return f"{work['dataset']}|{work['item_id']}|{work['version_id']}"


def draft_for(
    ctx: AppContext, user: Annotator, work: dict[str, Any], saved: dict[str, Any] | None
) -> dict | None:
    """This annotator's unsaved choices on this sample version, if they differ from what is stored."""
    draft = drafts.get(ctx.store, user, PANEL, draft_key(work))
    if not isinstance(draft, dict):
        return None
    draft = {
        k: sorted(str(x) for x in v) if k in DRAFT_LISTS else str(v)
        for k, v in draft.items()
        if v and (k in DRAFT_FIELDS or (k in DRAFT_LISTS and isinstance(v, list)))
    }
    return draft if draft and draft != (saved or {}) else None


def remembered_dataset(ctx: AppContext, user: Annotator) -> str | None:
    found = drafts.get(ctx.store, user, PANEL, "dataset")
    return found if isinstance(found, str) else None


def remember_dataset(ctx: AppContext, user: Annotator, name: str | None) -> None:
    drafts.put(ctx.store, user, PANEL, "dataset", name)


FIELDS = (
    ("original", "Original steps", ["correct", "incorrect"]),
    ("modification", "Modification", ["reasonable", "unreasonable"]),
    ("difficulty", "Difficulty", ["easy", "medium", "hard"]),
)


def export_choices(user: Annotator) -> list[tuple[str, str]]:
    return [
        (label, key)
        for key, (label, _, _, reviewers) in EXPORTS.items()
        if user.can_see_labels or not reviewers
    ]


def on_stats(ctx: AppContext, dataset_name: str | None, request: gr.Request) -> tuple:
    """Labels per annotator and how the three choices are spread, within what this user may see."""
    user = require_user(ctx, request)
    try:
        dataset = annotate.dataset_for(ctx.store, dataset_name or "", STEP_REVIEW)
    except ServiceError as exc:
        gr.Warning(html.escape(f"No statistics: {exc}."))
        return (gr.skip(),) * 4 + (escape_text(f"No statistics: {exc}."),)
    stats = statistics.panel_statistics(
        ctx.store, user, dataset, [f for f, _, _ in FIELDS], [order for _, _, order in FIELDS]
    )
    tables = [stats.summary.rename(columns={"items": "samples", "median_seconds": "median seconds"})]
    for field, title, order in FIELDS:
        table = stats.distributions[field]
        tables.append(
            table.rename(columns={o: o.capitalize() for o in order}).rename(columns={"annotator": title})
        )
    whose = (
        ("every annotator's labels (you may see them as " + user.role + ")")
        if stats.everyone
        else "your own labels only (annotators work blind)"
    )
    note = f"Statistics of {escape_text(dataset.name)}: {whose}; current versions, latest label per sample."
    return (*[gr.update(value=t, visible=True) for t in tables], note)


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "data"


def on_export(ctx: AppContext, dataset_name: str | None, choice: str | None, request: gr.Request) -> tuple:
    """Write the chosen export and offer it as a link for this user only; reviewers-only files need the role."""
    user = require_user(ctx, request)
    if choice not in EXPORTS:
        gr.Warning("Choose what to export first.")
        return gr.skip(), "Choose what to export first."
    label, fmt, suffix, reviewers = EXPORTS[choice]
    if reviewers and not user.can_see_labels:
        raise gr.Error(
            html.escape(f"{user.name} is an {user.role}: only adjudicators and admins can export {label}.")
        )
    try:
        dataset = annotate.dataset_for(ctx.store, dataset_name or "", STEP_REVIEW)
    except ServiceError as exc:
        gr.Warning(html.escape(f"Nothing exported: {exc}."))
        return gr.skip(), escape_text(f"Nothing exported: {exc}.")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    mine = choice.startswith("mine-")
    who = f"-{user.name}" if mine else ""
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    out = folder / _safe_name(f"{dataset.name}-{choice}{who}-{stamp}.{suffix}")
    try:
        rows = export(ctx.store, fmt, out, dataset=dataset.name, annotator=user.name if mine else None).rows
        link = offer_download(ctx, user, out, out.name)
    except (ServiceError, OSError) as exc:
        gr.Warning(html.escape(f"Nothing exported: {exc}"))
        return gr.skip(), f"Nothing exported ({label}): {escape_text(str(exc))}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    said = f"Exported {rows} row{'s' if rows != 1 else ''} of {escape_text(dataset.name)}: {label}, {escape_text(out.name)}."
    return gr.update(value=download_link_html(link), visible=True), said


def _distribution(field: str, title: str, _order: list[str]) -> Table:
    return Table(label=title, visible=False, interactive=False, elem_id=f"step-review-dist-{field}")


def build(ctx: AppContext, dataset: gr.Dropdown) -> gr.Dropdown:
    """The "Statistics and export" section; returns the export choice so the page load can fill it."""
    with gr.Accordion("Statistics and export", open=False, elem_id="step-review-stats-export"):
        with gr.Row(elem_id="step-review-stats-row"):
            stats = gr.Button("View statistics", elem_id="step-review-stats", scale=1, min_width=150)
            choice = gr.Dropdown(
                [],
                show_label=False,
                container=False,
                elem_id="step-review-export-choice",
                scale=3,
                min_width=260,
            )
            go = gr.Button("Export data", elem_id="step-review-export", scale=1, min_width=150)
        status = gr.Markdown(elem_id="step-review-stats-status")
        download = gr.HTML("", visible=False, elem_id="step-review-export-file")
        with gr.Row():  # two tables a row where the pane is wide enough, so their columns stay readable
            summary = Table(
                label="Per annotator", visible=False, interactive=False, elem_id="step-review-summary"
            )
            tables = [_distribution(*FIELDS[0])]
        with gr.Row():
            tables += [_distribution(*f) for f in FIELDS[1:]]
    stats.click(bind(on_stats, ctx), [dataset], [summary, *tables, status], api_visibility="private")
    go.click(bind(on_export, ctx), [dataset, choice], [download, status], api_visibility="private")
    return choice
