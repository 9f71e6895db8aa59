"""Each role's page: the app's page with the tabs the role may not open left empty.

The browser builds every component and event of the page it is sent, shown or not, before the first
load event runs: with all eleven panels, an annotator's page took about 1.1 s of the browser's CPU
to start (Gradio's `traverse`, `postprocess`, `find_attached_events` over 659 components and 142
events) and ran the load events of five panels it hides. Their page keeps the tabs they may open
(services.access.may_open_panel), an empty tab for each other one (the load event still names every
tab, to hide it), and only the events whose every component is on the page.

One Blocks serves them all, as Gradio's own pages (`Blocks.route`, kept out of Gradio's navbar):
/annotate for annotators, /review for adjudicators, / (the whole app) for admins; the guard sends
each user to their own (ui/web/guard.py). The events keep their ids and their handlers, which check
the role themselves, as before: what changes is only what the browser builds.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import access
from services.records import ROLES, Annotator
from ui import panels

__all__ = ["PAGES", "declare_role_pages", "fill_role_pages", "page_for", "role_page"]

_WHOLE_APP = ""  # Gradio's own page
# A role's page by the audiences (ui.panels.PANELS) whose tabs it shows; one that shows all is the whole app.
_BY_AUDIENCES = {("everyone",): "annotate", ("everyone", "reviewers"): "review"}
PAGES = (_WHOLE_APP, *_BY_AUDIENCES.values())


def _audiences(user: Annotator) -> tuple[str, ...]:
    """The audiences whose tabs the user may open, in the order the panels first name them."""
    named = dict.fromkeys(audience for _, _, audience in panels.PANELS)
    return tuple(audience for audience in named if access.may_open_panel(user, audience))


def page_for(user: Annotator) -> str:
    """The path (without its slash) of the user's role's page."""
    return _BY_AUDIENCES.get(_audiences(user), _WHOLE_APP)


def _tab_ids(config: dict[str, Any]) -> dict[str, int]:
    """Each panel's tab component id, by its elem_id (ui.panels.tab_elem_id); a page built
    without a panel (a test's small app) has nothing of it to leave out."""
    by_elem = {c["props"].get("elem_id"): c["id"] for c in config["components"] if c.get("type") == "tabitem"}
    tabs = {title: by_elem.get(panels.tab_elem_id(module)) for title, module, _ in panels.PANELS}
    return {title: tab for title, tab in tabs.items() if tab is not None}


def _nodes(node: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Every layout node below and with `node`, by id."""
    found = {node["id"]: node}
    for child in node.get("children", []) or []:
        found |= _nodes(child)
    return found


def _pruned(node: dict[str, Any], emptied: set[int]) -> dict[str, Any]:
    """The layout with the emptied tabs' children left out."""
    if node["id"] in emptied:
        return {"id": node["id"], "children": []}
    if "children" not in node:
        return node
    return {"id": node["id"], "children": [_pruned(child, emptied) for child in node["children"]]}


def role_page(config: dict[str, Any], hidden: list[str]) -> dict[str, Any]:
    """Gradio's page entry (layout, component ids, event ids) for a role that may not open the tabs
    titled `hidden`: their contents out, and every event that names any of it or is one of their own."""
    tabs = _tab_ids(config)
    emptied = {tabs[title] for title in hidden if title in tabs}
    nodes = _nodes(config["layout"])
    dropped = {inner for tab in emptied for inner in _nodes(nodes[tab]) if inner != tab}
    events = []
    for event in config["dependencies"]:
        targets = {target[0] for target in event["targets"]}
        if {*targets, *event["inputs"], *event["outputs"]} & dropped or targets & emptied:
            continue
        events.append(event["id"])
    kept = set(events)
    for event in config["dependencies"]:
        after = event.get("trigger_after")
        if event["id"] in kept and after is not None and after not in kept:
            raise ValueError(f"event {event['id']} follows event {after}, which the page leaves out")
    return {
        "layout": _pruned(config["layout"], emptied),
        "components": [c["id"] for c in config["components"] if c["id"] not in dropped],
        "dependencies": events,
    }


def _roles() -> dict[str, Annotator]:
    """One user of each role whose page is not the whole app, by page."""
    users = (Annotator(0, role, role, True) for role in ROLES)
    return {page_for(user): user for user in users if page_for(user) != _WHOLE_APP}


def declare_role_pages(blocks: gr.Blocks) -> None:
    """The roles' pages as Gradio pages, so Gradio serves each at its path (before mounting the app)."""
    for page in _roles():
        blocks.route(page.capitalize(), f"/{page}", show_in_navbar=False)
    blocks.current_page = _WHOLE_APP  # a component made later belongs to the whole app, as before


def fill_role_pages(blocks: gr.Blocks) -> None:
    """Each role's page in the served config (after mounting: Gradio makes the config then)."""
    config = blocks.config
    assert config is not None, "mount the app first: Gradio makes its config then"
    roles = _roles()
    for page, user in roles.items():
        hidden = [title for title, _, audience in panels.PANELS if not access.may_open_panel(user, audience)]
        config["page"][page] = role_page(config, hidden)
    # The browser shows Gradio's navbar (a link to each page) whenever there is more than one page:
    # these are not places to go, so the page list the browser reads names the whole app only.
    config["pages"] = [entry for entry in config["pages"] if entry[0] not in roles]
