"""Step-match study: CRYSTAL's metric validation (supplementary S5), blind, one pair at a time.

The annotator reads a predicted step and a reference step and labels them match / no-match. Nothing
the annotator receives carries the encoder's similarity, band or decision: handlers return the two
texts, the item's neutral id and the annotator's own progress only. Adjudicators and admins open the
report (CRYSTAL's Table S1, human-human agreement, the calibrated threshold) below.
"""

from __future__ import annotations

import math
import shutil
from typing import Any

import gradio as gr
import pandas as pd

from services import step_match
from services.annotate import WorkItem
from services.errors import ServiceError
from services.records import Annotator, Dataset
from tasks import STEP_MATCH
from ui.context import AppContext
from ui.kit.annotation import AnnotationKit, Current, progress_line, quick_events
from ui.kit.downloads import export_folder, offer_export
from ui.kit.keymap import keys_reminder
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.render import LATEX_DELIMITERS, escape_text, safe_markdown

__all__ = [
    "build",
    "on_choose",
    "on_report",
    "on_report_file",
    "on_save",
    "on_tab_open",
]

CHOICES = [("Match (m)", "match"), ("No match (n)", "no_match")]
TITLES = dict((value, title.split(" (")[0]) for title, value in CHOICES)
SHORTCUTS = keys_reminder("Step-match study")
NO_DATASET = "No step-match study yet: an admin samples one in the Data tab (Step-match study)."
ITEM = ("header", "question", "predicted", "reference", "choice", "status", "progress", "current")
REPORT = ("report_note", "table", "sampling", "models", "humans", "calibration", "disagreements")


def _text(text: str) -> str:
    """Dataset text as every panel shows it (ui.render): math typeset, prices and markup left as text."""
    return safe_markdown(text) or "_(empty)_"


