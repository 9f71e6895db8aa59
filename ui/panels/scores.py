"""Scores: models scored against the gated labels, side by side, with their failure cases.

The scores hold the gold (every consensus label), so the tab is for adjudicators and admins; an
annotator gets one line. Admins upload a model's predictions here (the command line's
``predictions import``). Every figure comes from services.scores; a failure case links to the item
in Browse, where the gold and every label on it are shown.
"""

from __future__ import annotations

import html
import math
import secrets
import shutil
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from services import presets, reports, scores
from services import studies as study_service
from services.browse import BrowseFilter, query_for
from services.errors import ServiceError
from tasks import EARLIEST_ERROR, STEP_MATCH
from ui.auth import require_admin, require_reviewer, require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.outputs import Outputs
from ui.kit.progress import background, on_status
from ui.kit.table import Table
from ui.render import escape_text

__all__ = ["build", "on_failures", "on_import", "on_open", "on_preset", "on_show"]

REVIEWERS_ONLY = (
    "Scores are only for adjudicators and admins: they compare models with every consensus label, "
    "and annotators work blind."
)
HELP = (
    "Import a model's predictions (JSONL, one object per item): `id` and `earliest_error` (0-based, -1 = "
    "no error), `error_steps` (1-based), `step_scores` with `threshold` (on an MPBench answer-aggregation or "
    "process-search item: one score or list of step scores per candidate), or `step_confidences` (with "
    "`perturbed_confidences` for CRS, which counts only steps whose variant passed its check). Only kept "
    "items are scored. Shares in percent; F1 is ProcessBench's harmonic mean of the accuracies on "
    "erroneous and on correct items, Average F1 the mean over subsets (its Table 3)."
)
_MODELS = {
    "model": "model",
    "items": "items",
    "predicted": "predicted",
    "error_acc": "erroneous acc.",
    "correct_acc": "correct acc.",
    "f1": "F1",
    "average_f1": "Average F1",
    "strict_accuracy": "PRMBench-V acc.",
    "precision": "precision",
    "recall": "recall",
    "prmscore": "PRMScore",  # named with its convention where shown (_models_table)
    "crs": "CRS",
    "css": "CSS",
    "ccs": "CCS",
    "threshold": "threshold",
    "threshold_on": "threshold chosen on",
}
_SUBSETS = {
    "model": "model",
    "subset": "subset",
    "n_error": "n erroneous",
    "n_correct": "n correct",
    "error_acc": "erroneous acc.",
    "correct_acc": "correct acc.",
    "f1": "F1",
}
_PRMBENCH_V = {
    "model": "model",
    "error_type": "error type",
    "n_items": "items",
    "accuracy": "accuracy (strict)",
    "precision": "precision",
    "recall": "recall",
}
_MPBENCH = {
    "model": "model",
    "overall": "Overall",
    "delta": "Δ vs random",
    "fei": "FEI",
    "aei": "AEI (RMScore)",
    "sc_avg": "SC Avg",
    "bon": "BoN",
    "mv": "MV",
    "aa_avg": "AA Avg",
    "f1": "RPS F1",
    "mcc": "MCC",
    "rps_avg": "RPS Avg",
    "sc_items": "SC items",
    "aa_items": "AA items",
    "rps_items": "RPS items",
    "unscored": "unscored",
    "tie_rate": "ties",
}
_MPBENCH_DOMAINS = {
    "model": "model",
    "domain": "domain",
    "sc_avg": "SC Avg",
    "sc_vs_random": "SC − R",
    "aa_avg": "AA Avg",
    "aa_vs_random": "AA − R",
    "rps_avg": "RPS Avg",
    "rps_vs_random": "RPS − R",
}
MPBENCH_NOTE = (
    "MPBench's Table 2 from this dataset: items shaped like MPBench's (`meta.paradigm`; answer "
    "aggregation with `meta.candidates`, process search with `meta.correct_candidate`), predictions "
    "`step_scores` on its [-1, 1] scale (per candidate for AA and RPS). A step is predicted correct iff "
    "its score > 0 (or the file's `threshold`); AEI is 0.5 F1 + 0.5 negative F1 over the steps pooled, an "
    "undefined F1 counting 0 (MPBench's reading); a candidate's score is its lowest step score; RPS by "
    "pairwise argmax; ties broken with a fixed seed. SC Avg = (FEI + AEI)/2, AA Avg = (BoN + MV)/2, "
    "RPS Avg = (F1 + MCC)/2, Overall their mean from the six components, Δ = Overall − 31.8 (the "
    "paper's random row). A missing prediction counts as wrong (unscored). Table 3: each domain's Avg "
    "and its value minus the random value (29.6 / 40.9 / 25.0)."
)
_SIGNED = {"delta", "sc_vs_random", "aa_vs_random", "rps_vs_random"}
_PERCENT = {
    "error_acc",
    "correct_acc",
    "f1",
    "average_f1",
    "strict_accuracy",
    "precision",
    "recall",
    "prmscore",
    "accuracy",
    "fei",
    "aei",
    "sc_avg",
    "bon",
    "mv",
    "aa_avg",
    "mcc",
    "rps_avg",
    "overall",
    "tie_rate",
}
PRESET_FORMATS = [("Markdown", "markdown"), ("CSV", "csv"), ("LaTeX", "latex")]
PRMSCORE_CHOICES = [(text, key) for key, text in scores.PRMSCORE_CONVENTIONS.items()]


