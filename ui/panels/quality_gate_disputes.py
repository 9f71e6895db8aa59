"""Disputed quality-gate items, for adjudicators: the two annotators' verdicts, criteria, reasons and
edited steps side by side, and a ruling (Accept / Reject, the criteria, a reason, which steps stand).

The ruling goes through services.adjudicate like step review's; it is final, and an accepted edit
becomes the item's new version. Annotators get one line and nothing else; every handler checks the
role again (the service does too).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import adjudicate
from services.errors import ServiceError
from tasks.quality_gate import CRITERIA, STEP_ROLE
from ui.auth import require_user
from ui.context import AppContext
from ui.kit import disputes
from ui.kit.messages import refusal, said
from ui.kit.outputs import Outputs
from ui.panels import quality_gate_render as view
from ui.render import escape_text, safe_markdown

__all__ = ["build", "on_list", "on_rule", "on_show", "side_by_side"]

OWN_STEPS = "the item's own steps"


def side_by_side(dispute: adjudicate.Dispute) -> str:
    """Each annotator's judgement in a column: verdict, failed criteria, reason, their step changes."""
    steps = dispute.item.steps.get(STEP_ROLE, [])
    columns = []
    for who, label in dispute.judgements:
        failed = ", ".join(f"{k.upper()} {CRITERIA[k].name}" for k in label.get("failed") or []) or "none"
        edited = label.get("edited_steps")
        changes = view.step_diff(steps, edited) if edited else ["- no edit"]
        incorrect = sorted(int(k) for k, v in (label.get("steps") or {}).items() if v == "incorrect")
        body = "\n".join(
            [
                f"**{escape_text(who)}**: **{escape_text(label.get('verdict'))}**",
                "",
                f"- failed: {failed}",
                f"- reason: {safe_markdown(label.get('reason')) or '—'}",
                f"- marked incorrect: {', '.join(map(str, incorrect)) or 'none'}",
                "",
                "**Steps**",
                "",
                *changes,
            ]
        )
        columns.append(f'<div class="qg-judgement">\n\n{body}\n\n</div>')
    item = dispute.item
    shown = "\n".join(f"{n}. {safe_markdown(text)}" for n, text in enumerate(steps, 1)) or "*(no steps)*"
    context = (
        f"**Question:** {safe_markdown(item.question)}  \n**Answer:** {safe_markdown(item.reference_answer) or '—'}"
        f"\n\n<details><summary>The item's own steps</summary>\n\n{shown}\n\n</details>\n\n"
    )
    return context + '<div class="qg-side-by-side">\n\n' + "\n\n".join(columns) + "\n\n</div>"


def on_list(ctx: AppContext, dataset: str | None, request: gr.Request) -> dict[str, Any]:
    return disputes.listing(ctx, dataset, request, "item")


def on_show(ctx: AppContext, dataset: str | None, item_id: Any, request: gr.Request) -> dict[str, Any]:
    user = require_user(ctx, request)
    if not user.can_see_labels or item_id is None:
        return {"judgements": "", "stands": gr.update(choices=[OWN_STEPS], value=OWN_STEPS)}
    try:
        found = disputes.find(ctx, user, dataset, item_id)
    except (ServiceError, ValueError, TypeError) as exc:
        return {"status": refusal(str(exc))}
    if found is None:
        return {"status": said("That item is no longer disputed."), "judgements": ""}
    editors = [who for who, label in found.judgements if label.get("edited_steps")]
    return {
        "judgements": side_by_side(found),
        "stands": gr.update(choices=[OWN_STEPS, *editors], value=editors[0] if editors else OWN_STEPS),
    }


def on_rule(
    ctx: AppContext,
    dataset: str | None,
    item_id: Any,
    ruling: str,
    criteria: Any,
    stands: str,
    reason: str,
    request: gr.Request,
) -> dict[str, Any]:
    """Accept or reject the item; the chosen annotator's steps (or the item's own) stand."""
    user = require_user(ctx, request)
    if item_id is None:
        return {"status": refusal("Pick a disputed item first.")}
    try:
        found = disputes.find(ctx, user, dataset, item_id)
        if found is None:
            raise ServiceError("that item is no longer disputed")
        steps = next((lab.get("edited_steps") for who, lab in found.judgements if who == stands), None)
        details = {
            "criteria": {k: k in set(criteria or []) for k in CRITERIA},
            "reason": (reason or "").strip(),
            "edited_steps": steps,
        }
        outcome = adjudicate.rule(ctx.store, user, int(item_id), ruling, details=details)
    except (ServiceError, ValueError, TypeError) as exc:
        return {"status": refusal(f"Not settled: {exc}")}
    listed = on_list(ctx, dataset, request)
    return {
        **listed,
        "status": said(f"Settled: {outcome}. {listed['status']}"),
        "reason": "",
        "judgements": "",
    }


def build(ctx: AppContext, dataset: gr.Dropdown) -> gr.Accordion:
    with gr.Accordion(
        "Disputed items (adjudicators)", open=False, visible=False, elem_id="qg-disputes"
    ) as box:
        with gr.Row(equal_height=True):
            pick = gr.Dropdown([], label="Disputed item", elem_id="qg-dispute-pick", scale=3)
            refresh = gr.Button("Refresh", elem_id="qg-dispute-refresh", scale=1, size="sm")
        status = gr.Markdown(elem_id="qg-dispute-status")
        judgements = gr.Markdown(elem_id="qg-dispute-judgements")
        with gr.Row(equal_height=True):
            criteria = gr.CheckboxGroup(
                [(f"{k.upper()} {c.name}", k) for k, c in CRITERIA.items()],
                label="Criteria that hold",
                elem_id="qg-dispute-criteria",
                scale=3,
            )
            stands = gr.Radio(
                [OWN_STEPS], value=OWN_STEPS, label="Steps that stand", elem_id="qg-dispute-stands"
            )
        reason = gr.Textbox(label="Reason (needed to reject)", lines=1, elem_id="qg-dispute-reason")
        with gr.Row():
            accept = gr.Button("Accept", variant="primary", elem_id="qg-dispute-accept")
            reject = gr.Button("Reject", variant="stop", elem_id="qg-dispute-reject")
    listing = Outputs(status=status, pick=pick)
    showing = Outputs(status=status, judgements=judgements, stands=stands)
    ruling = Outputs(status=status, pick=pick, reason=reason, judgements=judgements)
    private = {"api_visibility": "private"}
    for event in (box.expand, refresh.click):
        event(listing.bind(on_list, ctx), [dataset], list(listing), **private)
    pick.change(showing.bind(on_show, ctx), [dataset, pick], list(showing), **private)
    for button, word in ((accept, "accept"), (reject, "reject")):
        verdict = gr.State(word)
        button.click(
            ruling.bind(on_rule, ctx),
            [dataset, pick, verdict, criteria, stands, reason],
            list(ruling),
            **private,
        )
    return box
