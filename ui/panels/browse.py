"""Browse: error-case browsing for adjudicators and admins; annotators browse their own finished work.

Filter by dataset, task, source, error type, state, error position, annotator and free text; pages
of 25 from SQL; an item with its chain (error steps highlighted, dataset text escaped), its versions
as a lineage and every label on it; PRMBench-V's Figure 7 for the filter; a link that reopens the
view; an export of the view. Every handler asks services.browse, which checks the role and scopes an
annotator's view to their own labels: Gradio exposes each event over HTTP.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import gradio as gr
import pandas as pd

from services import browse
from services.browse import BrowseFilter, ItemDetail
from services.errors import ServiceError
from services.exports import EXPORT_FORMATS, suffix_of
from tasks.base import decision_words
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.downloads import export_folder, offer_export
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.kit.progress import on_status
from ui.kit.table import Table
from ui.render import LATEX_DELIMITERS, escape_text, safe_markdown, step_body, word_diff

__all__ = [
    "build",
    "on_export",
    "on_filter",
    "on_open",
    "on_page",
    "on_select",
    "on_tab_open",
]

OWN_WORK = (
    "**Your finished work:** the items you labelled, with your own labels and time. Other annotators' "
    "labels and the states decided from them are for adjudicators and admins."
)
ANY = ""
PLOTS = ("plot", "plot_steps", "plot_chains", "plot_annotators", "plot_time")  # browse.FIGURES' order
RESULTS = ("results", "page_line", "page", *PLOTS, "link", "status")
ITEM = ("item_view", "lineage", "annotations", "link", "status")
EXPORTED = ("export_status", "export_file")
# What a filter can be exported as: everything but the agreement report (a whole dataset's).
VIEW_FORMATS = tuple(f for f in EXPORT_FORMATS if not f.startswith("report-"))
_CHAIN_ROLES = ("modified", "solution", "candidate", "original", "predicted", "reference")


def _filter(*values: Any) -> BrowseFilter:
    dataset, task, source, error_type, status, position, annotator, text, sort, difficulty = values
    return BrowseFilter(
        difficulty=difficulty or None,
        dataset=dataset or None,
        task=task or None,
        source=source or None,
        error_type=error_type or None,
        status=status or None,
        error_position=int(position) if position not in (None, "") and float(position) > 0 else None,
        annotator=annotator or None,
        text=text or None,
        sort=sort or "id",
    )


def _link(query: str) -> str:
    """The query is URL-encoded (no spaces, brackets, backticks or markup left): safe as it is."""
    return f"[Link to this view]({query}) · `{query}`"


def _results(ctx: AppContext, user: Any, f: BrowseFilter, page: int, plots: bool = True) -> dict[str, Any]:
    """A page of results and the link to it; with `plots`, the filter's plots too (a page turn keeps
    them: they are the whole filter's, and drawing them costs more than the page on 100k items)."""
    found = browse.search(ctx.store, user, f, page)
    figures = browse.figures(ctx.store, user, f) if plots else {}
    rows = found.rows.rename(columns={"earliest_error": "first error step", "error_steps": "error steps"})
    return {
        "results": rows,
        "page_line": f"**{found.total}** item(s) · page {found.page + 1} of {found.pages}",
        "page": found.page,
        **{name: figures[key] for name, key in zip(PLOTS, browse.FIGURES, strict=True) if key in figures},
        "link": _link(browse.query_for(f, page=found.page)),
        "status": "",
    }


def _refused(exc: ServiceError, names: tuple[str, ...]) -> dict[str, Any]:
    return {"status": refusal(str(exc))} if "status" in names else {}


