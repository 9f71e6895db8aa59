"""QC dashboard section "Plan a study": how many items (and raters) an agreement interval needs.

Inputs (statistic, expected value, category shares, raters, confidence, wanted half-width), the
answer and a plot of half-width against items and raters, from services.planning. The seed papers'
studies open as presets. Planning reads no labels; the section lives in the reviewers' dashboard.
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr
import pandas as pd

from services import planning
from services.errors import ServiceError
from ui.auth import require_reviewer
from ui.binding import bind
from ui.context import AppContext
from ui.kit.table import Table

__all__ = ["build", "on_plan", "on_preset", "on_sequential"]

STATISTIC_CHOICES = [
    ("observed agreement (Wilson, exact)", "observed_agreement"),
    ("Cohen's kappa (2 raters, simulation)", "cohen_kappa"),
    ("Fleiss' kappa (simulation)", "fleiss_kappa"),
    ("Krippendorff's alpha (simulation)", "krippendorff_alpha"),
]
PRESET_CHOICES = [("your own study", "")] + [(p.name, key) for key, p in planning.PRESETS.items()]
HELP = (
    "How many items does an agreement study need for the precision you want? Observed agreement is "
    "planned exactly with the Wilson interval; the coefficients by seeded simulation from the expected "
    "shares and agreement (the simulation error is stated): the size found is simulated again on draws of "
    "its own and stepped up until its half-width, with the simulation's error, is within the target, and "
    "the half-width re-measured there is shown beside it. Open a seed paper's study as a preset to see "
    "the interval it had."
)


def _answer(result: planning.Plan) -> str:
    lines = [html.escape(line, quote=False) for line in result.summary().splitlines()]
    lines[1] = f"**{lines[1]}**"
    return "\n\n".join(lines)


def _series(result: planning.Plan) -> pd.DataFrame:
    frame = result.by_items.assign(
        half_width=[f"{v:.4f}" for v in result.by_items["half_width"]],
        sim_error=[f"{v:.4f}" for v in result.by_items["sim_error"]],
    )
    return frame.rename(
        columns={"items": "items", "half_width": "half-width", "sim_error": "simulation error"}
    ).astype(str)


def on_plan(
    ctx: AppContext,
    statistic: str,
    expected: float | None,
    half_width: float | None,
    shares: str,
    raters: float | None,
    confidence: float | None,
    items: float | None,
    seed: float | None,
    level: str,
    request: gr.Request,
) -> tuple[str, Any, Any]:
    """The plan for what was typed; a bad input says which and changes nothing."""
    require_reviewer(ctx, request)
    if expected is None or half_width is None:
        return "Give the expected value and the half-width you want.", gr.skip(), gr.skip()
    try:
        result = planning.plan(
            statistic=statistic,
            expected=float(expected),
            half_width=float(half_width),
            shares=shares or "",
            raters=int(raters or 2),
            confidence=float(confidence or 0.95),
            items=int(items) if items else None,
            seed=int(seed or 0),
            level=level or "nominal",
        )
    except ServiceError as exc:
        return f"Not planned: {html.escape(str(exc), quote=False)}", gr.skip(), gr.skip()
    return _answer(result), planning.figure(result), _series(result)


def on_preset(ctx: AppContext, key: str, request: gr.Request) -> tuple[Any, ...]:
    """Fill the inputs with a seed paper's study and plan it."""
    require_reviewer(ctx, request)
    if not key:
        return (gr.skip(),) * 10
    try:
        result = planning.preset(key)
    except ServiceError as exc:
        return (f"Not planned: {html.escape(str(exc), quote=False)}", *(gr.skip(),) * 9)
    p = planning.PRESETS[key]
    note = f"*{html.escape(p.name, quote=False)}* ({html.escape(p.source, quote=False)})\n\n"
    return (
        note + _answer(result),
        planning.figure(result),
        _series(result),
        p.statistic,
        p.expected,
        p.half_width,
        ",".join(f"{v:g}" for v in p.shares),
        p.raters,
        0.95,
        p.items,
    )


