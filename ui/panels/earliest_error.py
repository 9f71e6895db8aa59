"""Earliest error: ProcessBench's expert annotation (its Section 3.2), blind, three to five per item.

The annotator reads a problem and its step-by-step solution and marks the earliest wrong step, or
"all steps are correct" (label -1). Which item comes next, how many annotators an item needs and
when it is settled are the services' business (services.annotate, the task spec): the panel
shows what they return. Handlers only ever return the session user's own label; other annotators'
statistics are for adjudicators and admins.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate
from services.annotate import WorkItem
from services.errors import AlreadyLabelled, ServiceError
from services.records import Annotator, Dataset
from tasks import EARLIEST_ERROR
from ui import step_list
from ui.context import AppContext
from ui.kit.annotation import AnnotationKit, Current, progress_line, quick_events
from ui.kit.keymap import keys_line
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.panels.earliest_error_stats import on_statistics, stats_section
from ui.render import LATEX_DELIMITERS, escape_text

__all__ = [
    "build",
    "on_all_correct",
    "on_choose",
    "on_save",
    "on_statistics",
    "on_tab_open",
]

PANEL = EARLIEST_ERROR  # drafts are kept per user and panel
SHORTCUTS = "**Keys:** click a step, or (**?** shows them all, with what counts as an error): " + keys_line(
    "Earliest error"
)
NO_DATASET = "No earliest-error dataset yet: an admin imports one (a ProcessBench file) in the Data tab."
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
    return Current.of(current).draft_key


def _chosen_line(label: int | None) -> str:
    return f"Your choice: **{step_list.label_title(label)}** (not saved yet: **s** or Save)"


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
            "progress": progress_line(counts or {}, bar="ee-progress"),
            "current": Current.none_in(dataset),
        }
    item = shown.item
    solution = item.steps.get("solution") or []
    mine = step_list.parse_choice((shown.my_label or {}).get("earliest_error"), len(solution))
    current = Current.opened(dataset, shown, n_steps=len(solution), my_label=mine)
    draft = step_list.parse_choice(KIT.draft(ctx, user, current), len(solution))
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
        "progress": progress_line(shown.progress, bar="ee-progress"),
        "current": current.state_dict(),
    }


KIT = AnnotationKit(EARLIEST_ERROR, NO_DATASET, _show, remembers=True)


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the annotator's item (the one they hold first); coming back changes nothing."""
    return KIT.on_tab(ctx, KIT.user(ctx, request), dataset, current, {})


def on_choose(ctx: AppContext, choice: Any, state: Any, request: gr.Request) -> dict[str, Any]:
    """A click on a step (or a key): kept as this user's draft on the server until it is saved."""
    user, current = KIT.user(ctx, request), Current.of(state)
    if not current.has_item:
        return {"chosen": refusal("Open an item first.")}
    if KIT.late(ctx, user, current):
        return {}  # a click that reached the server after its item was saved: nothing to keep
    label = step_list.parse_choice(choice, int(current.get("n_steps")))
    KIT.keep_draft(ctx, user, current, label)
    return {"chosen": _chosen_line(label)}


def on_all_correct(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    chosen = on_choose(ctx, step_list.ALL_CORRECT, current, request)
    if not Current.of(current).has_item:
        return chosen
    return {"choice": gr.Radio(value=step_list.ALL_CORRECT), **chosen}


def on_save(ctx: AppContext, choice: Any, state: Any, request: gr.Request) -> dict[str, Any]:
    """Store the label, then show the next item; a missing choice stores nothing.

    The reply says "saved" and nothing of the item's state: on a blind task that would tell the
    annotator what the others chose.
    """
    user, current = KIT.user(ctx, request), Current.of(state)
    if not current.has_item:
        return KIT.status("There is no item to save.", warn=True)
    label = step_list.parse_choice(choice, int(current.get("n_steps")))
    if label is None:
        message = (
            "Nothing saved: click the earliest wrong step (or type its number), or choose "
            "'All steps are correct' (a), then save."
        )
        return KIT.status(message, warn=True)
    receipt = None
    try:
        dataset = KIT.dataset(ctx, current.dataset)
        if current.state == "done" and label == current.get("my_label"):
            saved = "No change to your label"
            KIT.clear_draft(ctx, user, current)  # nothing stored: KIT.submit would have cleared it
        else:
            receipt = KIT.submit(ctx, user, current, {"earliest_error": label})
            saved = (
                "Already saved"
                if receipt.duplicate
                else ("Saved your correction" if current.state == "done" else "Saved")
            )
    except AlreadyLabelled as exc:
        # Saved from another tab: show the item as it is stored, with that label, to correct if wanted
        # (this tab's unsaved choice goes, or it would be shown over the stored label).
        KIT.clear_draft(ctx, user, current)
        stored = annotate.jump_to(ctx.store, user, dataset, str(current.external_id or ""))
        return KIT.show(ctx, user, dataset, stored, refusal(f"Not saved: {exc}"))
    except ServiceError as exc:
        return KIT.status(f"Not saved: {exc} (n opens your next item)", warn=True)
    shown = KIT.following(ctx, user, current, dataset, receipt)
    following = f"item {escape_text(shown.item.external_id)}" if shown else "nothing left for you here"
    message = f"✓ {saved}: **{step_list.label_title(label)}**. Next item: {following}."
    return KIT.show(ctx, user, dataset, shown, message)


def build(ctx: AppContext, tab: gr.Tab) -> None:
    # Opening the tab claims work, so people using other panels hold no lease here.
    opened = tab.select
    math = {"latex_delimiters": LATEX_DELIMITERS}
    with gr.Column(elem_id="ee-panel"):
        current = gr.State(None)
        with gr.Row(elem_id="ee-layout", equal_height=False):
            with gr.Column(scale=3, min_width=420, elem_id="ee-main"):
                stats, refresh, stats_out = stats_section()
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
    # Annotation events skip Gradio's queue: they are short, the store serialises writes, and the
    # unqueued path halves the latency an annotator feels (bench/run.py: queued vs unqueued).
    private = quick_events()
    heavy = {"api_visibility": "private", "show_progress": "minimal"}
    opened(shown.bind(on_tab_open, ctx), [dataset, current], [dataset, *item], **private)
    dataset.input(item.bind(KIT.on_dataset_change, ctx), [dataset, current], list(item), **private)
    choice.input(
        item.bind(on_choose, ctx), [choice, current], [chosen], trigger_mode="always_last", **private
    )
    all_correct.click(item.bind(on_all_correct, ctx), [current], [choice, chosen], **private)
    save.click(item.bind(on_save, ctx), [choice, current], list(item), **private)
    skip.click(item.bind(KIT.on_skip, ctx), [current], list(item), **private)
    previous.click(item.bind(KIT.on_previous, ctx), [current], list(item), **private)
    following.click(item.bind(KIT.on_next, ctx), [current], list(item), **private)
    for event in (jump.submit, go.click):
        event(shown.bind(KIT.on_jump, ctx), [jump, current], [*item, jump], **private)
    for event in (stats.expand, refresh.click):
        event(stats_out.bind(on_statistics, ctx), [dataset], list(stats_out), **heavy)
