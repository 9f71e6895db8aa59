"""Earliest error: ProcessBench's expert annotation (its Section 3.2), blind, three to five per item.

The annotator reads a problem and its step-by-step solution and marks the earliest wrong step, or
"all steps are correct" (label -1). Which item comes next, how many annotators an item needs and
when it is settled are the services' business (services.annotate, the task spec): the panel
shows what they return. Handlers only ever return the session user's own label; other annotators'
statistics are for adjudicators and admins.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import gradio as gr
import pandas as pd

from services import annotate, drafts, statistics
from services.annotate import WorkItem
from services.errors import AlreadyLabelled, ServiceError
from services.records import Annotator, Dataset
from tasks import EARLIEST_ERROR
from ui import step_list
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.keymap import keys_line
from ui.kit.messages import refusal, said
from ui.kit.opening import seconds_open
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.render import LATEX_DELIMITERS, escape_text

__all__ = [
    "build",
    "on_all_correct",
    "on_choose",
    "on_dataset_change",
    "on_jump",
    "on_next",
    "on_previous",
    "on_save",
    "on_skip",
    "on_statistics",
    "on_tab_open",
]

PANEL = EARLIEST_ERROR  # drafts are kept per user and panel
SHORTCUTS = "**Keys:** click a step, or (**?** shows them all, with what counts as an error): " + keys_line(
    "Earliest error"
)
NO_DATASET = (
    "No earliest-error dataset yet: an admin imports one (python app.py import FILE --format processbench)."
)
# What showing an item fills, by name (ui.kit.outputs): a handler returns the names it changes.
ITEM = (
    "header",
    "question",
    "images",
    "reference_box",
    "reference",
    "steps",
    "choice",
    "status",
    "progress",
    "current",
)


def _draft_key(current: dict[str, Any]) -> str:
    return f"{current['dataset']}|{current['item_id']}|{current['version_id']}"


def _say(message: str, warn: bool = False) -> str:
    """A status line from text that may quote dataset ids or the user's input: always escaped."""
    return refusal(message) if warn else said(message)


def _chosen_line(label: int | None) -> str:
    return f"Your choice: **{step_list.label_title(label)}** (not saved yet: **s** or Save)"


def _status_only(message: str) -> dict[str, Any]:
    """Leave the item as it is and say why on the status line."""
    return {"status": message}


def _has_item(current: Any) -> bool:
    return isinstance(current, dict) and current.get("item_id") is not None


def _progress_line(counts: dict[str, int]) -> str:
    """The user's own count; settled and discarded only for reviewers (they move with others' labels)."""
    total, mine = counts.get("total", 0), counts.get("mine", 0)
    if "settled" not in counts:
        return (
            f"You labelled **{mine}** of {total} items\n\n"
            f'<progress class="ee-progress" value="{mine}" max="{max(total, 1)}"></progress>'
        )
    settled = counts["settled"]
    return (
        f"You labelled **{mine}** · settled **{settled}** / {total} · "
        f"discarded {counts.get('discarded', 0)}\n\n"
        f'<progress class="ee-progress" value="{settled}" max="{max(total, 1)}"></progress>'
    )


def _header(shown: WorkItem, restored: bool) -> str:
    item = shown.item
    version = f" · version {item.version}" if item.version > 1 else ""
    where = (
        f"**Item {escape_text(item.external_id)}** · {shown.position} of {shown.progress['total']}{version}"
    )
    if shown.state == "done":
        mine = step_list.label_title((shown.my_label or {}).get("earliest_error"))
        return f"{where} · you labelled it **{mine}**; saving again records a correction"
    if shown.state == "resumed":
        return f"{where} · resumed" + (" with your unsaved choice" if restored else "")
    return where


