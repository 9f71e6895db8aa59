"""The Data panel's "API tokens" tab (admins): create one for a script (it acts as an existing annotator, with that
annotator's role), see every token with its owner and state, revoke one; the browser twin of
`python app.py tokens`.

The secret is shown once, in a box of its own, right after it is made; only its hash is kept
(store/tokens.py), so the list shows the first characters only. Every handler checks the session
user itself: Gradio exposes each event over HTTP, and an annotator calling one gets an error.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from services import tokens
from services.errors import ServiceError
from ui.auth import require_admin
from ui.context import AppContext
from ui.kit.messages import refusal, said
from ui.kit.outputs import Outputs
from ui.kit.progress import on_status
from ui.kit.table import Table

__all__ = ["COLUMNS", "build", "on_create", "on_open", "on_revoke"]

COLUMNS = ["id", "name", "acts as", "role", "starts with", "created by", "created", "state"]
HELP = (
    "A script sends its token as `Authorization: Bearer TOKEN` to `POST /api/predictions` (a model's "
    "predictions), `POST /api/items` (model-generated items with their pre-labels: error steps, candidate steps) and `GET /metrics`. It may "
    "do what its annotator's role may do, and nothing once revoked."
)


def _table(rows: list[tokens.ApiToken]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            [
                str(t.id),
                t.name,
                t.owner,
                t.role,
                t.prefix + "…",
                t.created_by or "(command line)",
                f"{t.created_at:%Y-%m-%d %H:%M}",
                f"revoked {t.revoked_at:%Y-%m-%d %H:%M}" if t.revoked_at else "live",
            ]
            for t in rows
        ],
        columns=COLUMNS,
    )


def _listing(ctx: AppContext, admin: Any) -> dict[str, Any]:
    rows = tokens.list_all(ctx.store, admin)
    live = [(f"{t.id}: {t.name} ({t.owner})", str(t.id)) for t in rows if t.revoked_at is None]
    names = tokens.owners(ctx.store, admin)
    return {
        "token_table": _table(rows),
        "token_pick": gr.update(choices=live, value=None),
        "token_owner": gr.update(choices=names),
    }


def on_open(ctx: AppContext, request: gr.Request) -> dict[str, Any]:
    """The tokens and the annotators a new one may act as; a secret shown before is gone for good."""
    admin = require_admin(ctx, request)
    return {**_listing(ctx, admin), "token_secret": gr.update(value="", visible=False)}


def on_create(ctx: AppContext, owner: str | None, name: str, request: gr.Request) -> dict[str, Any]:
    """Make a token and show its secret once (in the secret box, never in the list)."""
    admin = require_admin(ctx, request)
    try:
        record, secret = tokens.create(ctx.store, admin, owner or "", name)
    except ServiceError as exc:
        return {"token_status": refusal(f"No token made. {exc}"), "token_secret": gr.update(visible=False)}
    return {
        **_listing(ctx, admin),
        "token_status": said(
            f"✓ Token {record.id} ({record.name}) acts as {record.owner} ({record.role}). Copy it now: "
            "it is shown only this once."
        ),
        "token_secret": gr.update(value=secret, visible=True),
        "token_name": "",
    }


def on_revoke(ctx: AppContext, token_id: str | None, request: gr.Request) -> dict[str, Any]:
    """Revoke a token: from the next request on, on every replica, it gets 401."""
    admin = require_admin(ctx, request)
    if not token_id or not str(token_id).isdigit():
        return {"token_status": refusal("Nothing revoked: choose a live token first.")}
    try:
        record = tokens.revoke(ctx.store, admin, int(token_id))
    except ServiceError as exc:
        return {"token_status": refusal(f"Nothing revoked. {exc}")}
    return {
        **_listing(ctx, admin),
        "token_status": said(f"✓ Token {record.id} ({record.name}) is revoked: scripts using it get 401."),
        "token_secret": gr.update(value="", visible=False),
    }


def build(ctx: AppContext, tab: gr.Tab) -> None:
    """The tab's content; the caller opens the gr.Tab and hands it in (its select lists the tokens)."""
    with gr.Column(elem_id="tokens-panel"):
        gr.Markdown(HELP, elem_classes=["data-note"])
        status = gr.Markdown("", elem_id="tokens-status", latex_delimiters=[])
        with gr.Row(equal_height=True):
            # Custom values pass Gradio's check so that the service's refusal is the one said.
            owner = gr.Dropdown(
                [],
                label="Acts as (the token has this user's role)",
                allow_custom_value=True,
                elem_id="tokens-owner",
                min_width=200,
            )
            name = gr.Textbox(
                label="What the script is for", placeholder="nightly predictions", elem_id="tokens-name"
            )
            create = gr.Button(
                "Create token", variant="primary", elem_classes=["data-action"], elem_id="tokens-create"
            )
        secret = gr.Textbox(
            label="The new token (shown once: copy it now)",
            interactive=False,
            visible=False,
            buttons=["copy"],
            elem_id="tokens-new-token",
        )
        table = Table(
            headers=COLUMNS, datatype="str", interactive=False, elem_id="tokens-table", show_label=False
        )
        with gr.Row(equal_height=True):
            pick = gr.Dropdown(
                [], label="Live token", allow_custom_value=True, elem_id="tokens-pick", min_width=260
            )
            revoke = gr.Button(
                "Revoke", variant="stop", elem_classes=["data-action"], elem_id="tokens-revoke"
            )
    view = Outputs(
        token_table=table,
        token_pick=pick,
        token_owner=owner,
        token_status=status,
        token_secret=secret,
        token_name=name,
    )
    private = {"api_visibility": "private", **on_status(status, "full")}
    tab.select(view.bind(on_open, ctx), None, list(view), **private)
    create.click(view.bind(on_create, ctx), [owner, name], list(view), **private)
    revoke.click(view.bind(on_revoke, ctx), [pick], list(view), **private)
