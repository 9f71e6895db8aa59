"""Step review: the PRMBench-V "Process Reward Annotation Tool" (its Figure 13).

The annotator sees one sample (info, question, image, reference answer and error steps), the
original and modified steps side by side with the changes marked, and the modification rationale;
marks the original chain Correct/Incorrect, the modification Reasonable/Unreasonable and the
difficulty Easy/Medium/Hard, and saves; Previous / Skip / Next / jump move through the dataset.
Choices not saved yet are kept as a draft in the browser, keyed by annotator, so a reload or a
server restart loses nothing and a shared browser stays blind. "View statistics" and "Export data"
live in step_review_actions; what is shown is built by the pure functions of step_review_render.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import gradio as gr

from services import annotate, statistics
from services.annotate import WorkItem
from services.errors import ServiceError
from services.records import Annotator, Dataset
from tasks import STEP_REVIEW
from tasks.step_review import FEATURES as STEP_REVIEW_FEATURES
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.messages import refusal
from ui.kit.opening import seconds_open
from ui.kit.outputs import Outputs
from ui.panels import step_review_actions as actions
from ui.panels import step_review_disputes as disputes
from ui.panels import step_review_render as view
from ui.render import LATEX_DELIMITERS, escape_text, safe_markdown

__all__ = [
    "build",
    "next_after_save",
    "on_choice",
    "on_dataset_change",
    "on_jump",
    "on_next",
    "on_previous",
    "on_save",
    "on_skip",
    "on_tab_open",
]

ORIGINAL = [("Correct (C)", "correct"), ("Incorrect (I)", "incorrect")]
MODIFICATION = [("Reasonable (R)", "reasonable"), ("Unreasonable (U)", "unreasonable")]
DIFFICULTY = [("Easy (E)", "easy"), ("Medium (M)", "medium"), ("Hard (H)", "hard")]
_WORDS = {value: label.split(" (")[0] for label, value in ORIGINAL + MODIFICATION + DIFFICULTY}
FIELDS = ("original", "modification", "difficulty")
FEATURES = tuple(STEP_REVIEW_FEATURES)  # "Select applicable features" above each chain


# What showing a sample fills, by name (ui.kit.outputs): a handler returns the names it changes.
VIEW = (
    "progress",
    "info",
    "question",
    "image",
    "answer",
    "rationale",
    "steps",
    "original_features",
    "modified_features",
    "original",
    "modification",
    "difficulty",
    "note",
    "sample",
    "status",
    "work",
)


def _work_state(work: WorkItem) -> dict[str, Any]:
    """What the page keeps between events: ids, when the sample was opened, and this annotator's own
    saved label (never anyone else's), so that saving it again untouched adds no row to the log."""
    return {
        "dataset": work.dataset.name,
        "item_id": work.item.item_id,
        "version_id": work.item.version_id,
        "external_id": work.item.external_id,
        "position": work.position,
        "state": work.state,
        "saved_label": work.my_label,
        "request_id": uuid.uuid4().hex,
        "opened_at": time.time(),
    }


def _where(work: dict[str, Any]) -> str:
    return f"sample {work.get('position')} ({work.get('external_id')})"


def _target(ctx: AppContext, work: WorkItem) -> int | None:
    # The dataset's rule, not the item's state: the latter would move with the others' labels.
    return annotate.annotators_per_item(work.dataset)


def _show(
    ctx: AppContext,
    user: Annotator,
    work: WorkItem | None,
    message: str,
    progress_counts: dict[str, int] | None = None,
    dataset: str | None = None,
) -> dict[str, Any]:
    """Every component of the sample view, for an opened item or for none (message says why)."""
    if work is None:
        # One update object per component: Gradio consumes an update while applying it.
        return _named(
            view.progress_markdown(progress_counts or {}, None),
            "",
            "",
            gr.update(value=None, visible=False),
            "",
            "",
            "",
            gr.update(value=[], choices=[], visible=False),
            gr.update(value=[], choices=[], visible=False),
            gr.update(value=None),
            gr.update(value=None),
            gr.update(value=None, info=view.DIFFICULTY_RULE),
            "",
            "",
            message,
            {"dataset": dataset} if dataset else {},
        )
    item, state = work.item, _work_state(work)
    draft = actions.draft_for(ctx, user, state, work.my_label)
    label = draft or work.my_label or {}
    chosen = sum(1 for f in FIELDS if label.get(f))
    notice = view.NOTICES["draft" if draft else work.state]
    rationale = safe_markdown(item.rationale) if item.rationale else "*no rationale in the data*"
    images = item.image_paths
    # Feature names are an admin's setting, shown as choice labels (Gradio escapes them).
    options = [str(f) for f in work.dataset.setting("features") or []]
    features = [
        gr.update(
            choices=options, value=[f for f in label.get(key, []) if f in options], visible=bool(options)
        )
        for key in FEATURES
    ]
    return _named(
        view.progress_markdown(work.progress, work.position),
        view.info_markdown(item.external_id, item.source, item.error_type, item.version, _target(ctx, work)),
        view.question_markdown(item.question, item.meta.get("questions")),
        gr.update(
            value=[(p, view.image_caption(k, len(images))) for k, p in enumerate(images)] or None,
            visible=bool(images),
            selected_index=0 if images else None,
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
        *features,
        gr.update(value=label.get("original")),
        gr.update(value=label.get("modification")),
        gr.update(
            value=label.get("difficulty"),
            info=view.difficulty_hint(item.error_steps, work.dataset.setting("difficulty_required")),
        ),
        label.get("note", ""),
        view.sample_progress(chosen, work.state, dirty=draft is not None),
        " ".join(m for m in (message, notice) if m),
        state,
    )


def _named(*values: Any) -> dict[str, Any]:
    return dict(zip(VIEW, values, strict=True))


def _dataset(ctx: AppContext, name: str | None) -> Dataset:
    if not name:
        raise ServiceError(
            "no step review dataset is chosen: pick one in the list at the top left; if the list "
            "is empty, an admin imports a PRMBench file first (Data tab)"
        )
    return annotate.dataset_for(ctx.store, name, STEP_REVIEW)


def _after(
    ctx: AppContext, user: Annotator, dataset: Dataset, work: WorkItem | None, message: str
) -> dict[str, Any]:
    """The view after a move: the sample reached, or a page that says nothing is left and keeps the dataset."""
    if work is None:
        counts = annotate.progress(ctx.store, user, dataset)
        done = escape_text(
            f"Nothing left for you in {dataset.name}. {annotate.why_nothing_left(ctx.store, user, dataset)} "
            "Previous (P) goes back through your labels."
        )
        return _show(ctx, user, None, f"{message} {done}".strip(), counts, dataset.name)
    return _show(ctx, user, work, message)


def _status_only(message: str) -> dict[str, Any]:
    """A refused move: the page stays as it is, the status line and a toast say why."""
    return {"status": refusal(message)}


def _open(ctx: AppContext, user: Annotator, name: str | None, message: str = "") -> dict[str, Any]:
    try:
        dataset = _dataset(ctx, name)
    except ServiceError as exc:
        return _show(ctx, user, None, escape_text(f"{str(exc)[:1].upper()}{str(exc)[1:]}."))
    return _after(ctx, user, dataset, annotate.next_item(ctx.store, user, dataset), message)


def _has_item(work: Any) -> bool:
    return isinstance(work, dict) and work.get("item_id") is not None


def on_tab_open(ctx: AppContext, dataset_name: str | None, work: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the sample this annotator holds, else the next one, in the dataset they last
    worked on; coming back to the tab changes nothing.

    Work is claimed here and not on page load, so people using other panels hold no lease on step review.
    """
    user = require_user(ctx, request)
    names = statistics.dataset_names(ctx.store, STEP_REVIEW)
    wanted = [
        n
        for n in (
            work.get("dataset") if _has_item(work) else None,
            actions.remembered_dataset(ctx, user),
            dataset_name,
        )
        if n in names
    ]
    name = wanted[0] if wanted else (names[0] if names else None)
    picker = gr.update(choices=names, value=name)
    exports = gr.update(choices=actions.export_choices(user))
    shown = {"dataset": picker, "exports": exports, "disputes": gr.update(visible=user.can_see_labels)}
    if _has_item(work) and work["dataset"] == name:
        return shown
    return {**shown, **_open(ctx, user, name)}


def on_dataset_change(
    ctx: AppContext, dataset_name: str | None, work: Any, request: gr.Request
) -> dict[str, Any]:
    """Another dataset chosen: its next sample, and remembered for this annotator (for the next reload);
    unsaved choices on the sample left stay as a draft."""
    user = require_user(ctx, request)
    actions.remember_dataset(ctx, user, dataset_name)
    if _has_item(work) and work["dataset"] == dataset_name:
        return {}
    return _open(ctx, user, dataset_name)


def _choices(
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str | None,
    original_features: list[str] | None = None,
    modified_features: list[str] | None = None,
) -> dict[str, Any]:
    """The label as the page shows it now, in the form the store keeps it (empty fields left out)."""
    shown: dict[str, Any] = {
        "original": original,
        "modification": modification,
        "difficulty": difficulty,
        "note": (note or "").strip(),
        "original_features": sorted(set(original_features or [])),
        "modified_features": sorted(set(modified_features or [])),
    }
    return {k: v for k, v in shown.items() if v}


class _Refused(Exception):
    """A move the page refuses: the message says why and what to do."""


def _leaving(
    ctx: AppContext, work: dict[str, Any], shown: tuple, verb: str, name: str | None = None
) -> Dataset:
    """The dataset to move in; refused while the page holds choices that differ from what is stored."""
    if work.get("item_id") and _choices(*shown) != (work.get("saved_label") or {}):
        raise _Refused(
            f"{_where(work).capitalize()} has unsaved choices: press Save annotation (S) first, "
            "or Skip (X) to leave it without saving."
        )
    try:
        return _dataset(ctx, name or work.get("dataset"))
    except ServiceError as exc:
        raise _Refused(f"Cannot {verb}: {exc}.") from exc


def on_previous(
    ctx: AppContext,
    work: dict[str, Any],
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str,
    original_features: list[str] | None,
    modified_features: list[str] | None,
    request: gr.Request,
) -> dict[str, Any]:
    """Back through this annotator's own labelled samples."""
    user, work = require_user(ctx, request), work or {}
    try:
        dataset = _leaving(
            ctx,
            work,
            (original, modification, difficulty, note, original_features, modified_features),
            "go back",
        )
        found = annotate.previous_item(ctx.store, user, dataset, work.get("item_id"))
        if found is None:
            raise _Refused("There is no earlier sample you labelled in this dataset.")
    except _Refused as refused:
        return _status_only(str(refused))
    return _show(ctx, user, found, "")


def on_next(
    ctx: AppContext,
    work: dict[str, Any],
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str,
    original_features: list[str] | None,
    modified_features: list[str] | None,
    request: gr.Request,
) -> dict[str, Any]:
    """Forward through the annotator's own labels, then on to new work; an unsaved new sample stays."""
    user, work = require_user(ctx, request), work or {}
    try:
        shown = (original, modification, difficulty, note, original_features, modified_features)
        dataset = _leaving(ctx, work, shown, "go on")
        if work.get("state") in ("new", "resumed"):
            raise _Refused(
                f"{_where(work).capitalize()} is not saved: save it (S), or Skip (X) to give it back "
                "to the pool."
            )
    except _Refused as refused:
        return _status_only(str(refused))
    if not _has_item(work):
        return _after(ctx, user, dataset, annotate.next_item(ctx.store, user, dataset), "")
    found = annotate.next_in_history(ctx.store, user, dataset, work["item_id"])
    return _after(ctx, user, dataset, found, "")


def on_skip(ctx: AppContext, work: dict[str, Any], request: gr.Request) -> dict[str, Any]:
    """Leave the sample without saving (its draft dropped): a new one goes back to the pool at once and
    returns to this annotator after the rest."""
    user, work = require_user(ctx, request), work or {}
    try:
        dataset = _dataset(ctx, work.get("dataset"))
        if not _has_item(work):
            return _after(ctx, user, dataset, annotate.next_item(ctx.store, user, dataset), "")
        actions.keep_draft(ctx, user, work, None)
        if work.get("state") in ("new", "resumed"):
            found = annotate.skip_item(ctx.store, user, dataset, work["item_id"])
            said = f"Skipped {_where(work)}: others can take it now; it comes back to you after the rest."
        else:
            found = annotate.next_in_history(ctx.store, user, dataset, work["item_id"])
            said = f"Left {_where(work)} unchanged."
    except ServiceError as exc:
        return _status_only(f"Cannot skip: {exc}.")
    return _after(ctx, user, dataset, found, escape_text(said))


def on_jump(
    ctx: AppContext,
    work: dict[str, Any],
    dataset_name: str | None,
    ref: str,
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str,
    original_features: list[str] | None,
    modified_features: list[str] | None,
    request: gr.Request,
) -> dict[str, Any]:
    """Open a sample by its id or its number in the dataset; the jump box empties on success."""
    user, work = require_user(ctx, request), work or {}
    try:
        shown = (original, modification, difficulty, note, original_features, modified_features)
        dataset = _leaving(ctx, work, shown, "jump", dataset_name)
        if not (ref or "").strip():
            raise _Refused("Type a sample number (1, 2, ...) or a sample id in the jump box first.")
        found = annotate.jump_to(ctx.store, user, dataset, ref)
    except ServiceError as exc:
        return _status_only(f"Cannot jump to {ref.strip()!r}: {exc}.")
    except _Refused as refused:
        return _status_only(str(refused))
    return {**_show(ctx, user, found, ""), "jump_box": ""}


def on_choice(
    ctx: AppContext,
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str,
    original_features: list[str] | None,
    modified_features: list[str] | None,
    work: dict[str, Any],
    request: gr.Request,
) -> dict[str, Any]:
    """A choice clicked or a note typed: kept as this user's draft, counted on the current-sample line."""
    user = require_user(ctx, request)
    if not _has_item(work) or annotate.saved_attempt(ctx.store, user, str(work.get("request_id") or "")):
        return {}  # no sample, or a click that reached the server after its save
    shown = _choices(original, modification, difficulty, note, original_features, modified_features)
    dirty = shown != (work.get("saved_label") or {})
    chosen = sum(1 for f in FIELDS if f in shown)
    actions.keep_draft(ctx, user, work, shown if dirty else None)
    return {"sample": view.sample_progress(chosen, work.get("state"), dirty=dirty)}


UNCHANGED = "unchanged"  # what on_save tells on_after_save when a saved label was confirmed as it is


def on_save(
    ctx: AppContext,
    work: dict[str, Any],
    original: str | None,
    modification: str | None,
    difficulty: str | None,
    note: str,
    original_features: list[str] | None,
    modified_features: list[str] | None,
    move_on: bool,
    request: gr.Request,
) -> dict[str, Any]:
    """Store the three assessments; say exactly what was saved, or why not; with "Next sample after
    saving" on, show the next sample in the same reply (one event per action, no second round trip).

    Saving a label already stored, untouched, adds no row: the log stays one row per decision.
    """
    user = require_user(ctx, request)
    work = work or {}
    if not _has_item(work):
        gr.Warning("No sample is open: nothing was saved.")
        return {"status": "No sample is open: nothing was saved.", "saved": None}
    payload = _choices(original, modification, difficulty, note, original_features, modified_features)
    if payload == work.get("saved_label"):
        message = escape_text(f"Nothing changed on {_where(work)}: your saved label stays.")
        actions.keep_draft(ctx, user, work, None)
        if move_on:
            return {**next_after_save(ctx, user, work, UNCHANGED), "saved": UNCHANGED}
        return {"status": message, "sample": view.sample_progress(3, "saved"), "saved": UNCHANGED}
    try:
        result = annotate.submit(
            ctx.store,
            annotator=user,
            item_id=work["item_id"],
            version_id=work["version_id"],
            payload=payload,
            request_id=work["request_id"],
            seconds_spent=seconds_open(work),
            first_label=work.get("state") in ("new", "resumed"),
        )
    except ServiceError as exc:
        return {"status": refusal(f"Not saved ({_where(work)}): {exc}."), "saved": None}
    said = " · ".join(_WORDS[v] for v in (original, modification, difficulty) if v)
    fresh = {
        **work,
        "state": "saved",
        "saved_label": payload,
        "request_id": uuid.uuid4().hex,
        "opened_at": time.time(),
    }
    message = escape_text(f"Saved {_where(work)}: {said}.") + (
        " (already stored; counted once)" if result.duplicate else ""
    )
    actions.keep_draft(ctx, user, work, None)
    if move_on:
        return {**next_after_save(ctx, user, fresh, result.annotation_id), "saved": result.annotation_id}
    return {
        "status": message,
        "sample": view.sample_progress(3, "saved"),
        "work": fresh,
        "saved": result.annotation_id,
    }


def next_after_save(
    ctx: AppContext, user: Annotator, work: dict[str, Any], saved: int | str
) -> dict[str, Any]:
    """The view after a save with "Next sample after saving" on: the next sample, or why there is none."""
    try:
        dataset = _dataset(ctx, work.get("dataset"))
    except ServiceError as exc:
        return _status_only(f"Saved, but cannot go on: {exc}.")
    found = annotate.next_in_history(ctx.store, user, dataset, work["item_id"])
    said = f"{_where(work).capitalize()} unchanged." if saved == UNCHANGED else f"Saved {_where(work)}."
    return _after(ctx, user, dataset, found, escape_text(said))


def build(ctx: AppContext, tab: gr.Tab) -> None:
    names = statistics.dataset_names(ctx.store, STEP_REVIEW)
    math = {"latex_delimiters": LATEX_DELIMITERS}
    work = gr.State({})
    saved = gr.State(None)
    with gr.Row(elem_id="step-review-toolbar", equal_height=True):
        dataset = gr.Dropdown(
            names,
            value=names[0] if names else None,
            label="Dataset",
            show_label=False,
            container=False,
            scale=2,
            min_width=200,
            elem_id="step-review-dataset",
        )
        with gr.Column(scale=4, min_width=300):
            progress_md = gr.Markdown(elem_id="step-review-progress")
        jump_box = gr.Textbox(
            placeholder="Jump to sample: number or id (g)",
            show_label=False,
            container=False,
            scale=2,
            min_width=200,
            max_lines=1,
            elem_id="step-review-jump",
        )
        jump = gr.Button("Go", scale=0, min_width=60, elem_id="step-review-jump-go", size="md")
    # One screen: the sample (left) and the two chains (right) scroll in their own panes, sized by
    # step_review.js to the window, so the assessment bar below is always in view without page scrolling.
    with gr.Row(elem_id="step-review-sample", equal_height=False):
        with gr.Column(scale=2, min_width=300, elem_id="step-review-left"):
            # The tool's instructions come first, as in the paper's figure; open them once, they stay in the pane.
            with gr.Accordion("Annotation instructions", open=False, elem_id="step-review-instructions"):
                gr.Markdown(view.INSTRUCTIONS)
            info_md = gr.Markdown(elem_id="step-review-info", **math)
            question_md = gr.Markdown(elem_id="step-review-question", line_breaks=True, **math)
            # Preview mode: the whole figure at a glance, a strip of thumbnails when an item has several.
            image = gr.Gallery(
                label="Problem image",
                visible=False,
                height=240,
                preview=True,
                selected_index=0,
                object_fit="contain",
                interactive=False,
                elem_id="step-review-image",
                buttons=["fullscreen"],
            )
            answer_md = gr.Markdown(elem_id="step-review-answer", **math)
        with gr.Column(scale=5, min_width=480, elem_id="step-review-right"):
            rationale_md = gr.Markdown(elem_id="step-review-rationale", line_breaks=True, **math)
            with gr.Row(elem_id="step-review-features", equal_height=True):
                original_features = gr.CheckboxGroup(
                    [],
                    label="Original steps: select applicable features",
                    visible=False,
                    elem_id="step-review-original-features",
                )
                modified_features = gr.CheckboxGroup(
                    [],
                    label="Modified steps: select applicable features",
                    visible=False,
                    elem_id="step-review-modified-features",
                )
            steps_md = gr.Markdown(elem_id="step-review-steps", **math)
    # Gradio 6 repeats a Group's elem_id on its inner box: the id goes on a Column around it.
    with gr.Column(elem_id="step-review-assess"), gr.Group():
        with gr.Row(equal_height=True):
            original = gr.Radio(
                ORIGINAL,
                label="Original steps",
                elem_id="step-review-original",
                scale=6,
                min_width=270,
                info="No calculation or logic errors?",
            )
            modification = gr.Radio(
                MODIFICATION,
                label="Modification",
                elem_id="step-review-modification",
                scale=7,
                min_width=340,
                info="Matches the error type and rationale?",
            )
            difficulty = gr.Radio(
                DIFFICULTY,
                label="Difficulty",
                elem_id="step-review-difficulty",
                scale=8,
                min_width=380,
                info=view.DIFFICULTY_RULE,
            )
            note = gr.Textbox(
                label="Note (optional)",
                elem_id="step-review-note",
                lines=1,
                max_lines=3,
                scale=3,
                min_width=140,
            )
        with gr.Row(elem_id="step-review-actions", equal_height=True):
            with gr.Column(scale=5, min_width=260, elem_id="step-review-lines"):
                sample_md = gr.Markdown(elem_id="step-review-sample-progress")
                status_md = gr.Markdown(elem_id="step-review-status")
            move_on = gr.Checkbox(
                True,
                label="Next sample after saving",
                elem_id="step-review-move-on",
                container=False,
                scale=0,
            )
            previous = gr.Button(
                "◀ Previous (P)", elem_id="step-review-previous", size="sm", scale=1, min_width=110
            )
            skip = gr.Button("Skip (X)", elem_id="step-review-skip", size="sm", scale=1, min_width=90)
            nxt = gr.Button("Next ▶ (N)", elem_id="step-review-next", size="sm", scale=1, min_width=100)
            save = gr.Button(
                "Save annotation (S)",
                variant="primary",
                elem_id="step-review-save",
                size="sm",
                scale=2,
                min_width=170,
            )
        gr.Markdown(view.KEYS, elem_id="step-review-keys")
    export_choice = actions.build(ctx, dataset)
    disputes_box = disputes.build(ctx, dataset)

    sample = Outputs(
        progress=progress_md,
        info=info_md,
        question=question_md,
        image=image,
        answer=answer_md,
        rationale=rationale_md,
        steps=steps_md,
        original_features=original_features,
        modified_features=modified_features,
        original=original,
        modification=modification,
        difficulty=difficulty,
        note=note,
        sample=sample_md,
        status=status_md,
        work=work,
    )
    view_outputs = list(sample)
    opening = Outputs(dataset=dataset, exports=export_choice, disputes=disputes_box, **sample.components)
    jumping = Outputs(jump_box=jump_box, **sample.components)
    saving = Outputs(saved=saved, **sample.components)
    # Off the queue, as in earliest error: a queued event pays two more status round trips, each of
    # which makes Gradio's page copy the props of every component any event has touched so far.
    private = {"api_visibility": "private", "queue": False}
    tab.select(opening.bind(on_tab_open, ctx), [dataset, work], list(opening), **private)
    dataset.select(sample.bind(on_dataset_change, ctx), [dataset, work], view_outputs, **private)
    shown = [original, modification, difficulty, note, original_features, modified_features]
    previous.click(sample.bind(on_previous, ctx), [work, *shown], view_outputs, **private)
    nxt.click(sample.bind(on_next, ctx), [work, *shown], view_outputs, **private)
    skip.click(sample.bind(on_skip, ctx), [work], view_outputs, **private)
    gr.on(
        [jump.click, jump_box.submit],
        jumping.bind(on_jump, ctx),
        [work, dataset, jump_box, *shown],
        list(jumping),
        **private,
    )
    gr.on(
        [
            original.input,
            modification.input,
            difficulty.input,
            note.input,
            original_features.input,
            modified_features.input,
        ],
        sample.bind(on_choice, ctx),
        [*shown, work],
        [sample_md],
        trigger_mode="always_last",
        show_progress="hidden",
        **private,
    )
    save.click(saving.bind(on_save, ctx), [work, *shown, move_on], list(saving), **private)
