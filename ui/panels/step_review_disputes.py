"""Disputed samples, for adjudicators: the annotators' judgements side by side, and a ruling.

A sample whose annotators tie (PRMBench-V keeps it only on Correct + Reasonable) is disputed: it
waits here for an adjudicator's Keep or Reject instead of silently dropping out of the export. The
section shows nothing to annotators and every handler checks the role (services.adjudicate).
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from services import adjudicate
from services.errors import ServiceError
from ui.auth import require_user
from ui.context import AppContext
from ui.kit import disputes
from ui.kit.messages import refusal, said
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.panels import step_review_render as view

__all__ = ["build", "on_list", "on_rule", "on_show"]

COLUMNS = ["annotator", "original", "modification", "difficulty", "note"]


def on_list(ctx: AppContext, dataset: str | None, request: gr.Request) -> dict[str, Any]:
    """The dataset's disputed samples to pick from (reviewers only; annotators get one line)."""
    return disputes.listing(ctx, dataset, request, "sample")


def on_show(ctx: AppContext, dataset: str | None, item_id: Any, request: gr.Request) -> dict[str, Any]:
    """One disputed sample: its steps and each annotator's judgement, side by side."""
    user = require_user(ctx, request)
    if not user.can_see_labels or item_id is None:
        return {"steps": "", "judgements": pd.DataFrame(columns=COLUMNS)}
    try:
        found = disputes.find(ctx, user, dataset, item_id)
    except (ServiceError, ValueError, TypeError) as exc:
        return {"status": refusal(str(exc))}
    if found is None:
        return {"status": said("That sample is no longer disputed."), "steps": ""}
    item = found.item
    rows = [[who, *(str(label.get(c, "")) for c in COLUMNS[1:])] for who, label in found.judgements]
    steps = view.steps_html(
        item.steps.get("original", []), item.steps.get("modified", []), item.error_steps, item.modified_steps
    )
    return {"steps": steps, "judgements": pd.DataFrame(rows, columns=COLUMNS)}


def on_rule(
    ctx: AppContext, dataset: str | None, item_id: Any, ruling: str, note: str, request: gr.Request
) -> dict[str, Any]:
    """Keep or reject the sample; the ruling is stored in the log and settles it at once."""
    user = require_user(ctx, request)
    if item_id is None:
        return {"status": refusal("Pick a disputed sample first.")}
    try:
        outcome = adjudicate.rule(ctx.store, user, int(item_id), ruling, (note or "").strip())
    except (ServiceError, ValueError, TypeError) as exc:
        return {"status": refusal(f"Not settled: {exc}")}
    listed = on_list(ctx, dataset, request)
    word = "kept" if outcome == "complete" else "rejected"
    return {**listed, "status": said(f"Settled: {word}. {listed['status']}"), "note": ""}


def build(ctx: AppContext, dataset: gr.Dropdown) -> gr.Accordion:
    with gr.Accordion("Disputed samples (adjudicators)", open=False, elem_id="step-review-disputes") as box:
        with gr.Row(equal_height=True):
            pick = gr.Dropdown([], label="Disputed sample", elem_id="step-review-dispute-pick", scale=3)
            refresh = gr.Button("Refresh", elem_id="step-review-dispute-refresh", scale=1, size="sm")
        status = gr.Markdown(elem_id="step-review-dispute-status")
        judgements = Table(
            headers=COLUMNS, interactive=False, label="Judgements", elem_id="step-review-dispute-judgements"
        )
        steps = gr.Markdown(elem_id="step-review-dispute-steps")
        note = gr.Textbox(label="Reason (optional)", lines=1, elem_id="step-review-dispute-note")
        with gr.Row():
            keep = gr.Button("Keep", variant="primary", elem_id="step-review-dispute-keep")
            reject = gr.Button("Reject", variant="stop", elem_id="step-review-dispute-reject")
    listing = Outputs(status=status, pick=pick)
    showing = Outputs(status=status, steps=steps, judgements=judgements)
    ruling = Outputs(status=status, pick=pick, note=note)
    private = {"api_visibility": "private"}
    for event in (box.expand, refresh.click):
        event(listing.bind(on_list, ctx), [dataset], list(listing), **private)
    pick.change(showing.bind(on_show, ctx), [dataset, pick], list(showing), **private)
    for button, word in ((keep, "keep"), (reject, "reject")):
        verdict = gr.State(word)
        button.click(ruling.bind(on_rule, ctx), [dataset, pick, verdict, note], list(ruling), **private)
    return box
