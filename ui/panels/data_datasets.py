"""The Data panel's Datasets tab, its lower half: archive, restore or remove a dataset (admins); the
browser twin of `python app.py datasets archive|restore|remove`.

Picking a dataset says first what removing it would take. Removing needs an export (written and
offered for download, then the dataset goes) or the ticked confirmation. Every handler checks the
session user again: Gradio exposes each event over HTTP.
"""

from __future__ import annotations

import secrets
import shutil
from datetime import UTC, datetime
from typing import Any

import gradio as gr

from services import data
from services import datasets as life
from services.errors import ServiceError
from ui.auth import require_admin, require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.messages import refusal, said
from ui.kit.progress import background

__all__ = ["build", "choices", "on_archive", "on_load", "on_pick", "on_remove", "on_restore"]

HELP = (
    "**Archive** hides a dataset from annotators everywhere (Home, every panel, Browse, the API); "
    "nothing is deleted, it stays exportable here, and **Restore** brings it back. **Remove** deletes "
    "it for good with everything that belongs to it: export it first, or tick the confirmation."
)


def choices(ctx: AppContext, admin: Any, keep: str | None = None) -> dict[str, Any]:
    """Every dataset, archived ones marked, keeping the pick when it still exists."""
    found = [row.dataset for row in data.dataset_rows(ctx.store, admin)]
    names = [d.name for d in found]
    return gr.update(
        choices=[(f"{d.name} (archived)" if d.archived else d.name, d.name) for d in found],
        value=keep if keep in names else None,
    )


def on_load(ctx: AppContext, request: gr.Request) -> Any:
    """The picker's choices, for admins only (others get nothing: the tab is not theirs)."""
    user = require_user(ctx, request)
    return choices(ctx, user) if user.is_admin else gr.skip()


def _state(ctx: AppContext, admin: Any, name: str) -> str:
    found = data.dataset(ctx.store, admin, name)
    where = "archived: hidden from annotators" if found.archived else "in use: annotators see it"
    return said(f"{name}: {where}. {life.removal_summary(ctx.store, admin, name)}")


def on_pick(ctx: AppContext, name: str | None, request: gr.Request) -> str:
    admin = require_admin(ctx, request)
    if not name:
        return ""
    try:
        return _state(ctx, admin, name)
    except ServiceError as exc:
        return refusal(str(exc))


def _changed(ctx: AppContext, admin: Any, name: str, done: str) -> tuple:
    return (said(done), choices(ctx, admin, name), gr.update(value="", visible=False), False)


def on_archive(ctx: AppContext, name: str | None, request: gr.Request) -> tuple:
    admin = require_admin(ctx, request)
    try:
        life.archive(ctx.store, admin, name or "")
    except ServiceError as exc:
        return (refusal(str(exc)), gr.skip(), gr.skip(), gr.skip())
    return _changed(ctx, admin, name or "", f"✓ archived {name}: hidden from annotators, kept whole")


def on_restore(ctx: AppContext, name: str | None, request: gr.Request) -> tuple:
    admin = require_admin(ctx, request)
    try:
        life.restore(ctx.store, admin, name or "")
    except ServiceError as exc:
        return (refusal(str(exc)), gr.skip(), gr.skip(), gr.skip())
    return _changed(ctx, admin, name or "", f"✓ restored {name}: annotators see it again")


def on_remove(
    ctx: AppContext, name: str | None, with_export: bool, confirmed: bool, request: gr.Request
) -> tuple:
    """Remove after an export (offered as a download) or with the ticked confirmation; else refused,
    saying what it would take."""
    admin = require_admin(ctx, request)
    out = None
    if with_export:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        folder = private_dir(ctx) / secrets.token_hex(16)
        folder.mkdir()
        out = folder / f"removed-dataset-{stamp}.jsonl"
    try:
        gone = life.remove(ctx.store, admin, name or "", confirmed=confirmed, export_to=out)
    except ServiceError as exc:
        return (refusal(str(exc)), gr.skip(), gr.skip(), False)
    link = gr.update(value="", visible=False)
    if gone.exported_to is not None:
        offered = offer_download(ctx, admin, gone.exported_to, f"{gone.dataset}-stepgate.jsonl")
        link = gr.update(value=download_link_html(offered), visible=True)
    if out is not None:
        shutil.rmtree(out.parent, ignore_errors=True)  # the manifest beside it; the file was moved
    counts = ", ".join(f"{n} {kind}" for kind, n in gone.counts.items() if n)
    return (said(f"✓ removed {gone.dataset}: {counts}"), choices(ctx, admin), link, False)


def build(ctx: AppContext) -> tuple[gr.Dropdown, list[Any], list[Any]]:
    """The controls; returns the dataset picker and the events that change the list (for the
    parent to refresh its table after them) and their outputs."""
    gr.Markdown(HELP, elem_classes=["data-note"])
    with gr.Row(equal_height=True):
        pick = gr.Dropdown([], label="Dataset", elem_id="data-life-dataset", min_width=240)
        archive = gr.Button("Archive", elem_classes=["data-action"], elem_id="data-life-archive")
        restore = gr.Button("Restore", elem_classes=["data-action"], elem_id="data-life-restore")
    with gr.Row(equal_height=True):
        with_export = gr.Checkbox(
            label="Export it first (stepgate-jsonl, with every label), then remove",
            value=True,
            elem_id="data-life-export",
        )
        confirm = gr.Checkbox(
            label="Yes, remove it without an export", value=False, elem_id="data-life-confirm"
        )
        remove = gr.Button("Remove", variant="stop", elem_classes=["data-action"], elem_id="data-life-remove")
    status = gr.Markdown("", elem_id="data-life-status", latex_delimiters=[])
    link = gr.HTML("", visible=False, elem_id="data-life-file")
    private = {"api_visibility": "private"}
    gr.on(None, bind(on_load, ctx), None, [pick], **background(), **private)
    pick.change(bind(on_pick, ctx), [pick], [status], **background(), **private)
    outputs = [status, pick, link, confirm]
    events = [
        archive.click(bind(on_archive, ctx), [pick], outputs, **private),
        restore.click(bind(on_restore, ctx), [pick], outputs, **private),
        remove.click(bind(on_remove, ctx), [pick, with_export, confirm], outputs, **private),
    ]
    return pick, events, outputs
