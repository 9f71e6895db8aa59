"""QC dashboard: agreement per field with intervals, annotator quality, consensus states, studies.

It shows other annotators' labels (pairwise matrices, agreement with consensus), so it is for
adjudicators and admins: an annotator gets one line and no figures, and every handler checks the
role again because Gradio exposes each event over HTTP. Only admins draw agreement studies. The
figures are computed when the tab is opened (not on page load), then on demand. Everything it
shows comes from services.reports and services.studies.
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr
import pandas as pd
from gradio.context import Context

from services import reports
from services.errors import ServiceError
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.outputs import Outputs
from ui.kit.progress import background, on_status
from ui.kit.qc_views import agreement_view, offer_report, qc_frame
from ui.panels import gold as gold_section
from ui.panels import planner
from ui.panels import studies as studies_section
from ui.render import escape_text

__all__ = ["build", "on_open", "on_show"]

REVIEWERS_ONLY = (
    "The QC dashboard is only for adjudicators and admins: it shows other annotators' labels, and "
    "annotators work blind. Ask an admin if you need a different role."
)
BOOT_CHOICES = [200, 1000, 2000]
TABLE2_LABEL = (
    "ProcessBench Table 2 (this dataset): each subset split by the consensus label; shares of the "
    "retained items; 3/n = settled with exactly n annotators"
)
_BY_TYPE = {
    "group": "error type",
    "field": "field",
    "n_items": "n",
    "observed_agreement": "OA",
    "gwet_ac1": "AC1",
    "fleiss_kappa": "Fleiss κ",
    "krippendorff_alpha": "Kripp. α",
}
_QUALITY = {
    "annotator": "annotator",
    "field": "field",
    "items": "items done",
    "median_seconds": "median s/item",
    "compared": "items compared",
    "agreement": "agreement with consensus",
    "kappa": "Cohen's kappa with consensus",
    "flags": "flags",
}
_POSITION = {
    "position": "earliest error at",
    "n_items": "items",
    "observed_agreement": "exact agreement",
    "within_1_step": "within ±1 step",
}
# ----- mapping results to what the components show (formatting only)


def _table(frame: pd.DataFrame, columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Rounded text cells with the user's column names; NaN says "n/a" (an undefined figure)."""
    out = frame[list(columns)].rename(columns=columns) if columns else frame.copy()
    for name in out.columns:
        if pd.api.types.is_float_dtype(out[name]):
            out[name] = [("n/a" if pd.isna(v) else f"{v:.3f}") for v in out[name]]
    return out.astype(str)


def _status_line(report: reports.Report) -> str:
    tables = report.tables
    return (
        f"**{escape_text(tables.scope)}** ({tables.task}): {tables.n_labels} labels by "
        f"{len(tables.annotators)} annotators · {tables.n_boot} bootstrap replicates, {tables.ci_label} intervals "
        f"(Wilson for agreement shares; {escape_text(tables.interval_coverage)}) · "
        f"computed in {tables.seconds_to_compute:.2f} s"
    )


def _warning(report: reports.Report) -> dict:
    text = report.warning  # field names and numbers only: no dataset text
    return gr.update(value=f"⚠ {html.escape(text, quote=False)}" if text else "", visible=bool(text))


def _choices(ctx: AppContext, picked: str | None) -> tuple[dict, str | None]:
    names = reports.dataset_names(ctx.store)
    value = picked if picked in names else (names[0] if names else None)
    return gr.update(choices=names, value=value), value


# ----- handlers

# What showing a dataset's figures fills, by name (ui.kit.outputs).
SHOW = (
    "refusal",
    "content",
    "dataset",
    "status",
    "warning",
    "agreement",
    "position_box",
    "position",
    "by_type_plot",
    "by_type",
    "heatmap",
    "time_plot",
    "quality",
    "states_dataset",
    "table2",
    "gating",
    "dl_md",
    "dl_csv",
    "dl_json",
)


def _refused() -> dict[str, Any]:
    """For annotators: the message, and nothing computed from anyone's labels."""
    empty = pd.DataFrame()
    return {
        "refusal": gr.update(visible=True),
        "content": gr.update(visible=False),
        "status": "",
        "warning": gr.update(value="", visible=False),
        "agreement": "",
        "position_box": gr.update(visible=False),
        "position": empty,
        "by_type_plot": None,
        "by_type": empty,
        "heatmap": None,
        "time_plot": None,
        "quality": empty,
        "states_dataset": empty,
        "table2": empty,
        "gating": empty,
        "dl_md": None,
        "dl_csv": None,
        "dl_json": None,
    }


def _empty_with(picker: dict, message: str) -> dict[str, Any]:
    """The content area with a message instead of figures (no dataset, or the report failed)."""
    return {
        **_refused(),
        "refusal": gr.update(visible=False),
        "content": gr.update(visible=True),
        "dataset": picker,
        "status": message,
    }


