"""Data (import, annotators and roles, quorum settings, export)."""

from __future__ import annotations

import gradio as gr

from ui.context import AppContext

__all__ = ["build"]


def build(ctx: AppContext) -> None:
    gr.Markdown("Data (import, annotators and roles, quorum settings, export): planned.", elem_classes=["planned"])
