"""Home: where the app opens, a work queue. Per dataset: what is left for the user, a progress bar,
and a button that opens the right panel on that dataset (as Label Studio's and Argilla's home pages);
admins also see each dataset's items per gating state. It claims nothing.

Opening the app used to land on Step review, whose opening leased a sample for 15 minutes even when
the annotator went elsewhere; an item is now leased only when its panel is opened. The button stores
the dataset as the panel's choice (services.drafts, what the panel reads when its tab opens), then
ui/js/place.js selects the tab: the panels need no change.
"""

from __future__ import annotations

import html
import json

import gradio as gr

from services import datasets, drafts, gold
from services.datasets import QueueRow
from tasks import SPECS
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext
from ui.render import escape_text

__all__ = ["PANEL_OF_TASK", "build", "on_open", "on_open_panel", "queue_html"]

WELCOME = "Press **?** for the keys and for what counts as an error. An item is handed to you when you open its panel."
PANEL_OF_TASK = {task: task for task in SPECS}  # each task's panel module (and tab id) has its name
# Gating states in the words the admins use; statuses not named here are shown as they are.
STATES = (
    ("settled", ("consensus", "complete")),
    ("open", ("open",)),
    ("disputed", ("disputed",)),
    ("rejected", ("rejected",)),
    ("waiting for regeneration", ("regenerating", "waiting", "judging")),
    ("discarded", ("discarded",)),
)


def _states_line(states: dict[str, int]) -> str:
    named = {status for _, group in STATES for status in group}
    parts = [(label, sum(states.get(s, 0) for s in group)) for label, group in STATES]
    parts += [(status, n) for status, n in sorted(states.items()) if status not in named]
    return " · ".join(
        f'<span class="home-state home-state-{escape_text(label.split()[0])}">{n} {escape_text(label)}</span>'
        for label, n in parts
        if n or label in ("settled", "open")
    )


def _card(row: QueueRow) -> str:
    d = row.dataset
    title = SPECS[d.task].title
    share = 100.0 * row.mine / row.total if row.total else 0.0
    left = "nothing left for you" if not row.left else f"{row.left} left for you"
    # an attribute's value: quotes escaped too (escape_text keeps them)
    target = html.escape(json.dumps({"tab": PANEL_OF_TASK[d.task], "title": title, "dataset": d.name}))
    archived = ' <span class="home-archived">archived</span>' if d.archived else ""
    states = f'<div class="home-states">{_states_line(row.states)}</div>' if row.states is not None else ""
    return (
        f'<div class="home-card" data-dataset="{html.escape(d.name)}">'
        f'<div class="home-card-head"><b class="home-name">{escape_text(d.name)}</b>{archived}'
        f'<span class="home-task">{escape_text(title)}</span></div>'
        f'<div class="home-left">{left}</div>'
        f'<div class="home-bar" role="progressbar" aria-valuemin="0" aria-valuemax="{row.total}" '
        f'aria-valuenow="{row.mine}"><div class="home-bar-done" style="width:{share:.1f}%"></div></div>'
        f'<div class="home-counts">{row.mine} of {row.total} labelled by you</div>{states}'
        f'<button class="home-open" type="button" data-target="{target}">Open in {escape_text(title)}</button>'
        "</div>"
    )


def queue_html(rows: list[QueueRow]) -> str:
    if not rows:
        return '<div class="home-empty">No datasets yet: an admin imports one in the Data panel.</div>'
    return '<div class="home-queue">' + "".join(_card(row) for row in rows) + "</div>"


def on_open(ctx: AppContext, request: gr.Request) -> tuple[str, str]:
    """The user's own work per dataset (never the others': annotators work blind)."""
    user = require_user(ctx, request)
    rows = datasets.work_queue(ctx.store, user)
    hello = f"Hello **{escape_text(user.name)}** ({escape_text(user.role)}). {WELCOME}"
    for row in rows:  # own gold accuracy, where the dataset allows it (services.gold)
        checked = gold.my_gold_accuracy(ctx.store, user, row.dataset.name)
        if checked:
            hello += f"\n\n**{escape_text(row.dataset.name)}**: {escape_text(checked)}"
    if user.is_admin:  # the calibration alert reaches admins where the app opens
        for alert in gold.admin_alerts(ctx.store, user):
            hello += f"\n\n⚠ Gold check: {escape_text(alert)}"
    return hello, queue_html(rows)


def on_open_panel(ctx: AppContext, target: str, request: gr.Request) -> str:
    """A card's button: the dataset becomes the panel's choice (read when its tab opens); the page's
    script then selects the tab. A dataset the user may not see, or a task with no panel, changes nothing."""
    user = require_user(ctx, request)
    try:
        wanted = json.loads(target or "{}")
    except json.JSONDecodeError:
        return ""
    name, tab = str(wanted.get("dataset", "")), str(wanted.get("tab", ""))
    shown = {d.name: d.task for d in datasets.visible_datasets(ctx.store, user)}
    if shown.get(name) is None or PANEL_OF_TASK.get(shown[name]) != tab:
        return ""
    drafts.put(ctx.store, user, tab, "dataset", name)
    return target


def build(ctx: AppContext) -> tuple[gr.Textbox, gr.Button]:
    """Home's layout; returns the hidden target box and button that a card's click fills and presses."""
    hello = gr.Markdown(WELCOME, elem_id="home-hello")
    queue = gr.HTML("", elem_id="home-work")
    target = gr.Textbox("", elem_id="home-open-target", elem_classes=["stepgate-offscreen"], show_label=False)
    go = gr.Button("open", elem_id="home-open-go", elem_classes=["stepgate-offscreen"])
    gr.on(None, bind(on_open, ctx), None, [hello, queue], api_visibility="private", show_progress_on=[hello])
    go.click(bind(on_open_panel, ctx), [target], [target], api_visibility="private").then(
        None, [target], None, js="(t) => { window.stepgatePlace && window.stepgatePlace.openTab(t); }"
    )
    return target, go