def _table(frame: pd.DataFrame, names: dict[str, str] | None = None) -> pd.DataFrame:
    """Shares as percentages with one decimal (as the papers print them), 'n/a' where undefined."""
    names = names or {c: c for c in frame.columns}
    out = frame[[c for c in names if c in frame.columns]].copy()
    for column in out.columns:
        if column in _SIGNED:
            out[column] = ["n/a" if pd.isna(v) else f"{100 * float(v):+.1f}" for v in out[column]]
        elif column == "threshold":
            out[column] = ["" if pd.isna(v) else f"{float(v):.4g}" for v in out[column]]
        elif column in _PERCENT or column in ("crs", "css", "ccs"):
            out[column] = ["n/a" if pd.isna(v) else f"{100 * float(v):.1f}" for v in out[column]]
    return out.rename(columns=names).astype(str)


def _models_table(report: scores.ScoreReport) -> pd.DataFrame:
    """The models side by side, with the columns this dataset's task and predictions fill (a score no
    model has here is another benchmark's); the PRMScore column says which convention made it."""
    names = {**_MODELS, "prmscore": f"PRMScore ({scores.PRMSCORE_CONVENTIONS[report.prmscore_convention]})"}
    return _table(_filled(report.table), names)


def _filled(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns with at least one value."""
    return frame.loc[:, [c for c in frame.columns if frame[c].notna().any()]]


def _has_prmscore(report: scores.ScoreReport) -> bool:
    return "prmscore" in report.table.columns and bool(report.table["prmscore"].notna().any())


def _failures_html(cases: pd.DataFrame, dataset: str) -> str:
    """The failure cases, every cell escaped; each opens its item in Browse beside the gold."""
    if cases.empty:
        return '<p class="sc-note">No failure cases: the model is right on every kept item.</p>'
    head = "<tr><th>item</th><th>what went wrong</th><th>gold step</th><th>predicted</th><th>difficulty</th><th></th></tr>"
    rows = []
    for case in cases.itertuples():
        link = query_for(BrowseFilter(dataset=dataset), item_id=int(case.item_id))
        predicted = (
            "-"
            if isinstance(case.predicted_step, float) and math.isnan(case.predicted_step)
            else case.predicted_step
        )
        rows.append(
            "<tr>"
            f"<td>{html.escape(str(case.external_id))}</td><td>{html.escape(str(case.outcome))}</td>"
            f"<td>{'no error' if case.gold_step == 0 else case.gold_step}</td>"
            f"<td>{'no error' if predicted == 0 else predicted}</td>"
            f"<td>{html.escape(str(case.difficulty))}</td>"
            f'<td><a class="sc-open" href="{html.escape(link)}">open in Browse</a></td>'
            "</tr>"
        )
    return f'<table class="sc-failures"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


# The sections of the tab, each shown only when it has something for this dataset (issue 29: no empty
# tables with placeholder headers, no other benchmark's tables).
SECTIONS = (
    "models_box",
    "convention",
    "subsets_box",
    "prmbench_v_box",
    "mpbench_box",
    "failures_box",
    "human_box",
)


def _sections(report: scores.ScoreReport | None) -> dict[str, Any]:
    if report is None or not report.models:
        return {name: gr.update(visible=False) for name in SECTIONS}
    shown = {
        "models_box": True,
        "convention": _has_prmscore(report),
        "subsets_box": not report.subsets.empty,
        "prmbench_v_box": not report.prmbench_v.empty,
        "mpbench_box": not (report.mpbench.empty and report.mpbench_domains.empty),
        "failures_box": not report.outcomes.empty,
        "human_box": not (report.by_difficulty.empty and report.by_agreement.empty),
    }
    return {name: gr.update(visible=bool(on)) for name, on in shown.items()}


# A paper's table made from one dataset fits one task; the agreement studies' tables take a study instead.
_DATASET_PRESETS = {"processbench_table2": EARLIEST_ERROR, "crystal_table_s1": STEP_MATCH}


def _presets_for(task: str, *, has_studies: bool) -> list[tuple[str, str]]:
    """The presets that can be made here: the dataset's task's table, the study tables once a study exists."""
    return [
        (label, key)
        for key, label in presets.PRESETS.items()
        if _DATASET_PRESETS.get(key) == task or (key not in _DATASET_PRESETS and has_studies)
    ]


def _refused() -> dict[str, Any]:
    empty = pd.DataFrame()
    return {
        **_sections(None),
        "refusal": gr.update(visible=True),
        "content": gr.update(visible=False),
        "status": "",
        "models": empty,
        "plot": None,
        "reliability": None,
        "subsets": empty,
        "failures": "",
        "difficulty": empty,
        "agreement": empty,
        "mpbench": empty,
        "mpbench_domains": empty,
        "prmbench_v": empty,
    }


def on_open(ctx: AppContext, request: gr.Request) -> tuple:
    """Who sees what: reviewers the content, admins the upload too."""
    user = require_user(ctx, request)
    return gr.update(visible=not user.can_see_labels), gr.update(visible=user.is_admin)


def on_show(
    ctx: AppContext, dataset: str | None, model: str | None, convention: str | None, request: gr.Request
) -> dict[str, Any]:
    """Every model on the dataset side by side, one model's failure cases, scores by human grouping;
    PRMScore under the chosen convention for an undefined F1 (the paper's by default)."""
    user = require_user(ctx, request)
    if not user.can_see_labels:
        return _refused()
    names = reports.dataset_names(ctx.store)
    dataset = dataset if dataset in names else (names[0] if names else None)
    picker = gr.update(choices=names, value=dataset)
    if dataset is None:
        return {
            **_refused(),
            "refusal": gr.update(visible=False),
            "content": gr.update(visible=True),
            "dataset": picker,
            "status": "No datasets yet: import one in Data.",
        }
    try:
        report = scores.score_report(ctx.store, user, dataset, prmscore_undefined=convention or "zero")
    except ServiceError as exc:
        return {
            **_refused(),
            "refusal": gr.update(visible=False),
            "content": gr.update(visible=True),
            "dataset": picker,
            "status": escape_text(str(exc)),
        }
    model = model if model in report.models else (report.models[0] if report.models else None)
    bars, reliability = scores.figures(report)
    status = (
        f"**{escape_text(dataset)}**: {len(report.models)} model(s) scored on {report.n_kept} kept item(s). "
        f"{escape_text(report.prmscore_note)}"
        if report.models
        else f"No predictions on **{escape_text(dataset)}** yet: an admin imports them under "
        "*Import predictions* below."
    )
    listed = study_service.list_studies(ctx.store, user)
    offered = _presets_for(report.task, has_studies=bool(len(listed)))
    return {
        **_sections(report),
        "presets_box": gr.update(visible=bool(offered)),
        "preset": gr.update(choices=offered, value=offered[0][1] if offered else None),
        "preset_table": gr.update(visible=False),  # another dataset's table is not this one's
        "preset_study": gr.update(choices=listed["study"].tolist() if len(listed) else []),
        "refusal": gr.update(visible=False),
        "content": gr.update(visible=True),
        "dataset": picker,
        "status": status,
        "models": _models_table(report),
        "plot": bars,
        "reliability": reliability,
        "subsets": _table(report.subsets, _SUBSETS),
        "model": gr.update(choices=report.models, value=model),
        "failures": _failures_html(scores.failure_cases(report, model), dataset) if model else "",
        "difficulty": _table(report.by_difficulty),
        "agreement": _table(report.by_agreement),
        "mpbench": _table(report.mpbench, _MPBENCH),
        "mpbench_domains": _table(report.mpbench_domains, _MPBENCH_DOMAINS),
        "prmbench_v": _table(report.prmbench_v, _PRMBENCH_V),
    }


def on_failures(ctx: AppContext, dataset: str | None, model: str | None, request: gr.Request) -> str:
    """One model's failure cases (wrong step, missed error, false alarm, no prediction)."""
    user = require_user(ctx, request)
    if not user.can_see_labels or not dataset or not model:
        return ""
    try:
        report = scores.score_report(ctx.store, user, dataset)
        return _failures_html(scores.failure_cases(report, model), dataset)
    except ServiceError as exc:
        return f"<p>{html.escape(str(exc))}</p>"


def on_import(
    ctx: AppContext,
    file: str | None,
    model: str,
    dataset: str | None,
    convention: str | None,
    request: gr.Request,
) -> dict[str, Any]:
    """An admin's upload of a model's predictions: stored whole, or refused with every bad line."""
    admin = require_admin(ctx, request)
    if not file:
        return {"import_status": "**Nothing imported.** Choose a predictions file first."}
    if not dataset:
        return {"import_status": "**Nothing imported.** Pick the dataset the predictions are for."}
    path = Path(file)
    try:
        done = scores.import_predictions(
            ctx.store, admin, path, model=model, dataset=dataset, shown_name=path.name
        )
    except ServiceError as exc:
        return {"import_status": f"**Nothing imported.** {escape_text(str(exc))}"}
    return {
        **on_show(ctx, dataset, done.model, convention, request),
        "import_status": escape_text(done.summary()),
    }


def on_preset(
    ctx: AppContext,
    preset: str | None,
    dataset: str | None,
    study: str | None,
    fmt: str | None,
    request: gr.Request,
) -> tuple[Any, str]:
    """A paper's table from this app's log, shown and offered as a file for this reviewer only."""
    user = require_reviewer(ctx, request)
    folder = private_dir(ctx) / secrets.token_hex(16)
    try:
        made = presets.build_preset(ctx.store, user, preset or "", dataset=dataset, study=study)
        path = presets.write_preset(made, folder, fmt or "markdown")
        link = download_link_html(offer_download(ctx, user, path, path.name))
    except ServiceError as exc:
        return gr.update(visible=False), f"<p>{html.escape(str(exc))}</p>"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table = made.display()
    return gr.update(value=table, visible=not table.empty), f"<p>{html.escape(made.note)}</p>{link}"


def _frame(elem_id: str, label: str) -> Table:
    return Table(interactive=False, wrap=True, elem_id=elem_id, label=label)


def build(ctx: AppContext, tab: gr.Tab | None = None) -> None:
    refusal = gr.Markdown(REVIEWERS_ONLY, visible=False, elem_id="sc-refusal")
    with gr.Column(visible=False, elem_id="sc-content") as content:
        with gr.Row(equal_height=True):
            dataset = gr.Dropdown([], label="Dataset", scale=3, elem_id="sc-dataset")
            refresh = gr.Button("Score", scale=1, elem_id="sc-refresh")
        status = gr.Markdown("Open this tab to score the models.", elem_id="sc-status")
        with gr.Column(visible=False) as models_box:
            models = _frame("sc-models", "Models side by side (percent)")
            convention = gr.Radio(
                PRMSCORE_CHOICES,
                value="zero",
                label="PRMScore where an F1 is undefined (precision + recall = 0)",
                elem_id="sc-prmscore-convention",
                visible=False,
            )
            with gr.Row():
                plot = gr.Plot(format="png", show_label=False, elem_id="sc-plot")
                reliability = gr.Plot(format="png", show_label=False, elem_id="sc-reliability")
        with gr.Column(visible=False) as subsets_box:
            subsets = _frame("sc-subsets", "ProcessBench per subset, then Average (percent)")
        with gr.Column(visible=False) as prmbench_v_box:
            prmbench_v = _frame(
                "sc-prmbench-v",
                "PRMBench-V per error type, then Overall (percent; a scalar PRM flags its k lowest steps, k = the gold's count)",
            )
        with gr.Column(visible=False) as mpbench_box:
            gr.Markdown(
                "### MPBench: step correctness, answer aggregation, process search",
                elem_classes=["qc-heading"],
            )
            gr.Markdown(MPBENCH_NOTE, elem_classes=["qc-note"])
            mpbench = _frame("sc-mpbench", "MPBench Table 2 (percent; MCC x100)")
            mpbench_domains = _frame("sc-mpbench-domains", "MPBench Table 3: by domain, minus random")
        with gr.Column(visible=False) as failures_box:
            gr.Markdown("### Failure cases", elem_classes=["qc-heading"])
            model = gr.Dropdown([], label="Model", elem_id="sc-model")
            failures = gr.HTML("", elem_id="sc-failures")
        with gr.Column(visible=False) as human_box:
            gr.Markdown("### Where models fail that humans found hard", elem_classes=["qc-heading"])
            with gr.Row():
                difficulty = _frame("sc-difficulty", "By the annotators' difficulty")
                agreement = _frame(
                    "sc-agreement",
                    "By annotator agreement (3/n: settled with n annotators; else unanimous, split or adjudicated)",
                )
        with gr.Column(elem_id="sc-presets") as presets_box:
            gr.Markdown("### Paper presets: a seed's table from this log", elem_classes=["qc-heading"])
            with gr.Row(equal_height=True):
                preset = gr.Dropdown(
                    [(label, key) for key, label in presets.PRESETS.items()],
                    value="processbench_table2",
                    label="Table",
                    elem_id="sc-preset-name",
                )
                preset_study = gr.Dropdown(
                    [], label="Study (for the agreement studies)", elem_id="sc-preset-study"
                )
                preset_format = gr.Radio(
                    PRESET_FORMATS, value="markdown", label="File", elem_id="sc-preset-format"
                )
                make = gr.Button("Make table", elem_id="sc-preset-make")
            preset_table = Table(
                interactive=False,
                wrap=True,
                elem_id="sc-preset-table",
                label="Preset (the dataset above for Table 2)",
                visible=False,  # until a table is made: no placeholder headers
            )
            preset_link = gr.HTML("", elem_id="sc-preset-download")
        with gr.Column(visible=False, elem_id="sc-admin") as admin_box:
            gr.Markdown("### Import predictions", elem_classes=["qc-heading"])
            gr.Markdown(HELP, elem_classes=["qc-note"])
            with gr.Row(equal_height=True):
                upload = gr.File(
                    label="Predictions (JSONL)",
                    file_types=[".jsonl", ".json"],
                    height=120,
                    elem_id="sc-upload",
                )
                upload_model = gr.Textbox(label="Model name", elem_id="sc-upload-model")
                do_import = gr.Button("Import predictions", variant="primary", elem_id="sc-import")
            import_status = gr.Markdown("", elem_id="sc-import-status")
    shown = Outputs(
        refusal=refusal,
        content=content,
        dataset=dataset,
        status=status,
        models=models,
        plot=plot,
        reliability=reliability,
        subsets=subsets,
        model=model,
        failures=failures,
        difficulty=difficulty,
        agreement=agreement,
        presets_box=presets_box,
        preset=preset,
        preset_table=preset_table,
        preset_study=preset_study,
        mpbench=mpbench,
        mpbench_domains=mpbench_domains,
        prmbench_v=prmbench_v,
        models_box=models_box,
        convention=convention,
        subsets_box=subsets_box,
        prmbench_v_box=prmbench_v_box,
        mpbench_box=mpbench_box,
        failures_box=failures_box,
        human_box=human_box,
    )
    private = {"api_visibility": "private", "show_progress": "minimal"}
    gr.on(None, bind(on_open, ctx), None, [refusal, admin_box], **background(), **private)
    triggers = [refresh.click, dataset.input, convention.input]
    if tab is not None:
        triggers.insert(0, tab.select)
    gr.on(
        triggers,
        shown.bind(on_show, ctx),
        [dataset, model, convention],
        list(shown),
        **{**private, **on_status(status)},
    )
    model.input(bind(on_failures, ctx), [dataset, model], [failures], **private)
    make.click(
        bind(on_preset, ctx),
        [preset, dataset, preset_study, preset_format],
        [preset_table, preset_link],
        **private,
    )
    imported = Outputs(**shown.components, import_status=import_status)
    do_import.click(
        imported.bind(on_import, ctx),
        [upload, upload_model, dataset, convention],
        list(imported),
        **{**private, **on_status(import_status)},
    )
