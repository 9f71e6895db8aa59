"""The floor for the load rows: a trivial Gradio app served as stepgate is (FastAPI, Gradio mounted at
"/", uvicorn), with the same two API names whose handlers return a small dict at once.

    python -m bench.floor_app PORT
"""

from __future__ import annotations

import sys
from typing import Any

import fastapi
import gradio as gr
import uvicorn

__all__ = ["build"]


def next_item(dataset: str) -> dict[str, Any]:
    return {"item_id": 1, "version_id": 1, "question": "q", "steps": ["a", "b"], "progress": {}}


def submit_label(
    item_id: int, version_id: int, payload: dict, request_id: str, seconds: float
) -> dict[str, Any]:
    return {"annotation_id": 1, "duplicate": False, "saved": True}


def build() -> fastapi.FastAPI:
    with gr.Blocks() as blocks:
        gr.Markdown("floor")
        gr.api(next_item, api_name="next_item", queue=False)
        gr.api(submit_label, api_name="submit_label", queue=False)
    blocks.queue(default_concurrency_limit=8)
    return gr.mount_gradio_app(fastapi.FastAPI(), blocks, path="/")


if __name__ == "__main__":
    sys.setswitchinterval(0.0005)  # as app.py serve does
    uvicorn.run(build(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", timeout_keep_alive=75)
