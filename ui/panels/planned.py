"""Panels no issue has asked for yet: one line each saying what they will be."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr

from ui.context import AppContext

__all__ = ["PLANNED"]

PLANNED = {
    "quality_gate": "Quality gate (CRYSTAL phase 4 human gate): planned.",
}


def _panel(key: str) -> SimpleNamespace:
    def build(ctx: AppContext) -> None:
        gr.Markdown(PLANNED[key], elem_classes=["planned"])

    return SimpleNamespace(__name__=f"ui.panels.{key}", build=build)


quality_gate = _panel("quality_gate")