def on_tab_open(ctx: AppContext, query: str, request: gr.Request) -> dict[str, Any]:
    """The filter choices and the view a link names; an annotator's view is their own finished work
    (no state, difficulty or annotator filter, no export: those read or carry others' labels)."""
    user = require_user(ctx, request)
    options = browse.choices(ctx.store, user)
    params = dict(parse_qsl((query or "").lstrip("?")))
    reviewer = bool(user.can_see_labels)
    out: dict[str, Any] = {
        "note": "" if reviewer else OWN_WORK,
        "body": gr.update(visible=True),
        "export_row": gr.update(visible=reviewer),
        "dataset": gr.update(choices=[ANY, *options["dataset"]]),
        "task": gr.update(choices=[ANY, *options["task"]]),
        "source": gr.update(choices=[ANY, *options["source"]]),
        "error_type": gr.update(choices=[ANY, *options["error_type"]]),
        "difficulty": gr.update(choices=[ANY, *options["difficulty"]], visible=reviewer),
        "state": gr.update(visible=reviewer),
        "annotator": gr.update(visible=reviewer),
    }
    try:
        f, item_id, page = browse.filter_from_query(params if params.get("tab") == "browse" else {})
        out.update(_results(ctx, user, f, page))
        out.update(
            {
                "dataset": gr.update(choices=[ANY, *options["dataset"]], value=f.dataset or ANY),
                "task": gr.update(choices=[ANY, *options["task"]], value=f.task or ANY),
                "source": gr.update(choices=[ANY, *options["source"]], value=f.source or ANY),
                "error_type": gr.update(choices=[ANY, *options["error_type"]], value=f.error_type or ANY),
                "state": gr.update(value=f.status or ANY, visible=reviewer),
                "position": f.error_position,
                "annotator": gr.update(value=f.annotator or "", visible=reviewer),
                "text": f.text or "",
                "sort": f.sort,
                "difficulty": gr.update(
                    choices=[ANY, *options["difficulty"]], value=f.difficulty or ANY, visible=reviewer
                ),
            }
        )
        if item_id is not None:
            out.update(_item(ctx, user, item_id, f))
    except ServiceError as exc:
        out["status"] = refusal(str(exc))
    return out


def on_filter(
    ctx: AppContext,
    dataset: Any,
    task: Any,
    source: Any,
    error_type: Any,
    state: Any,
    position: Any,
    annotator: Any,
    text: Any,
    sort: Any,
    difficulty: Any,
    request: gr.Request,
) -> dict[str, Any]:
    user = require_user(ctx, request)
    try:
        return _results(
            ctx,
            user,
            _filter(dataset, task, source, error_type, state, position, annotator, text, sort, difficulty),
            0,
        )
    except ServiceError as exc:
        return _refused(exc, RESULTS)


def on_page(
    ctx: AppContext,
    step: int,
    page: Any,
    dataset: Any,
    task: Any,
    source: Any,
    error_type: Any,
    state: Any,
    position: Any,
    annotator: Any,
    text: Any,
    sort: Any,
    difficulty: Any,
    request: gr.Request,
) -> dict[str, Any]:
    user = require_user(ctx, request)
    try:
        return _results(
            ctx,
            user,
            _filter(dataset, task, source, error_type, state, position, annotator, text, sort, difficulty),
            max(int(page or 0) + step, 0),
            plots=False,
        )
    except ServiceError as exc:
        return _refused(exc, RESULTS)


def on_open(
    ctx: AppContext,
    item_id: Any,
    dataset: Any,
    task: Any,
    source: Any,
    error_type: Any,
    state: Any,
    position: Any,
    annotator: Any,
    text: Any,
    sort: Any,
    difficulty: Any,
    request: gr.Request,
) -> dict[str, Any]:
    user = require_user(ctx, request)
    try:
        return _item(
            ctx,
            user,
            item_id,
            _filter(dataset, task, source, error_type, state, position, annotator, text, sort, difficulty),
        )
    except ServiceError as exc:
        return _refused(exc, ITEM)