def on_show(ctx: AppContext, dataset: str | None, n_boot: int | None, request: gr.Request) -> dict[str, Any]:
    """Compute every dashboard figure for the dataset and write the report files for download."""
    user = require_user(ctx, request)
    if not user.can_see_labels:
        return _refused()
    picker, dataset = _choices(ctx, dataset)
    if dataset is None:
        return _empty_with(picker, "No datasets yet: import one in Data.")
    n_boot = int(n_boot) if n_boot in BOOT_CHOICES else 1000
    try:
        report = reports.dataset_report(ctx.store, user, dataset, n_boot=n_boot)
        links = offer_report(ctx, user, report)
    except ServiceError as exc:
        return _empty_with(picker, escape_text(str(exc)))
    figures, tables = reports.figures(report), report.tables
    md, csv, json_link = links
    return {
        "refusal": gr.update(visible=False),
        "content": gr.update(visible=True),
        "dataset": picker,
        "status": _status_line(report),
        "warning": _warning(report),
        "agreement": agreement_view(report),
        "position_box": gr.update(visible=len(tables.by_position) > 0),
        "position": _table(tables.by_position, _POSITION) if len(tables.by_position) else pd.DataFrame(),
        "by_type_plot": figures.by_error_type,
        "by_type": _table(tables.by_error_type, _BY_TYPE),
        "heatmap": figures.heatmap,
        "time_plot": figures.time_per_item,
        "quality": _table(tables.quality, _QUALITY),
        "states_dataset": _table(tables.states_by_dataset),
        "table2": gr.update(value=report.table2, visible=not report.table2.empty),
        "gating": _table(tables.gating),
        "dl_md": md,
        "dl_csv": csv,
        "dl_json": json_link,
    }


def on_open(ctx: AppContext, request: gr.Request) -> tuple:
    """Page load: reviewers get the dataset list (the studies section loads its own); annotators one line."""
    user = require_user(ctx, request)
    if not user.can_see_labels:
        return gr.update(visible=True), gr.update(visible=False), gr.skip()
    picker, _ = _choices(ctx, None)
    return gr.update(visible=False), gr.update(visible=True), picker


# ----- layout


def _opening_event() -> Any:
    """The tab's select: figures are computed when someone opens the dashboard, not on every page load."""
    block = Context.block
    return block.select if isinstance(block, gr.Tab) else Context.root_block.load  # type: ignore[union-attr]


def build(ctx: AppContext) -> None:
    opened = _opening_event()
    refusal = gr.Markdown(REVIEWERS_ONLY, visible=False, elem_id="qc-refusal")
    with gr.Column(visible=False, elem_id="qc-content") as content:
        with gr.Row(equal_height=True, elem_id="qc-controls"):
            dataset = gr.Dropdown([], label="Dataset", scale=3, elem_id="qc-dataset")
            n_boot = gr.Radio(
                BOOT_CHOICES, value=1000, label="Bootstrap replicates", scale=2, elem_id="qc-boot"
            )
            refresh = gr.Button("Recompute", scale=1, elem_id="qc-refresh", elem_classes=["qc-action"])
        status = gr.Markdown("Open this tab to compute the figures.", elem_id="qc-status")
        warning = gr.Markdown("", visible=False, elem_id="qc-warning")
        gr.Markdown("### Agreement per field", elem_classes=["qc-heading"])
        agreement = gr.HTML("", elem_id="qc-agreement")
        with gr.Column(visible=False, elem_id="qc-position-box") as position_box:
            gr.Markdown(
                "#### Earliest error: agreement by step position (items grouped by their most-chosen step)"
            )
            position = qc_frame("qc-position", show_label=False)
        gr.Markdown("### Agreement by error type", elem_classes=["qc-heading"])
        with gr.Row():
            by_type_plot = gr.Plot(format="png", show_label=False, elem_id="qc-by-type-plot", scale=1)
            by_type = qc_frame(
                "qc-by-type",
                show_label=False,
                max_height=430,
                scale=1,
                column_widths=["27%", "17%", "8%", "12%", "12%", "12%", "12%"],
            )
        gr.Markdown("### Annotators", elem_classes=["qc-heading"])
        with gr.Row():
            heatmap = gr.Plot(format="png", show_label=False, elem_id="qc-heatmap")
            time_plot = gr.Plot(format="png", show_label=False, elem_id="qc-time-plot")
        quality = qc_frame("qc-quality", show_label=False, max_height=360)
        gr.Markdown(f"Outlier rules: {reports.OUTLIER_RULES}", elem_classes=["qc-note"])
        gr.Markdown("### Consensus states, rejections and regeneration", elem_classes=["qc-heading"])
        with gr.Row():
            states_dataset = qc_frame("qc-states-dataset", label="Items per state, by dataset", scale=3)
            gating = qc_frame("qc-gating", label="Sent back", scale=2)
        table2 = qc_frame("qc-table2", label=TABLE2_LABEL, visible=False)
        gr.Markdown("### Download the report", elem_classes=["qc-heading"])
        with gr.Row(elem_id="qc-downloads"):
            dl_md = gr.HTML("", elem_id="qc-download-md")
            dl_csv = gr.HTML("", elem_id="qc-download-csv")
            dl_json = gr.HTML("", elem_id="qc-download-json")
        studies_section.build(ctx, dataset, n_boot)
        planner.build(ctx)
        gold_section.build(ctx, dataset)

    private = {"api_visibility": "private"}
    shown = Outputs(
        refusal=refusal,
        content=content,
        dataset=dataset,
        status=status,
        warning=warning,
        agreement=agreement,
        position_box=position_box,
        position=position,
        by_type_plot=by_type_plot,
        by_type=by_type,
        heatmap=heatmap,
        time_plot=time_plot,
        quality=quality,
        states_dataset=states_dataset,
        table2=table2,
        gating=gating,
        dl_md=dl_md,
        dl_csv=dl_csv,
        dl_json=dl_json,
    )
    gr.on(None, bind(on_open, ctx), None, [refusal, content, dataset], **background(), **private)
    gr.on(
        [opened, refresh.click, dataset.input, n_boot.input],
        shown.bind(on_show, ctx),
        [dataset, n_boot],
        list(shown),
        **on_status(status),
        **private,
    )
