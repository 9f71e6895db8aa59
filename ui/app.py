"""build_app(): the tabs, the signed-in user, and nothing else; each panel builds itself."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import gradio as gr

from services import access
from ui import panels
from ui.api import build_api
from ui.auth import require_user
from ui.binding import bind
from ui.context import LOCAL, AppContext
from ui.kit.keymap import help_html
from ui.panels import home
from ui.render import escape_text
from ui.web.one_app import app_made_at_mount

__all__ = ["build_app", "launch_kwargs"]

ASSETS = Path(__file__).parent
DEMO_CREDIT = (
    "Demo data: PRMBench items and QwQ solutions from the PRMBench repository (Apache-2.0); "
    "figures from [MathVista](https://github.com/lupantech/MathVista) (lupantech/MathVista, "
    "assets/contexts), cropped and downscaled, under [CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)."
)


def whoami(ctx: AppContext, request: gr.Request) -> str:
    """The header line; logging out is a POST from this page (ui/web checks its origin)."""
    user = require_user(ctx, request)
    mode = "local mode" if ctx.mode == LOCAL else "team mode"
    return (
        f"Signed in as <b>{escape_text(user.name)}</b> · role: <b>{escape_text(user.role)}</b> · {mode} · "
        '<form method="post" action="/logout" id="logout-form" style="display:inline">'
        '<button type="submit" id="logout-link" class="stepgate-logout">log out</button></form>'
    )


def on_load(ctx: AppContext, request: gr.Request) -> list[Any]:
    """The header line, then each tab's visibility for this user's role. A link's `?tab=&dataset=`
    becomes the panel's dataset choice first (ui/js/place.js then selects the tab); an unknown tab
    or dataset is ignored."""
    params = dict(getattr(request, "query_params", None) or {})
    home.on_open_panel(
        ctx, json.dumps({"tab": params.get("tab", ""), "dataset": params.get("dataset", "")}), request
    )
    return [whoami(ctx, request), *tab_visibility(ctx, request)]


def tab_visibility(ctx: AppContext, request: gr.Request) -> list[Any]:
    """Each tab shown to the roles that can use it; an annotator sees Home and the annotation panels."""
    user = require_user(ctx, request)
    # Gradio 6.31 keeps a tab's button on an update to visible=False; "hidden" removes it.
    return [
        gr.Tab(visible=True if access.may_open_panel(user, audience) else "hidden")
        for _, _, audience in panels.PANELS
    ]


def build_app(ctx: AppContext) -> gr.Blocks:
    """The Blocks; its web app is made when ui.web.server mounts it (ui/web/one_app.py)."""
    with app_made_at_mount(), gr.Blocks(title="stepgate") as app:
        with gr.Row(elem_id="stepgate-header"):
            gr.Markdown("## stepgate", elem_id="stepgate-title")
            user_line = gr.HTML("", elem_id="whoami")
        tabs: list[tuple[gr.Tab, str]] = []
        with gr.Tabs(elem_id="panels"):
            for title, module, audience in panels.PANELS:
                with gr.Tab(title, id=panels.tab_key(module), elem_id=panels.tab_elem_id(module)) as tab:
                    tabs.append((tab, audience))
                    # A panel that takes `tab` wires tab.select (open work when the tab is opened).
                    if "tab" in inspect.signature(module.build).parameters:
                        module.build(ctx, tab=tab)
                    else:
                        module.build(ctx)
        gr.Markdown(DEMO_CREDIT, elem_id="credits")
        gr.HTML(help_html(), elem_id="stepgate-help")
        # One load event: the header and the role's tabs arrive together, so the tab bar changes once.
        # Its progress on the header only: Gradio's page re-applies every progress target's status at
        # each later event, and a tab as a target means copying every component inside it each time.
        app.load(
            bind(on_load, ctx),
            None,
            [user_line, *(tab for tab, _ in tabs)],
            api_visibility="private",
            show_progress_on=[user_line],
        )
        build_api(ctx)
    return app


def launch_kwargs(ctx: AppContext) -> dict:
    """What Gradio needs: theme, each panel's CSS and keyboard script, the image folder.

    Only the images are served from disk (named by their SHA-256); files made for a user go through
    ui.kit.downloads, never through a served folder.
    """
    # ui/js/keys.js first: the panels' scripts take its helpers as they load
    ordered = sorted((ASSETS / "js").glob("*.js"), key=lambda p: (p.name != "keys.js", p.name))
    scripts = "".join(f"<script>{p.read_text(encoding='utf-8')}</script>" for p in ordered)
    return {
        "css_paths": sorted((ASSETS / "css").glob("*.css")),
        "head": scripts or None,
        "allowed_paths": [str(ctx.store.data_dir / "images")],
        "theme": gr.themes.Soft(),
    }