def on_select(
    ctx: AppContext,
    results: pd.DataFrame,
    dataset: Any,
    task: Any,
    source: Any,
    error_type: Any,
    state: Any,
    position: Any,
    annotator: Any,
    text: Any,
    sort: Any,
    difficulty: Any,
    evt: gr.SelectData,
    request: gr.Request,
) -> dict[str, Any]:
    """A click on a result row opens that item (its id is the first column)."""
    row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
    try:
        item_id = int(results.iloc[int(row)]["item_id"])
    except (IndexError, KeyError, TypeError, ValueError):
        return {}
    return {
        **on_open(
            ctx,
            item_id,
            dataset,
            task,
            source,
            error_type,
            state,
            position,
            annotator,
            text,
            sort,
            difficulty,
            request,
        ),
        "open_id": str(item_id),
    }


def on_export(
    ctx: AppContext,
    fmt: Any,
    dataset: Any,
    task: Any,
    source: Any,
    error_type: Any,
    state: Any,
    position: Any,
    annotator: Any,
    text: Any,
    sort: Any,
    difficulty: Any,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio's way of asking for a progress bar)
) -> dict[str, Any]:
    """Write the filter's items in a format and offer the file and its manifest to this user only."""
    user = require_user(ctx, request)
    f = _filter(dataset, task, source, error_type, state, position, annotator, text, sort, difficulty)
    if fmt not in VIEW_FORMATS:  # checked before it becomes part of a file name
        return {"export_status": refusal(f"choose a format: {', '.join(VIEW_FORMATS)}")}
    folder = export_folder(ctx)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    out = folder / f"browse-{fmt}-{stamp}.{suffix_of(fmt)}"
    try:
        written = browse.export_view(
            ctx.store, user, f, fmt, out, progress=lambda done, what: progress(done, what)
        )
    except ServiceError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return {"export_status": refusal(str(exc)), "export_file": gr.update(value="", visible=False)}
    return {
        "export_status": f"Wrote {written.rows} row(s) of this view as {fmt}.",
        "export_file": gr.update(value=offer_export(ctx, user, written.path, written.manifest), visible=True),
    }


def _item(ctx: AppContext, user: Any, item_id: Any, f: BrowseFilter) -> dict[str, Any]:
    detail = browse.open_item(ctx.store, user, item_id)
    return {
        "item_view": _item_markdown(detail),
        "lineage": _lineage_markdown(detail),
        "annotations": gr.update(value=detail.annotations, visible=True),  # hidden until an item is open
        "link": _link(browse.query_for(f, item_id=detail.item.item_id)),
        "status": "",
    }


def _item_markdown(detail: ItemDetail) -> str:
    item, state = detail.item, detail.state
    status = state.status if state else "open"
    lines = [
        f"### {escape_text(detail.dataset)} · {escape_text(item.external_id)} · version {item.version}",
        ("**Your own labels only.**" if detail.own_work_only else f"**State:** {escape_text(status)}")
        + (
            f" · **decision:** {escape_text(decision_words(state.decision))}"
            if state and state.decision
            else ""
        )
        + (f" · **error type:** {escape_text(item.error_type)}" if item.error_type else "")
        + (f" · **source:** {escape_text(item.source)}" if item.source else ""),
        "",
        safe_markdown(item.question),
    ]
    if item.rationale:
        lines += ["", f"> **Modification rationale:** {safe_markdown(item.rationale)}"]
    errors = set(item.error_steps)
    if not errors and item.earliest_error is not None and item.earliest_error >= 0:
        errors = {item.earliest_error}
    role = next((r for r in _CHAIN_ROLES if r in item.steps), None)
    if role is not None:
        lines += ["", f"**Steps ({escape_text(role)})**", ""]
        for i, text in enumerate(item.steps[role]):
            mark = '<b class="br-error-tag">error</b> ' if i in errors else ""
            cls = "br-error-step" if i in errors else "br-step"
            lines.append(
                f'<div class="{cls}">{mark}<b>Step {i + 1}.</b> {safe_markdown(step_body(text))}</div>'
            )
            lines.append("")
    if item.reference_answer:
        lines += ["", f"**Reference answer:** {safe_markdown(item.reference_answer)}"]
    return "\n".join(lines)


