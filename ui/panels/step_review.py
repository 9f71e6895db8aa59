"""Step review (PRMBench-V annotation tool)."""

from __future__ import annotations

import gradio as gr

from ui.context import AppContext

__all__ = ["build"]


def build(ctx: AppContext) -> None:
    gr.Markdown("Step review (PRMBench-V annotation tool): planned.", elem_classes=["planned"])
