"""Earliest error (ProcessBench protocol)."""

from __future__ import annotations

import gradio as gr

from ui.context import AppContext

__all__ = ["build"]


def build(ctx: AppContext) -> None:
    gr.Markdown("Earliest error (ProcessBench protocol): planned.", elem_classes=["planned"])