def _show(
    ctx: AppContext,
    user: Annotator,
    dataset: Dataset,
    shown: WorkItem | None,
    message: str,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The pair's two texts and the user's own progress: nothing else of the item (blind). An unsaved
    choice of this user's comes back from the server."""
    if shown is None:
        return {
            "header": f"**Nothing left for you in {escape_text(dataset.name)}.** Thank you.",
            "question": "",
            "predicted": "",
            "reference": "",
            "choice": gr.Radio(value=None),
            "status": message,
            "progress": progress_line(counts or {}, "pairs"),
            "current": Current.none_in(dataset),
        }
    item = shown.item
    mine = (shown.my_label or {}).get("match")
    where = f"**Pair {escape_text(item.external_id)}** · {shown.position} of {shown.progress.get('total', 0)}"
    if shown.state == "done":
        where += f" · you labelled it **{TITLES.get(str(mine), mine)}**"
    current = Current.opened(dataset, shown, named=False)
    draft = KIT.draft(ctx, user, current) if shown.state != "done" else None
    if draft in TITLES:
        where += " · resumed with your unsaved choice"
    return {
        "header": where,
        "question": f"**Question:** {safe_markdown(item.question)}" if item.question else "",
        "predicted": _text((item.steps.get("predicted") or [""])[0]),
        "reference": _text((item.steps.get("reference") or [""])[0]),
        "choice": gr.Radio(value=draft if draft in TITLES else mine),
        "status": message,
        "progress": progress_line(shown.progress, "pairs"),
        "current": current.state_dict(),
    }


KIT = AnnotationKit(STEP_MATCH, NO_DATASET, _show, noun="pair", save_moves_by_history=False, next_key=None)


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab gives the annotator their pair; the report is offered to reviewers only."""
    user = KIT.user(ctx, request)
    return KIT.on_tab(ctx, user, dataset, current, {"report_box": gr.Accordion(visible=user.can_see_labels)})


def on_choose(ctx: AppContext, choice: Any, state: Any, request: gr.Request) -> dict[str, Any]:
    """A click or key: kept as this user's draft on the server until it is saved. It answers nothing:
    with m then s typed at once, a late reply would overwrite the next pair's "saved" line."""
    user, current = KIT.user(ctx, request), Current.of(state)
    if choice not in TITLES or KIT.late(ctx, user, current):
        return {}  # no pair, or a click that reached the server after its pair was saved
    KIT.keep_draft(ctx, user, current, choice)
    return {}


def on_save(ctx: AppContext, choice: Any, state: Any, request: gr.Request) -> dict[str, Any]:
    """Store the label and show the next pair; the reply says "saved" and nothing about the pair."""
    user, current = KIT.user(ctx, request), Current.of(state)
    if not current.has_item:
        return KIT.status("There is no pair to save.", warn=True)
    if choice not in TITLES:
        return KIT.status("Nothing saved: choose Match (m) or No match (n), then save (s).", warn=True)
    try:
        dataset = KIT.dataset(ctx, current.dataset)
        receipt = KIT.submit(ctx, user, current, {"match": choice}, first=False)
        shown = KIT.following(ctx, user, current, dataset)
    except ServiceError as exc:
        return KIT.status(f"Not saved: {exc}", warn=True)
    saved = "Already saved" if receipt.duplicate else "Saved"
    return KIT.show(ctx, user, dataset, shown, f"✓ {saved}: **{TITLES[choice]}**.")


def _readable(table: pd.DataFrame) -> pd.DataFrame:
    out = table.reset_index()
    for column in out.columns:
        if column == "agreement":
            out[column] = [f"{v:.1%}" if not _nan(v) else "" for v in out[column]]
        elif column in ("kappa", "false_mean_similarity", "missed_mean_similarity"):
            out[column] = [f"{v:.3f}" if not _nan(v) else "" for v in out[column]]
    return out.rename(
        columns={
            "false_matches": "false matches",
            "missed_matches": "missed matches",
            "false_mean_similarity": "false: mean sim.",
            "missed_mean_similarity": "missed: mean sim.",
            "kappa": "Cohen's kappa",
        }
    )


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _num(value: float, fmt: str = ".3f") -> str:
    return "n/a" if _nan(value) else format(value, fmt)


def on_report(ctx: AppContext, dataset: str | None, request: gr.Request) -> dict[str, Any]:
    """Table S1 per band and overall, human-human agreement, the calibrated threshold (reviewers)."""
    user = KIT.user(ctx, request)
    try:
        report = step_match.study_report(ctx.store, user, dataset or "", ctx.encoder)
    except ServiceError as exc:
        return {"report_note": refusal(str(exc))}
    humans = report.humans
    cal = report.calibration
    calibration = "Calibration needs labelled pairs and the study's encoder."
    if cal is not None and not _nan(cal.threshold):
        calibration = (
            f"**Calibrated threshold for {escape_text(report.encoder)}: {cal.threshold:.2f}** "
            f"(95% interval {_num(cal.low, '.2f')}-{_num(cal.high, '.2f')}), where the encoder agrees best "
            f"with the humans: kappa {_num(cal.kappa)}, agreement {_num(cal.agreement, '.1%')}. Match F1 over "
            f"the study's examples: {_num(report.f1_at_tau)} at 0.35, {_num(report.f1_calibrated)} at "
            f"{cal.threshold:.2f}."
        )
    return {
        "report_note": (
            f"**{escape_text(report.dataset)}** · {report.labelled} of {report.pairs} pairs labelled "
            f"(human label: majority of annotators; ties left out). {escape_text(report.note)}"
        ),
        "table": _readable(report.table),
        "sampling": _readable(report.sampling),
        "models": _readable(report.models),
        "humans": (
            f"Human-human agreement over {humans.pairs} pairs with two or more labels "
            f"({humans.annotators} annotators): observed {_num(humans.observed, '.1%')}, "
            f"Fleiss' kappa {_num(humans.fleiss_kappa)}"
            + (f", Cohen's kappa {_num(humans.cohen_kappa)}" if not _nan(humans.cohen_kappa) else "")
            + "."
        ),
        "calibration": calibration,
        "disagreements": report.disagreements,
    }


def on_report_file(ctx: AppContext, dataset: str | None, fmt: str, request: gr.Request) -> dict[str, Any]:
    """The report (Table S1, naming its encoder) as a Markdown or CSV file for this reviewer only."""
    user = KIT.user(ctx, request)
    if fmt not in step_match.STUDY_REPORT_FORMATS:  # checked before it becomes part of a file name
        return {"report_note": refusal(f"choose a format: {', '.join(step_match.STUDY_REPORT_FORMATS)}")}
    folder = export_folder(ctx)
    out = folder / f"table-s1-{fmt}.{fmt}"
    try:
        step_match.study_report_file(ctx.store, user, dataset or "", fmt, out, ctx.encoder)
    except ServiceError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return {"report_note": refusal(str(exc)), "report_file": gr.update(value="", visible=False)}
    return {"report_file": gr.update(value=offer_export(ctx, user, out, None), visible=True)}


def build(ctx: AppContext, tab: gr.Tab) -> None:
    math_ = {"latex_delimiters": LATEX_DELIMITERS}
    with gr.Column(elem_id="sm-panel"):
        current = gr.State(None)
        with gr.Row(equal_height=True):
            header = gr.Markdown(elem_id="sm-header")
            dataset = gr.Dropdown(
                choices=[], show_label=False, container=False, scale=0, min_width=220, elem_id="sm-dataset"
            )
        question = gr.Markdown(elem_id="sm-question", **math_)
        with gr.Row(equal_height=True):
            with gr.Column():
                gr.Markdown("**Predicted step**")
                predicted = gr.Markdown(elem_id="sm-predicted", **math_)
            with gr.Column():
                gr.Markdown("**Reference step**")
                reference = gr.Markdown(elem_id="sm-reference", **math_)
        choice = gr.Radio(choices=CHOICES, label="Do the two steps say the same thing?", elem_id="sm-choice")
        with gr.Row():
            save = gr.Button("Save (s)", variant="primary", elem_id="sm-save")
            skip = gr.Button("Skip (x)", size="sm", elem_id="sm-skip")
        status = gr.Markdown(elem_id="sm-status")
        progress = gr.Markdown(elem_id="sm-progress")
        gr.Markdown(SHORTCUTS, elem_id="sm-keys")
        with gr.Accordion(
            "Study report (adjudicators and admins)", open=False, visible=False, elem_id="sm-report"
        ) as report_box:
            with gr.Row():
                refresh = gr.Button("Show the report", size="sm", elem_id="sm-report-refresh")
                report_fmt = gr.Dropdown(
                    [(title, key) for key, title in step_match.STUDY_REPORT_FORMATS.items()],
                    value="md",
                    label="Report file",
                    elem_id="sm-report-format",
                )
                download = gr.Button("Download the report", size="sm", elem_id="sm-report-download")
            report_file = gr.HTML("", visible=False, elem_id="sm-report-file")
            report_note = gr.Markdown(elem_id="sm-report-note")
            table = Table(label="Table S1: by similarity band", interactive=False, elem_id="sm-table")
            sampling = Table(label="By sampling band", interactive=False, elem_id="sm-sampling")
            models = Table(label="By model", interactive=False, elem_id="sm-models")
            humans = gr.Markdown(elem_id="sm-humans")
            calibration = gr.Markdown(elem_id="sm-calibration")
            disagreements = Table(
                label="False and missed matches", interactive=False, wrap=True, elem_id="sm-disagreements"
            )

    item = Outputs(
        header=header,
        question=question,
        predicted=predicted,
        reference=reference,
        choice=choice,
        status=status,
        progress=progress,
        current=current,
    )
    opened = Outputs(dataset=dataset, report_box=report_box, **item.components)
    report = Outputs(
        report_note=report_note,
        table=table,
        sampling=sampling,
        models=models,
        humans=humans,
        calibration=calibration,
        disagreements=disagreements,
    )
    private = quick_events()
    tab.select(opened.bind(on_tab_open, ctx), [dataset, current], list(opened), **private)
    dataset.input(item.bind(KIT.on_dataset_change, ctx), [dataset, current], list(item), **private)
    choice.input(Outputs().bind(on_choose, ctx), [choice, current], [], trigger_mode="always_last", **private)
    save.click(item.bind(on_save, ctx), [choice, current], list(item), **private)
    skip.click(item.bind(KIT.on_skip, ctx), [current], list(item), **private)
    refresh.click(report.bind(on_report, ctx), [dataset], list(report), api_visibility="private")
    filed = Outputs(report_note=report_note, report_file=report_file)
    download.click(
        filed.bind(on_report_file, ctx), [dataset, report_fmt], list(filed), api_visibility="private"
    )
