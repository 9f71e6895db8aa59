"""Where an event shows that it runs (Gradio's show_progress_on), chosen in one place for every panel.

Gradio's page keeps a loading status for every component that an event of the page has shown progress
on or read as an input, for as long as the page is open, and at the start and the end of every later
event it applies all of them again: each a search of the whole component tree (the app has several
hundred components) and a copy of the component's props, and for a layout block of every component
inside it. A status nobody looks at is paid on every click of the day (bench/browser.py: the Data and
dashboard panels' load events made most of a save's time in the browser). So an event that runs while
its panel is not in view shows its progress nowhere, and an event that fills a whole panel (a tab's
opening, a refresh) shows it on that panel's status line only. An annotation panel's quick events show
none: the page's own busy mark (ui/js/busy.js) says when one is slow (ui/kit/annotation.quick_events).
"""

from __future__ import annotations

from typing import Any

__all__ = ["background", "on_status"]


def background() -> dict[str, Any]:
    """An event whose progress Gradio shows nowhere: a background one (a panel's load, a change its load
    sets off), or a quick one, which the page's busy mark covers."""
    return {"show_progress_on": []}


def on_status(status: Any, show_progress: str = "minimal") -> dict[str, Any]:
    """An event that fills many outputs: its progress on the panel's one status line (a tab's opening
    with its progress on all its outputs made every later click in the page copy each of them twice)."""
    return {"show_progress": show_progress, "show_progress_on": [status]}
