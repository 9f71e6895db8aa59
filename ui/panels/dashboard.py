"""QC dashboard (agreement, consensus, annotator quality)."""

from __future__ import annotations

import gradio as gr

from ui.context import AppContext

__all__ = ["build"]


def build(ctx: AppContext) -> None:
    gr.Markdown("QC dashboard (agreement, consensus, annotator quality): planned.", elem_classes=["planned"])
