"""Home: where the app opens. It shows the user's own work per dataset and claims nothing.

Opening the app used to land on Step review, whose opening leased a sample for 15 minutes even when
the annotator went elsewhere; an item is now leased only when its panel is opened.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate, gold
from tasks import SPECS
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.table import Table, table_rows
from ui.render import escape_text

__all__ = ["build", "on_open"]

COLUMNS = ["dataset", "panel", "items", "you labelled"]
WELCOME = (
    "Pick a panel above to start: an item is handed to you when you open its panel. "
    "Press **?** for the keys and for what counts as an error."
)


def on_open(ctx: AppContext, request: gr.Request) -> tuple[str, dict[str, Any]]:
    """The user's own counts per dataset (never the others': annotators work blind)."""
    user = require_user(ctx, request)
    rows = [
        [row.dataset.name, SPECS[row.dataset.task].title, row.counts["total"], row.counts["mine"]]
        for row in annotate.my_work(ctx.store, user)
    ]
    hello = f"Hello **{escape_text(user.name)}** ({escape_text(user.role)}). {WELCOME}"
    for name, *_ in rows:  # own gold accuracy, where the dataset allows it (services.gold)
        checked = gold.my_gold_accuracy(ctx.store, user, name)
        if checked:
            hello += f"\n\n**{escape_text(name)}**: {escape_text(checked)}"
    if user.is_admin:  # the calibration alert reaches admins where the app opens
        for alert in gold.admin_alerts(ctx.store, user):
            hello += f"\n\n⚠ Gold check: {escape_text(alert)}"
    return hello, table_rows(COLUMNS, rows)  # plain rows: an annotator's page loads no pandas


def build(ctx: AppContext) -> None:
    hello = gr.Markdown(WELCOME, elem_id="home-hello")
    work = Table(headers=COLUMNS, interactive=False, label="Your work", elem_id="home-work", wrap=True)
    gr.on(None, bind(on_open, ctx), None, [hello, work], api_visibility="private")
