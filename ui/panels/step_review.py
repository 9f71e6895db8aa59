"""Step review: the PRMBench-V "Process Reward Annotation Tool" (its Figure 13).

The annotator sees one sample (info, question, image, reference answer and error steps), the
original and modified steps side by side with the changes marked, and the modification rationale;
marks the original chain Correct/Incorrect, the modification Reasonable/Unreasonable and the
difficulty Easy/Medium/Hard, and saves; Previous / Skip / Next / jump move through the dataset.
"View statistics" and "Export data" live in step_review_actions; what is shown is built by the
pure functions of step_review_render.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import gradio as gr

from qc.gate import GateError, now_utc, submit
from store.assignments import progress
from store.datasets import Dataset, list_datasets
from store.records import STEP_REVIEW
from store.users import Annotator
from store.work import (
    WorkError,
    WorkItem,
    dataset_for,
    jump_to,
    next_in_history,
    next_item,
    previous_item,
    skip_item,
)
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext
from ui.panels import step_review_actions as actions
from ui.panels import step_review_render as view
from ui.render import LATEX_DELIMITERS, safe_markdown

__all__ = ["build"]

ORIGINAL = [("Correct", "correct"), ("Incorrect", "incorrect")]
MODIFICATION = [("Reasonable", "reasonable"), ("Unreasonable", "unreasonable")]
DIFFICULTY = [("Easy", "easy"), ("Medium", "medium"), ("Hard", "hard")]
_WORDS = {value: label for label, value in ORIGINAL + MODIFICATION + DIFFICULTY}


def _skip_all(n: int) -> tuple:
    return tuple(gr.skip() for _ in range(n))


def _work_state(work: WorkItem) -> dict[str, Any]:
    """What the page keeps between events: ids, when the sample was opened, and this annotator's own
    saved label (never anyone else's), so that saving it again untouched adds no row to the log."""
    return {
        "dataset": work.dataset.name, "item_id": work.item.item_id, "version_id": work.item.version_id,
        "external_id": work.item.external_id, "position": work.position, "state": work.state,
        "saved_label": work.my_label, "request_id": uuid.uuid4().hex, "opened_at": time.time(),
    }  # fmt: skip


def _where(work: dict[str, Any]) -> str:
    return f"sample {work.get('position')} ({work.get('external_id')})"


def _show(
    work: WorkItem | None,
    message: str,
    progress_counts: dict[str, int] | None = None,
    dataset: str | None = None,
) -> tuple:
    """Every component of the sample view, for an opened item or for none (message says why)."""
    if work is None:
        # One update object per component: Gradio consumes an update while applying it.
        return (
            view.progress_markdown(progress_counts or {}, None), "", "", gr.update(value=None, visible=False), "",
            "", "", gr.update(value=None), gr.update(value=None), gr.update(value=None, info=""), "", "",
            message, {"dataset": dataset} if dataset else {},
        )  # fmt: skip
    item = work.item
    label = work.my_label or {}
    chosen = sum(1 for f in ("original", "modification", "difficulty") if label.get(f))
    notice = {"resumed": "You were working on this sample; here it is again.",
              "done": "You already labelled this sample: change a choice and save to correct it."}  # fmt: skip
    rationale = safe_markdown(item.rationale) if item.rationale else "*no rationale in the data*"
    return (
        view.progress_markdown(work.progress, work.position),
        view.info_markdown(item.external_id, item.source, item.error_type, item.version),
        view.question_markdown(item.question, item.meta.get("questions")),
        gr.update(
            value=item.image_paths[0] if item.image_paths else None,
            visible=bool(item.image_paths),
            label="Problem image" + (f" (1 of {len(item.image_paths)})" if len(item.image_paths) > 1 else ""),
        ),
        view.answer_markdown(
            item.reference_answer,
            item.error_steps,
            item.modified_steps,
            item.meta.get("dropped_step_numbers"),
        ),
        "**Modification rationale**\n\n" + rationale,
        view.steps_html(
            item.steps.get("original", []),
            item.steps.get("modified", []),
            item.error_steps,
            item.modified_steps,
        ),
        gr.update(value=label.get("original")),
        gr.update(value=label.get("modification")),
        gr.update(value=label.get("difficulty"), info=view.difficulty_hint(item.error_steps)),
        label.get("note", ""),
        view.sample_progress(chosen, work.state),
        " ".join(m for m in (message, notice.get(work.state, "")) if m),
        _work_state(work),
    )


VIEW_SIZE = 14  # components _show() fills, in the order of build()'s view_outputs
_STATUS = 12  # the status line's place among them


def _dataset(ctx: AppContext, name: str | None) -> Dataset:
    if not name:
        raise WorkError("no step review dataset is chosen: pick one in the list at the top left; if the list "
                        "is empty, an admin imports a PRMBench file first (Data tab)")  # fmt: skip
    return dataset_for(ctx.store, name, STEP_REVIEW)


def _after(ctx: AppContext, user: Annotator, dataset: Dataset, work: WorkItem | None, message: str) -> tuple:
    """The view after a move: the sample reached, or a page that says nothing is left and keeps the dataset."""
    if work is None:
        counts = progress(ctx.store, dataset.id, user.id)
        done = (f"Nothing left for you in {dataset.name}: every sample is labelled or taken by others. "
                "Previous (P) goes back through your labels.")  # fmt: skip
        return _show(None, f"{message} {done}".strip(), counts, dataset.name)
    return _show(work, message)


def _status_only(message: str, n: int = VIEW_SIZE) -> tuple:
    """A refused move: the page stays as it is, the status line and a toast say why."""
    gr.Warning(message)
    out = list(_skip_all(n))
    out[_STATUS] = message
    return tuple(out)


def on_open(ctx: AppContext, dataset_name: str | None, request: gr.Request) -> tuple:
    """Page load or another dataset chosen: the sample this annotator holds, else the next one."""
    user = require_user(ctx, request)
    try:
        dataset = _dataset(ctx, dataset_name)
    except WorkError as exc:
        return _show(None, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    return _after(ctx, user, dataset, next_item(ctx.store, user, dataset, now_utc()), "")


def _choices(original: str | None, modification: str | None, difficulty: str | None, note: str | None
             ) -> dict[str, str]:  # fmt: skip
    """The label as the page shows it now, in the form the store keeps it (empty fields left out)."""
    shown = {"original": original, "modification": modification, "difficulty": difficulty,
             "note": (note or "").strip()}  # fmt: skip
    return {k: v for k, v in shown.items() if v}


def _unsaved(work: dict[str, Any], shown: dict[str, str]) -> str | None:
    """Choices on the page that differ from what is stored (nothing, for a new sample) are not to be lost."""
    if work.get("item_id") and shown != (work.get("saved_label") or {}):
        return (f"{_where(work).capitalize()} has unsaved choices: press Save annotation (S) first, "
                "or Skip (K) to leave it without saving.")  # fmt: skip
    return None


def on_previous(ctx: AppContext, work: dict[str, Any], original: str | None, modification: str | None,
                difficulty: str | None, note: str, request: gr.Request) -> tuple:  # fmt: skip
    """Back through this annotator's own labelled samples."""
    user = require_user(ctx, request)
    work = work or {}
    if warning := _unsaved(work, _choices(original, modification, difficulty, note)):
        return _status_only(warning)
    try:
        dataset = _dataset(ctx, work.get("dataset"))
    except WorkError as exc:
        return _status_only(f"Cannot go back: {exc}.")
    found = previous_item(ctx.store, user, dataset, work.get("item_id"))
    if found is None:
        return _status_only("There is no earlier sample you labelled in this dataset.")
    return _show(found, "")


def on_next(ctx: AppContext, work: dict[str, Any], original: str | None, modification: str | None,
            difficulty: str | None, note: str, request: gr.Request) -> tuple:  # fmt: skip
    """Forward through the annotator's own labels, then on to new work; an unsaved new sample stays."""
    user = require_user(ctx, request)
    work = work or {}
    if warning := _unsaved(work, _choices(original, modification, difficulty, note)):
        return _status_only(warning)
    if work.get("state") in ("new", "resumed"):
        return _status_only(f"{_where(work).capitalize()} is not saved: save it (S), or Skip (K) to give it "
                            "back to the pool.")  # fmt: skip
    try:
        dataset = _dataset(ctx, work.get("dataset"))
    except WorkError as exc:
        return _status_only(f"Cannot go on: {exc}.")
    if not work.get("item_id"):
        return _after(ctx, user, dataset, next_item(ctx.store, user, dataset, now_utc()), "")
    return _after(
        ctx, user, dataset, next_in_history(ctx.store, user, dataset, work["item_id"], now_utc()), ""
    )


def on_skip(ctx: AppContext, work: dict[str, Any], request: gr.Request) -> tuple:
    """Leave the sample without saving: a new one goes back to the pool (and returns to you last)."""
    user = require_user(ctx, request)
    work = work or {}
    try:
        dataset = _dataset(ctx, work.get("dataset"))
    except WorkError as exc:
        return _status_only(f"Cannot skip: {exc}.")
    if not work.get("item_id"):
        return _after(ctx, user, dataset, next_item(ctx.store, user, dataset, now_utc()), "")
    if work.get("state") in ("new", "resumed"):
        found = skip_item(ctx.store, user, dataset, work["item_id"], now_utc())
        return _after(
            ctx, user, dataset, found, f"Skipped {_where(work)}: it comes back to you after the rest."
        )
    found = next_in_history(ctx.store, user, dataset, work["item_id"], now_utc())
    return _after(ctx, user, dataset, found, f"Left {_where(work)} unchanged.")


def on_jump(ctx: AppContext, work: dict[str, Any], dataset_name: str | None, ref: str, original: str | None,
            modification: str | None, difficulty: str | None, note: str, request: gr.Request) -> tuple:  # fmt: skip
    """Open a sample by its id or its number in the dataset; the jump box empties on success."""
    user = require_user(ctx, request)
    work = work or {}
    if warning := _unsaved(work, _choices(original, modification, difficulty, note)):
        return (*_status_only(warning), gr.skip())
    if not (ref or "").strip():
        return (
            *_status_only("Type a sample number (1, 2, ...) or a sample id in the jump box first."),
            gr.skip(),
        )
    try:
        dataset = _dataset(ctx, dataset_name)
        found = jump_to(ctx.store, user, dataset, ref, now_utc())
    except WorkError as exc:
        return (*_status_only(f"Cannot jump to {ref.strip()!r}: {exc}."), gr.skip())
    return (*_show(found, ""), "")


def on_choice(ctx: AppContext, original: str | None, modification: str | None, difficulty: str | None,
              note: str, work: dict[str, Any], request: gr.Request) -> str:  # fmt: skip
    """A choice clicked or a note typed: the current-sample line counts it and says whether it is saved."""
    require_user(ctx, request)
    work = work or {}
    shown = _choices(original, modification, difficulty, note)
    chosen = sum(1 for f in ("original", "modification", "difficulty") if f in shown)
    return view.sample_progress(chosen, work.get("state"), dirty=shown != (work.get("saved_label") or {}))


UNCHANGED = "unchanged"  # what on_save tells on_after_save when a saved label was confirmed as it is


def on_save(ctx: AppContext, work: dict[str, Any], original: str | None, modification: str | None,
            difficulty: str | None, note: str, request: gr.Request) -> tuple:  # fmt: skip
    """Store the three assessments through the gate; say exactly what was saved, or why not.

    Saving a label already stored, untouched, adds no row: the log stays one row per decision.
    """
    user = require_user(ctx, request)
    work = work or {}
    if not work.get("item_id"):
        gr.Warning("No sample is open: nothing was saved.")
        return "No sample is open: nothing was saved.", gr.skip(), gr.skip(), None
    payload = _choices(original, modification, difficulty, note)
    if payload == work.get("saved_label"):
        message = f"Nothing changed on {_where(work)}: your saved label stays."
        return message, view.sample_progress(3, "saved"), gr.skip(), UNCHANGED
    try:
        result = submit(
            ctx.store,
            annotator=user,
            item_id=work["item_id"],
            version_id=work["version_id"],
            payload=payload,
            request_id=work["request_id"],
            seconds_spent=round(max(0.0, time.time() - float(work.get("opened_at") or time.time())), 1),
        )
    except GateError as exc:
        message = f"Not saved ({_where(work)}): {exc}."
        gr.Warning(message)
        return message, gr.skip(), gr.skip(), None
    said = " · ".join(_WORDS[v] for v in (original, modification, difficulty) if v)
    fresh = {**work, "state": "saved", "saved_label": payload, "request_id": uuid.uuid4().hex,
             "opened_at": time.time()}  # fmt: skip
    message = f"Saved {_where(work)}: {said}." + (
        " (already stored; counted once)" if result.duplicate else ""
    )
    return message, view.sample_progress(3, "saved"), fresh, result.annotation_id


def on_after_save(ctx: AppContext, work: dict[str, Any], saved: int | str | None, move_on: bool,
                  request: gr.Request) -> tuple:  # fmt: skip
    """With "Go to the next sample after saving" on, open the next sample once the save is stored."""
    user = require_user(ctx, request)
    work = work or {}
    if not saved or not move_on or not work.get("item_id"):
        return _skip_all(VIEW_SIZE)
    try:
        dataset = _dataset(ctx, work.get("dataset"))
    except WorkError as exc:
        return _status_only(f"Saved, but cannot go on: {exc}.")
    found = next_in_history(ctx.store, user, dataset, work["item_id"], now_utc())
    said = f"{_where(work).capitalize()} unchanged." if saved == UNCHANGED else f"Saved {_where(work)}."
    return _after(ctx, user, dataset, found, said)


def on_page_load(ctx: AppContext, request: gr.Request) -> tuple:
    """Datasets imported since the app started, and the exports this user's role may take."""
    user = require_user(ctx, request)
    names = [d.name for d in list_datasets(ctx.store, task=STEP_REVIEW)]
    return gr.update(choices=names), gr.update(choices=actions.export_choices(user))


def build(ctx: AppContext) -> None:
    names = [d.name for d in list_datasets(ctx.store, task=STEP_REVIEW)]
    work = gr.State({})
    saved = gr.State(None)
    with gr.Row(elem_id="step-review-toolbar", equal_height=True):
        dataset = gr.Dropdown(names, value=names[0] if names else None, label="Dataset", show_label=False,
                              container=False, scale=2, min_width=200, elem_id="step-review-dataset")  # fmt: skip
        with gr.Column(scale=4, min_width=300):
            progress_md = gr.Markdown(elem_id="step-review-progress")
        jump_box = gr.Textbox(placeholder="Jump to sample: number or id (/)", show_label=False,
                              container=False, scale=2, min_width=200, max_lines=1, elem_id="step-review-jump")  # fmt: skip
        jump = gr.Button("Go", scale=0, min_width=60, elem_id="step-review-jump-go", size="md")
    with gr.Row(elem_id="step-review-sample"):
        with gr.Column(scale=3):
            info_md = gr.Markdown(elem_id="step-review-info", latex_delimiters=LATEX_DELIMITERS)
            question_md = gr.Markdown(elem_id="step-review-question", latex_delimiters=LATEX_DELIMITERS,
                                      line_breaks=True)  # fmt: skip
            answer_md = gr.Markdown(elem_id="step-review-answer", latex_delimiters=LATEX_DELIMITERS)
        with gr.Column(scale=2, min_width=280):
            image = gr.Image(label="Problem image", visible=False, height=280, type="filepath", interactive=False,
                             elem_id="step-review-image", buttons=["fullscreen"])  # fmt: skip
            rationale_md = gr.Markdown(elem_id="step-review-rationale", latex_delimiters=LATEX_DELIMITERS,
                                       line_breaks=True)  # fmt: skip
    steps_md = gr.Markdown(elem_id="step-review-steps", latex_delimiters=LATEX_DELIMITERS)
    # Gradio 6 repeats a Group's elem_id on its inner box: the id goes on a Column around it.
    with gr.Column(elem_id="step-review-assess"), gr.Group():
        with gr.Row(equal_height=True):
            original = gr.Radio(ORIGINAL, label="Original steps", elem_id="step-review-original", scale=4,
                                min_width=220, info="No calculation or logic errors?")  # fmt: skip
            modification = gr.Radio(MODIFICATION, label="Modification", elem_id="step-review-modification",
                                    scale=5, min_width=270, info="Matches the error type and rationale?")  # fmt: skip
            difficulty = gr.Radio(DIFFICULTY, label="Difficulty", elem_id="step-review-difficulty", scale=5,
                                  min_width=270)  # fmt: skip
            with gr.Column(scale=4, min_width=200, elem_id="step-review-note-column"):
                note = gr.Textbox(label="Note (optional)", elem_id="step-review-note", lines=1, max_lines=3)
                move_on = gr.Checkbox(True, label="Next sample after saving", elem_id="step-review-move-on",
                                      container=False)  # fmt: skip
        with gr.Row(elem_id="step-review-actions", equal_height=True):
            with gr.Column(scale=5, min_width=300, elem_id="step-review-lines"):
                sample_md = gr.Markdown(elem_id="step-review-sample-progress")
                status_md = gr.Markdown(elem_id="step-review-status")
            previous = gr.Button("◀ Previous (P)", elem_id="step-review-previous", size="sm", scale=1)
            skip = gr.Button("Skip (K)", elem_id="step-review-skip", size="sm", scale=1)
            nxt = gr.Button("Next ▶ (N)", elem_id="step-review-next", size="sm", scale=1)
            save = gr.Button("Save annotation (S)", variant="primary", elem_id="step-review-save", size="sm",
                             scale=2)  # fmt: skip
    with gr.Accordion("Annotation instructions and keys", open=False, elem_id="step-review-instructions"):
        gr.Markdown(view.INSTRUCTIONS)
    export_choice = actions.build(ctx, dataset)

    view_outputs = [progress_md, info_md, question_md, image, answer_md, rationale_md, steps_md, original,
                    modification, difficulty, note, sample_md, status_md, work]  # fmt: skip
    assert len(view_outputs) == VIEW_SIZE
    gr.on(None, bind(on_open, ctx), inputs=[dataset], outputs=view_outputs, api_visibility="private")
    gr.on(
        None, bind(on_page_load, ctx), inputs=None, outputs=[dataset, export_choice], api_visibility="private"
    )
    shown = [original, modification, difficulty, note]
    previous.click(bind(on_previous, ctx), [work, *shown], view_outputs, api_visibility="private")
    nxt.click(bind(on_next, ctx), [work, *shown], view_outputs, api_visibility="private")
    skip.click(bind(on_skip, ctx), [work], view_outputs, api_visibility="private")
    gr.on([jump.click, jump_box.submit], bind(on_jump, ctx), [work, dataset, jump_box, *shown],
          [*view_outputs, jump_box], api_visibility="private")  # fmt: skip
    gr.on([original.input, modification.input, difficulty.input, note.input], bind(on_choice, ctx),
          [*shown, work], sample_md, api_visibility="private",
          queue=False, trigger_mode="always_last")  # fmt: skip
    save.click(
        bind(on_save, ctx),
        [work, original, modification, difficulty, note],
        [status_md, sample_md, work, saved],
        api_visibility="private",
    ).then(bind(on_after_save, ctx), [work, saved, move_on], view_outputs, api_visibility="private")
