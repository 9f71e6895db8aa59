"""One way to tell a user something went wrong: a toast and the panel's status line, both escaped.

The message may quote dataset ids, file lines or what the user typed, so it is always text, never
markup.
"""

from __future__ import annotations

import html

import gradio as gr

from ui.render import escape_text

__all__ = ["refusal", "said"]


def refusal(message: str) -> str:
    """A warning toast and the status line's text for a request that was refused (nothing stored)."""
    gr.Warning(html.escape(message), duration=6)
    return "⚠ " + escape_text(message)


def said(message: str) -> str:
    """A status line from plain text (no toast)."""
    return escape_text(message)
