"""The Data panel's "Step-match study" tab (admins): upload predicted and reference example sets and
sample a study from them (CRYSTAL S5), the browser twin of `app.py study`.

The file is read and checked whole by services.step_match before anything is stored; a bad line is
named as `file:line`. The encoder is the app's (`serve --encoder`), and the outcome says which one
scored the pairs and whether it is CRYSTAL's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from services import step_match
from services.errors import ServiceError
from ui.auth import require_admin
from ui.context import AppContext
from ui.kit.messages import refusal, said
from ui.kit.outputs import Outputs

__all__ = ["build", "on_create_study"]

DECISIONS = ("assignment", "threshold")  # the encoder's decision: CRYSTAL's greedy assignment, or sim >= tau


def _numbers(text: Any, kind: type, what: str) -> list[Any]:
    try:
        return [kind(x) for x in str(text or "").replace(" ", "").split(",") if x]
    except ValueError:
        raise ValueError(f"{what}: numbers separated by commas, not {text!r}") from None


def on_create_study(
    ctx: AppContext,
    file: str | None,
    name: str,
    edges: str,
    counts: str,
    seed: Any,
    annotators: Any,
    decision: str,
    request: gr.Request,
) -> dict[str, Any]:
    """Sample the uploaded examples into a new step-match dataset, or say what is wrong and store nothing."""
    admin = require_admin(ctx, request)
    if not file:
        return {"study_status": refusal("Nothing sampled: choose an examples file (JSONL) first.")}
    path = Path(file)
    try:
        created = step_match.create_study_from_file(
            ctx.store,
            admin,
            ctx.encoder,
            path,
            name,
            shown_as=path.name,
            edges=_numbers(edges, float, "band edges"),
            counts=_numbers(counts, int, "pairs per band"),
            seed=int(seed or 0),
            annotators_per_item=int(annotators or 1),
            decision=decision if decision in DECISIONS else "assignment",
        )
    except (ServiceError, ValueError) as exc:
        return {"study_status": refusal(f"Nothing sampled. {exc}")}
    bands = ", ".join(f"{band}: {n}" for band, n in created.per_band.items())
    return {
        "study_status": said(
            f"✓ {created.dataset}: {created.pairs} pairs sampled from {created.candidates} ({bands}). "
            f"{created.note}"
        )
    }


def build(ctx: AppContext) -> None:
    """The tab's content; the caller opens the gr.Tab."""
    with gr.Row():
        upload = gr.File(
            label="Examples (JSONL: example, model, predicted, reference, optional question)",
            file_types=[".jsonl", ".json"],
            height=150,
            scale=2,
            elem_id="data-study-file",
        )
        with gr.Column(scale=3):
            with gr.Row():
                name = gr.Textbox(label="New study dataset", elem_id="data-study-name")
                decision = gr.Dropdown(
                    list(DECISIONS),
                    value="assignment",
                    label="Encoder's decision",
                    elem_id="data-study-decision",
                )
            with gr.Row():
                edges = gr.Textbox(
                    value="0.20,0.50", label="Band edges (half-open)", elem_id="data-study-edges"
                )
                counts = gr.Textbox(
                    value="33,33,34", label="Pairs per band, low to high", elem_id="data-study-counts"
                )
                seed = gr.Number(value=0, precision=0, label="Seed", elem_id="data-study-seed")
                annotators = gr.Number(
                    value=1,
                    precision=0,
                    minimum=1,
                    label="Annotators per pair",
                    elem_id="data-study-annotators",
                )
            run = gr.Button("Sample the study", variant="primary", elem_id="data-study-run")
    status = gr.Markdown("", elem_id="data-study-status", latex_delimiters=[])
    shown = Outputs(study_status=status)
    run.click(
        shown.bind(on_create_study, ctx),
        [upload, name, edges, counts, seed, annotators, decision],
        list(shown),
        api_visibility="private",
    )