def on_sequential(
    ctx: AppContext,
    study: str,
    target: float | None,
    batch: float | None,
    cap: float | None,
    adjusted: bool,
    request: gr.Request,
) -> str:
    """A drawn study under a stopping rule: stopped by the target, by the cap, or the next batch due."""
    user = require_reviewer(ctx, request)
    try:
        field, result = planning.sequential_study(
            ctx.store,
            user,
            (study or "").strip(),
            target=float(target or 0),
            batch=int(batch or 0),
            cap=int(cap) if cap else None,
            adjust="bonferroni" if adjusted else "none",
        )
    except ServiceError as exc:
        return f"Not checked: {html.escape(str(exc), quote=False)}"
    return html.escape(f"Field {field}: {result.note()}", quote=False)


def build(ctx: AppContext) -> None:
    with gr.Accordion("Plan a study", open=False, elem_id="qc-planner"):
        gr.Markdown(HELP, elem_classes=["qc-note"])
        preset = gr.Dropdown(PRESET_CHOICES, value="", label="Preset", elem_id="plan-preset")
        with gr.Row(equal_height=True):
            statistic = gr.Dropdown(
                STATISTIC_CHOICES, value="observed_agreement", label="Statistic", elem_id="plan-statistic"
            )
            expected = gr.Number(0.9, label="Expected value", elem_id="plan-expected")
            shares = gr.Textbox("0.5,0.5", label="Category shares", elem_id="plan-shares")
            raters = gr.Number(2, label="Raters", precision=0, minimum=2, maximum=50, elem_id="plan-raters")
            level = gr.Dropdown(
                list(planning.LEVELS), value="nominal", label="Level (alpha)", elem_id="plan-level"
            )
        with gr.Row(equal_height=True):
            confidence = gr.Number(0.95, label="Confidence", elem_id="plan-confidence")
            half_width = gr.Number(0.05, label="Half-width wanted", elem_id="plan-half-width")
            items = gr.Number(None, label="Also at N items (optional)", precision=0, elem_id="plan-items")
            seed = gr.Number(0, label="Seed", precision=0, elem_id="plan-seed")
            go = gr.Button("Plan", variant="primary", elem_id="plan-go", elem_classes=["qc-action"])
        answer = gr.Markdown("", elem_id="plan-answer")
        plot = gr.Plot(format="png", show_label=False, elem_id="plan-plot")
        series = Table(
            interactive=False, label="Half-width by items", elem_id="plan-series", elem_classes=["qc-table"]
        )
        gr.Markdown(
            "**Sequential study**: look at a drawn study's finished items in batches and stop when the "
            "interval reaches the target width (or at the cap).",
            elem_classes=["qc-note"],
        )
        with gr.Row(equal_height=True):
            seq_study = gr.Textbox(label="Study", scale=2, elem_id="seq-study")
            seq_target = gr.Number(0.05, label="Target half-width", elem_id="seq-target")
            seq_batch = gr.Number(20, label="Batch", precision=0, minimum=1, elem_id="seq-batch")
            seq_cap = gr.Number(None, label="Cap (default: the study's size)", precision=0, elem_id="seq-cap")
            seq_adjusted = gr.Checkbox(True, label="Interval valid under stopping", elem_id="seq-adjusted")
            seq_go = gr.Button("Check", elem_id="seq-go", elem_classes=["qc-action"])
        seq_answer = gr.Markdown("", elem_id="seq-answer")
    private = {"api_visibility": "private"}
    seq_go.click(
        bind(on_sequential, ctx),
        [seq_study, seq_target, seq_batch, seq_cap, seq_adjusted],
        [seq_answer],
        **private,
    )
    go.click(
        bind(on_plan, ctx),
        [statistic, expected, half_width, shares, raters, confidence, items, seed, level],
        [answer, plot, series],
        **private,
    )
    preset.input(
        bind(on_preset, ctx),
        [preset],
        [answer, plot, series, statistic, expected, half_width, shares, raters, confidence, items],
        **private,
    )