def _show(
    ctx: AppContext,
    user: Annotator,
    dataset: Dataset,
    shown: WorkItem | None,
    message: str,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Every component an item fills (ITEM), by name."""
    if shown is None:
        done = (
            f"**Nothing left for you in {escape_text(dataset.name)}.** Previous (p) reopens your own labels."
        )
        return {
            "header": done,
            "question": "",
            "images": gr.Gallery(value=None, visible=False),
            "reference_box": gr.Accordion(visible=False),
            "reference": "",
            "steps": "",
            "choice": gr.Radio(choices=[], value=None),
            "status": message,
            "chosen": "",
            "progress": _progress_line(counts or {}),
            "current": {"dataset": dataset.name, "item_id": None},
        }
    item = shown.item
    solution = item.steps.get("solution") or []
    mine = step_list.parse_choice((shown.my_label or {}).get("earliest_error"), len(solution))
    current = {
        "dataset": dataset.name,
        "item_id": item.item_id,
        "external_id": item.external_id,
        "version_id": item.version_id,
        "n_steps": len(solution),
        "state": shown.state,
        "my_label": mine,
        "request_id": uuid.uuid4().hex,
        "opened_at": time.time(),
    }
    draft = step_list.parse_choice(drafts.get(ctx.store, user, PANEL, _draft_key(current)), len(solution))
    return {
        "header": _header(shown, restored=draft is not None),
        "question": step_list.question_markdown(item.question),
        "images": gr.Gallery(value=item.image_paths or None, visible=bool(item.image_paths)),
        "reference_box": gr.Accordion(visible=True),
        "reference": step_list.reference_markdown(
            item.steps.get("reference"), item.reference_solution, item.reference_answer
        ),
        "steps": step_list.steps_markdown(solution),
        "choice": gr.Radio(
            choices=step_list.choice_options(len(solution)), value=draft if draft is not None else mine
        ),
        "status": message,
        "chosen": _chosen_line(draft) if draft is not None else "",
        "progress": _progress_line(shown.progress),
        "current": current,
    }


def _dataset(ctx: AppContext, name: str | None) -> Dataset:
    if not name:
        raise ServiceError(NO_DATASET)
    return annotate.dataset_for(ctx.store, name, EARLIEST_ERROR)


def _where(ctx: AppContext, current: Any) -> tuple[dict[str, Any], Dataset]:
    """The panel's state (ids only) and its dataset; ServiceError when no dataset is open."""
    current = current if isinstance(current, dict) else {}
    return current, _dataset(ctx, current.get("dataset"))


def _counts(
    ctx: AppContext, user: Annotator, dataset: Dataset, shown: WorkItem | None
) -> dict[str, int] | None:
    return None if shown else annotate.progress(ctx.store, user, dataset)


def _open(ctx: AppContext, user: Annotator, name: str | None) -> dict[str, Any]:
    try:
        dataset = _dataset(ctx, name)
    except ServiceError as exc:
        return _status_only(_say(str(exc), warn=bool(name)))
    shown = annotate.next_item(ctx.store, user, dataset)
    if shown is None:
        message = said(annotate.why_nothing_left(ctx.store, user, dataset))
        return _show(ctx, user, dataset, None, message, annotate.progress(ctx.store, user, dataset))
    return _show(ctx, user, dataset, shown, "")


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the annotator's item (the one they hold first); coming back changes nothing."""
    user = require_user(ctx, request)
    names = statistics.dataset_names(ctx.store, EARLIEST_ERROR)
    shown = current.get("dataset") if _has_item(current) else None
    wanted = [n for n in (shown, drafts.get(ctx.store, user, PANEL, "dataset"), dataset) if n in names]
    dataset = wanted[0] if wanted else (names[0] if names else None)
    picker = gr.Dropdown(choices=names, value=dataset)
    if _has_item(current) and current["dataset"] == dataset:
        return {"dataset": picker}
    return {"dataset": picker, **_open(ctx, user, dataset)}


def on_dataset_change(ctx: AppContext, dataset: str, current: Any, request: gr.Request) -> dict[str, Any]:
    """Another dataset: its next item for this annotator (the one already shown stays); remembered for
    this annotator, so a reload or another tab opens it again."""
    user = require_user(ctx, request)
    if dataset in statistics.dataset_names(ctx.store, EARLIEST_ERROR):
        drafts.put(ctx.store, user, PANEL, "dataset", dataset)
    if _has_item(current) and current["dataset"] == dataset:
        return {}
    return _open(ctx, user, dataset)


def on_choose(ctx: AppContext, choice: Any, current: Any, request: gr.Request) -> dict[str, Any]:
    """A click on a step (or a key): kept as this user's draft on the server until it is saved."""
    user = require_user(ctx, request)
    if not _has_item(current):
        return {"chosen": _say("Open an item first.", warn=True)}
    if annotate.saved_attempt(ctx.store, user, str(current.get("request_id") or "")):
        return {}  # a click that reached the server after its item was saved: nothing to keep
    label = step_list.parse_choice(choice, int(current["n_steps"]))
    drafts.put(ctx.store, user, PANEL, _draft_key(current), label)
    return {"chosen": _chosen_line(label)}


def on_all_correct(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    chosen = on_choose(ctx, step_list.ALL_CORRECT, current, request)
    if not _has_item(current):
        return chosen
    return {"choice": gr.Radio(value=step_list.ALL_CORRECT), **chosen}


def on_save(ctx: AppContext, choice: Any, current: Any, request: gr.Request) -> dict[str, Any]:
    """Store the label, then show the next item; a missing choice stores nothing.

    The reply says "saved" and nothing of the item's state: on a blind task that would tell the
    annotator what the others chose.
    """
    user = require_user(ctx, request)
    if not _has_item(current):
        return _status_only(_say("There is no item to save.", warn=True))
    label = step_list.parse_choice(choice, int(current["n_steps"]))
    if label is None:
        message = (
            "Nothing saved: click the earliest wrong step (or type its number), or choose "
            "'All steps are correct' (a), then save."
        )
        return _status_only(_say(message, warn=True))
    try:
        dataset = _dataset(ctx, current["dataset"])
        if current.get("state") == "done" and label == current.get("my_label"):
            saved = "No change to your label"
        else:
            receipt = annotate.submit(
                ctx.store,
                annotator=user,
                item_id=current["item_id"],
                version_id=current["version_id"],
                payload={"earliest_error": label},
                request_id=current["request_id"],
                seconds_spent=seconds_open(current),
                first_label=current.get("state") in ("new", "resumed"),
            )
            saved = (
                "Already saved"
                if receipt.duplicate
                else ("Saved your correction" if current.get("state") == "done" else "Saved")
            )
    except AlreadyLabelled as exc:
        # Saved from another tab: show the item as it is stored, with that label, to correct if wanted
        # (this tab's unsaved choice goes, or it would be shown over the stored label).
        drafts.clear(ctx.store, user, PANEL, _draft_key(current))
        stored = annotate.jump_to(ctx.store, user, dataset, str(current.get("external_id") or ""))
        return _show(ctx, user, dataset, stored, _say(f"Not saved: {exc}", warn=True))
    except ServiceError as exc:
        return _status_only(_say(f"Not saved: {exc} (n opens your next item)", warn=True))
    drafts.clear(ctx.store, user, PANEL, _draft_key(current))
    shown = annotate.next_in_history(ctx.store, user, dataset, current["item_id"])
    following = f"item {escape_text(shown.item.external_id)}" if shown else "nothing left for you here"
    message = f"✓ {saved}: **{step_list.label_title(label)}**. Next item: {following}."
    return _show(ctx, user, dataset, shown, message, _counts(ctx, user, dataset, shown))


def on_skip(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    """Give the item back to the pool for others; it comes back to this annotator last."""
    user = require_user(ctx, request)
    if not _has_item(current):
        return _status_only(_say("There is no item to skip.", warn=True))
    if current.get("state") == "done":
        return _status_only(_say("You labelled this item already, so there is nothing to skip: n moves on."))
    try:
        current, dataset = _where(ctx, current)
        shown = annotate.skip_item(ctx.store, user, dataset, current["item_id"])
    except ServiceError as exc:
        return _status_only(_say(str(exc), warn=True))
    message = "Skipped: the item went back to the pool."
    return _show(ctx, user, dataset, shown, message, _counts(ctx, user, dataset, shown))


def on_previous(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    """Back through the annotator's own labels, newest first."""
    user = require_user(ctx, request)
    try:
        current, dataset = _where(ctx, current)
        shown = annotate.previous_item(ctx.store, user, dataset, current.get("item_id"))
    except ServiceError as exc:
        return _status_only(_say(str(exc), warn=True))
    if shown is None:
        return _status_only(_say("There is no earlier item of yours in this dataset."))
    return _show(ctx, user, dataset, shown, "")


def on_next(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    """Forward through the annotator's own labels, then on to the item they hold or a new one."""
    user = require_user(ctx, request)
    try:
        current, dataset = _where(ctx, current)
        shown = annotate.next_in_history(ctx.store, user, dataset, current.get("item_id"))
    except ServiceError as exc:
        return _status_only(_say(str(exc), warn=True))
    same = shown is not None and (shown.item.item_id, shown.item.version_id) == (
        current.get("item_id"),
        current.get("version_id"),
    )
    if same:
        return _status_only(_say("This is your current item: save it, or skip it (x) to get another."))
    return _show(ctx, user, dataset, shown, "", _counts(ctx, user, dataset, shown))


def on_jump(ctx: AppContext, ref: str, current: Any, request: gr.Request) -> dict[str, Any]:
    """Open an item by its id or its number in the dataset."""
    user = require_user(ctx, request)
    try:
        current, dataset = _where(ctx, current)
        if not (ref or "").strip():
            raise ServiceError("type an item id or a number from 1 to the dataset size, then Go")
        shown = annotate.jump_to(ctx.store, user, dataset, ref)
    except ServiceError as exc:
        return _status_only(_say(f"Cannot open item: {exc}", warn=True))
    return {**_show(ctx, user, dataset, shown, ""), "jump": ""}


_SUMMARY_COLUMNS = {"items": "items labelled", "labels": "labels given", "median_seconds": "median seconds"}


def _readable_distribution(table: pd.DataFrame) -> pd.DataFrame:
    """Label columns in the annotator's words and in step order: All correct, Step 1, Step 2, ..."""
    labels = sorted(
        (c for c in table.columns if c != "annotator"),
        key=lambda c: int(c) if c.lstrip("-").isdigit() else 10**9,
    )
    names = {c: step_list.label_title(int(c)) if c.lstrip("-").isdigit() else c for c in labels}
    return table[["annotator", *labels]].rename(columns=names)


def on_statistics(ctx: AppContext, dataset: str | None, request: gr.Request) -> dict[str, Any]:
    """Counts and label distributions: the user's own, or everyone's and ProcessBench's Table 2 shares
    for roles that may see labels."""
    user = require_user(ctx, request)
    try:
        chosen = _dataset(ctx, dataset)
    except ServiceError as exc:
        return {"stats_note": _say(str(exc), warn=True)}
    stats = statistics.panel_statistics(ctx.store, user, chosen, ["earliest_error"])
    overall = f"**{escape_text(chosen.name)}** · labels: {stats.labels} · items labelled: {stats.items}."
    if stats.everyone:
        note = (
            overall
            + f" Annotators: {stats.annotators}. Every annotator's row is shown (your role may see labels)."
        )
    else:
        note = overall + " Your own labels only: annotators work blind."
    distribution = _readable_distribution(stats.distributions["earliest_error"])
    summary = stats.summary.rename(columns=_SUMMARY_COLUMNS)
    shares = (
        gr.update(value=stats.settlement.rename(columns={"state": "settled"}), visible=True)
        if stats.settlement is not None
        else gr.update(value=None, visible=False)
    )
    return {"stats_note": note, "summary": summary, "distribution": distribution, "shares": shares}


def build(ctx: AppContext, tab: gr.Tab) -> None:
    # Opening the tab claims work, so people using other panels hold no lease here.
    opened = tab.select
    math = {"latex_delimiters": LATEX_DELIMITERS}
    with gr.Column(elem_id="ee-panel"):
        current = gr.State(None)
        with gr.Row(elem_id="ee-layout", equal_height=False):
            with gr.Column(scale=3, min_width=420, elem_id="ee-main"):
                with gr.Accordion("View statistics (v)", open=False, elem_id="ee-stats") as stats:
                    stats_note = gr.Markdown(elem_id="ee-stats-note")
                    summary = Table(
                        label="Labels per annotator", interactive=False, elem_id="ee-stats-annotators"
                    )
                    distribution = Table(
                        label="Label distribution (latest label per item)",
                        interactive=False,
                        elem_id="ee-stats-labels",
                    )
                    shares = Table(
                        label="Items settled at 3/3, 3/4, 3/5 or discarded (ProcessBench Table 2)",
                        interactive=False,
                        elem_id="ee-stats-shares",
                    )
                    refresh = gr.Button("Refresh statistics", size="sm", elem_id="ee-stats-refresh")
                with gr.Row(elem_id="ee-header-row", equal_height=True):
                    header = gr.Markdown(elem_id="ee-header")
                    dataset = gr.Dropdown(
                        choices=[],
                        show_label=False,
                        container=False,
                        scale=0,
                        min_width=220,
                        elem_id="ee-dataset",
                    )
                question = gr.Markdown(elem_id="ee-question", **math)
                images = gr.Gallery(visible=False, show_label=False, height=260, elem_id="ee-images")
                box = gr.Accordion("Reference solution and answer (r)", open=False, elem_id="ee-reference")
                with box:
                    reference = gr.Markdown(elem_id="ee-reference-text", **math)
                steps = gr.Markdown(elem_id="ee-steps", **math)
            with gr.Column(scale=1, min_width=300, elem_id="ee-side"):
                choice = gr.Radio(label="Earliest error: click a step", choices=[], elem_id="ee-choice")
                all_correct = gr.Button("✓ All steps are correct (a)", elem_id="ee-all-correct", size="sm")
                save = gr.Button("Save (s)", variant="primary", elem_id="ee-save")
                with gr.Row(elem_id="ee-nav"):
                    previous = gr.Button("◀ Prev (p)", size="sm", elem_id="ee-previous", min_width=60)
                    skip = gr.Button("Skip (x)", size="sm", elem_id="ee-skip", min_width=60)
                    following = gr.Button("Next (n) ▶", size="sm", elem_id="ee-next", min_width=60)
                # The choice line is apart from the status line: a click's answer that arrives after
                # the save's never hides what the save said.
                chosen = gr.Markdown(elem_id="ee-chosen")
                status = gr.Markdown(elem_id="ee-status")
                progress = gr.Markdown(elem_id="ee-progress-line")
                with gr.Row(elem_id="ee-jump-row"):
                    jump = gr.Textbox(
                        placeholder="Item id or number (g)",
                        show_label=False,
                        container=False,
                        elem_id="ee-jump",
                        scale=3,
                        min_width=120,
                    )
                    go = gr.Button("Go", size="sm", elem_id="ee-go", scale=1, min_width=50)
                gr.Markdown(SHORTCUTS, elem_id="ee-keys")

    item = Outputs(
        header=header,
        question=question,
        images=images,
        reference_box=box,
        reference=reference,
        steps=steps,
        choice=choice,
        status=status,
        progress=progress,
        current=current,
        chosen=chosen,
    )
    shown = Outputs(dataset=dataset, jump=jump, **item.components)
    stats_out = Outputs(stats_note=stats_note, summary=summary, distribution=distribution, shares=shares)
    # Annotation events skip Gradio's queue: they are short, the store serialises writes, and the
    # unqueued path halves the latency an annotator feels (bench/run.py: queued vs unqueued).
    private = {"api_visibility": "private", "show_progress": "minimal", "queue": False}
    quiet = {"api_visibility": "private", "show_progress": "hidden", "queue": False}
    heavy = {"api_visibility": "private", "show_progress": "minimal"}
    opened(shown.bind(on_tab_open, ctx), [dataset, current], [dataset, *item], **private)
    dataset.input(item.bind(on_dataset_change, ctx), [dataset, current], list(item), **private)
    choice.input(item.bind(on_choose, ctx), [choice, current], [chosen], trigger_mode="always_last", **quiet)
    all_correct.click(item.bind(on_all_correct, ctx), [current], [choice, chosen], **quiet)
    save.click(item.bind(on_save, ctx), [choice, current], list(item), **private)
    skip.click(item.bind(on_skip, ctx), [current], list(item), **private)
    previous.click(item.bind(on_previous, ctx), [current], list(item), **private)
    following.click(item.bind(on_next, ctx), [current], list(item), **private)
    for event in (jump.submit, go.click):
        event(shown.bind(on_jump, ctx), [jump, current], [*item, jump], **private)
    for event in (stats.expand, refresh.click):
        event(stats_out.bind(on_statistics, ctx), [dataset], list(stats_out), **heavy)