def _lineage_markdown(detail: ItemDetail) -> str:
    if detail.own_work_only:  # the lineage tells what others' labels made of the item
        return ""
    rows = [
        "| version | from | why | when | error steps | question |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    previous = None
    for v in detail.lineage:
        changed = "same" if previous is not None and v["question"] == previous else "changed"
        if previous is None:
            changed = "first"
        rows.append(
            f"| {v['version']} | {v['parent'] or '—'} | {escape_text(v['reason'])} | "
            f"{escape_text(str(v['created_at'])[:19])} | {', '.join(str(i + 1) for i in v['error_steps'])} | "
            f"{changed} |"
        )
        previous = v["question"]
    return "**Versions (lineage)**\n\n" + "\n".join(rows) + _diffs(detail)


def _diffs(detail: ItemDetail) -> str:
    """What each version changed from its parent: the question and every step that differs, word by word."""
    by_number = {v.version: v for v in detail.versions}
    parts = []
    for row in detail.lineage:
        before, after = by_number.get(row["parent"] or -1), by_number.get(row["version"])
        if before is None or after is None:
            continue
        changes = []
        if before.question != after.question:
            old, new = word_diff(before.question, after.question)
            changes.append(f"- question: {old} → {new}")
        for role in sorted(set(before.steps) | set(after.steps)):
            a, b = before.steps.get(role, []), after.steps.get(role, [])
            for i in range(max(len(a), len(b))):
                old_text = a[i] if i < len(a) else ""
                new_text = b[i] if i < len(b) else ""
                if old_text != new_text:
                    old, new = word_diff(old_text, new_text)
                    changes.append(f"- {escape_text(role)} step {i + 1}: {old} → {new}")
        if before.error_steps != after.error_steps:
            changes.append(
                f"- error steps: {[i + 1 for i in before.error_steps]} → {[i + 1 for i in after.error_steps]}"
            )
        body = "\n".join(changes) if changes else "- no change in the question, steps or error steps"
        parts.append(
            f"\n\n**Version {row['version']} from {row['parent']}** ({escape_text(row['reason'])})\n\n{body}"
        )
    return "".join(parts)


def build(ctx: AppContext, tab: gr.Tab) -> None:
    math = {"latex_delimiters": LATEX_DELIMITERS}
    note = gr.Markdown(elem_id="br-note")
    query = gr.Textbox(visible=False, elem_id="br-query")
    page = gr.State(0)
    with gr.Column(visible=False, elem_id="br-body") as body:
        with gr.Row(elem_id="br-filters"):
            dataset = gr.Dropdown([ANY], value=ANY, label="Dataset", elem_id="br-dataset", min_width=140)
            task = gr.Dropdown([ANY], value=ANY, label="Task", elem_id="br-task", min_width=120)
            source = gr.Dropdown(
                [ANY], value=ANY, label="Source / subset", allow_custom_value=True, elem_id="br-source"
            )
            error_type = gr.Dropdown([ANY], value=ANY, label="Error type", elem_id="br-error-type")
            state = gr.Dropdown([ANY, *browse.STATES], value=ANY, label="State", elem_id="br-state")
            position = gr.Number(label="Error at step", precision=0, minimum=0, elem_id="br-position")
            difficulty = gr.Dropdown(
                [ANY, *browse.DIFFICULTIES],
                value=ANY,
                label="Difficulty",
                elem_id="br-difficulty",
                min_width=110,
            )
        with gr.Row(elem_id="br-filters-2"):
            annotator = gr.Textbox(label="Annotator", elem_id="br-annotator")
            text = gr.Textbox(label="Text in question or steps", elem_id="br-text", scale=2)
            sort = gr.Dropdown(list(browse.SORTS), value="id", label="Sort by", elem_id="br-sort")
            search = gr.Button("Search", variant="primary", elem_id="br-search")
        with gr.Row():
            previous = gr.Button("◀ Previous page", size="sm", elem_id="br-previous")
            page_line = gr.Markdown(elem_id="br-page-line")
            following = gr.Button("Next page ▶", size="sm", elem_id="br-next")
        results = Table(interactive=False, elem_id="br-results", max_height=420)
        with gr.Row():
            open_id = gr.Textbox(label="Open item (number)", elem_id="br-open-id", scale=1)
            go = gr.Button("Open", size="sm", elem_id="br-open", scale=0)
        with gr.Row(elem_id="br-export-row") as export_row:
            export_fmt = gr.Dropdown(
                list(VIEW_FORMATS),
                value="stepgate-jsonl",
                label="Export this view as",
                elem_id="br-export-format",
            )
            export_run = gr.Button("Export", size="sm", elem_id="br-export", scale=0)
            export_status = gr.Markdown(elem_id="br-export-status")
        export_file = gr.HTML("", visible=False, elem_id="br-export-file")
        status = gr.Markdown(elem_id="br-status")
        link = gr.Markdown(elem_id="br-link")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                item_view = gr.Markdown(elem_id="br-item", **math)
                lineage = gr.Markdown(elem_id="br-lineage", **math)
                annotations = Table(
                    label="Every label on this item (all versions, time spent)",
                    interactive=False,
                    visible=False,  # no empty table with placeholder headers before an item is opened
                    elem_id="br-annotations",
                )
            with gr.Column(scale=2):
                plot = gr.Plot(format="png", show_label=False, elem_id="br-plot")
                plot_steps = gr.Plot(format="png", show_label=False, elem_id="br-plot-steps")
                plot_chains = gr.Plot(format="png", show_label=False, elem_id="br-plot-chains")
                plot_annotators = gr.Plot(format="png", show_label=False, elem_id="br-plot-annotators")
                plot_time = gr.Plot(format="png", show_label=False, elem_id="br-plot-time")

    filters = [dataset, task, source, error_type, state, position, annotator, text, sort, difficulty]
    shown = Outputs(
        results=results,
        page_line=page_line,
        page=page,
        plot=plot,
        plot_steps=plot_steps,
        plot_chains=plot_chains,
        plot_annotators=plot_annotators,
        plot_time=plot_time,
        link=link,
        status=status,
    )
    item = Outputs(item_view=item_view, lineage=lineage, annotations=annotations, link=link, status=status)
    opened = Outputs(
        note=note,
        body=body,
        dataset=dataset,
        task=task,
        source=source,
        error_type=error_type,
        state=state,
        position=position,
        annotator=annotator,
        text=text,
        sort=sort,
        difficulty=difficulty,
        export_row=export_row,
        **{**shown.components, **item.components},
    )
    private = {"api_visibility": "private"}
    tab.select(
        opened.bind(on_tab_open, ctx),
        [query],
        list(opened),
        js="(q) => window.location.search",
        **private,
        **on_status(note),
    )
    for event in (search.click, text.submit, annotator.submit):
        event(shown.bind(on_filter, ctx), filters, list(shown), **private, **on_status(page_line))
    for button, step in ((previous, -1), (following, 1)):  # the step is the server's, never the client's
        button.click(
            shown.bind(on_page, ctx),
            [gr.State(step), page, *filters],
            list(shown),
            **private,
            **on_status(page_line),
        )
    for event in (go.click, open_id.submit):
        event(item.bind(on_open, ctx), [open_id, *filters], list(item), **private, **on_status(status))
    picked = Outputs(open_id=open_id, **item.components)
    results.select(
        picked.bind(on_select, ctx), [results, *filters], list(picked), **private, **on_status(status)
    )
    exported = Outputs(export_status=export_status, export_file=export_file)
    export_run.click(
        exported.bind(on_export, ctx),
        [export_fmt, *filters],
        list(exported),
        api_visibility="private",
        show_progress="full",
    )
