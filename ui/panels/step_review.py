"""Step review: the PRMBench-V "Process Reward Annotation Tool" (its Figure 13).

The annotator sees one sample (info, question, image, reference answer and error steps), the
original and modified steps side by side with the changes marked, and the modification rationale;
marks the original chain Correct/Incorrect, the modification Reasonable/Unreasonable and the
difficulty Easy/Medium/Hard, and saves; Previous / Skip / Next / jump move through the dataset.
Choices and the note not saved yet are kept as a draft on the server, keyed by annotator, so a reload
or a server restart loses nothing and a shared browser stays blind. "View statistics" and "Export data"
live in step_review_actions; what is shown is built by the pure functions of step_review_render.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate
from services.annotate import Receipt
from services.errors import ServiceError
from services.records import Annotator, Dataset
from ui.context import AppContext
from ui.kit.annotation import Current, Refused, quick_events
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.panels import step_review_actions as actions
from ui.panels import step_review_render as view
from ui.panels.step_review_layout import DIFFICULTY, MODIFICATION, ORIGINAL, layout
from ui.panels.step_review_sample import FEATURES, FIELDS, KIT, VIEW, choices_of, where
from ui.render import escape_text

__all__ = [
    "FEATURES",
    "VIEW",
    "build",
    "next_after_save",
    "on_choice",
    "on_jump",
    "on_next",
    "on_previous",
    "on_save",
    "on_skip",
    "on_tab_open",
]

_WORDS = {value: label.split(" (")[0] for label, value in ORIGINAL + MODIFICATION + DIFFICULTY}


def _status_only(message: str) -> dict[str, Any]:
    """A refused move: the page stays as it is, the status line and a toast say why."""
    return {"status": refusal(message)}


def on_tab_open(ctx: AppContext, dataset_name: str | None, work: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the sample this annotator holds, else the next one, in the dataset they last
    worked on; coming back to the tab changes nothing.

    Work is claimed here and not on page load, so people using other panels hold no lease on step review.
    """
    user = KIT.user(ctx, request)
    extra = {
        "exports": gr.update(choices=actions.export_choices(user)),
        "disputes": gr.update(visible=user.can_see_labels),
    }
    return KIT.on_tab(ctx, user, dataset_name, work, extra)


def _leaving(ctx: AppContext, work: Current, shown: tuple, verb: str, name: str | None = None) -> Dataset:
    """The dataset to move in; refused while the page holds choices that differ from what is stored."""
    if work.has_item and choices_of(*shown) != (work.get("saved_label") or {}):
        raise Refused(
            f"{where(work).capitalize()} has unsaved choices: press Save annotation (S) first, "
            "or Skip (X) to leave it without saving."
        )
    try:
        return KIT.dataset(ctx, name or work.dataset)
    except ServiceError as exc:
        raise Refused(f"Cannot {verb}: {exc}.") from exc


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
    user, current = KIT.user(ctx, request), Current.of(work)
    shown = (original, modification, difficulty, note, original_features, modified_features)
    try:
        dataset = _leaving(ctx, current, shown, "go back")
        found = KIT.move(ctx, user, current, dataset, "previous")
    except Refused as refused:
        return _status_only(str(refused))
    return KIT.show(ctx, user, dataset, found, "")


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
    user, current = KIT.user(ctx, request), Current.of(work)
    try:
        shown = (original, modification, difficulty, note, original_features, modified_features)
        dataset = _leaving(ctx, current, shown, "go on")
        if current.fresh:
            raise Refused(
                f"{where(current).capitalize()} is not saved: save it (S), or Skip (X) to give it back "
                "to the pool."
            )
    except Refused as refused:
        return _status_only(str(refused))
    if not current.has_item:
        return KIT.show(ctx, user, dataset, annotate.next_item(ctx.store, user, dataset))
    return KIT.show(ctx, user, dataset, annotate.next_in_history(ctx.store, user, dataset, current.item_id))


def on_skip(ctx: AppContext, work: dict[str, Any], request: gr.Request) -> dict[str, Any]:
    """Leave the sample without saving (its draft dropped): a new one goes back to the pool at once and
    returns to this annotator after the rest."""
    user, current = KIT.user(ctx, request), Current.of(work)
    try:
        dataset = KIT.dataset(ctx, current.dataset)
        if not current.has_item:
            return KIT.show(ctx, user, dataset, annotate.next_item(ctx.store, user, dataset))
        KIT.end_draft(ctx, user, current)
        if current.fresh:
            found = annotate.skip_item(ctx.store, user, dataset, current.item_id)
            said = f"Skipped {where(current)}: others can take it now; it comes back to you after the rest."
        else:
            found = annotate.next_in_history(ctx.store, user, dataset, current.item_id)
            said = f"Left {where(current)} unchanged."
    except ServiceError as exc:
        return _status_only(f"Cannot skip: {exc}.")
    return KIT.show(ctx, user, dataset, found, escape_text(said))


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
    user, current = KIT.user(ctx, request), Current.of(work)
    try:
        shown = (original, modification, difficulty, note, original_features, modified_features)
        dataset = _leaving(ctx, current, shown, "jump", dataset_name)
        if not (ref or "").strip():
            raise Refused("Type a sample number (1, 2, ...) or a sample id in the jump box first.")
        found = annotate.jump_to(ctx.store, user, dataset, ref)
    except ServiceError as exc:
        return _status_only(f"Cannot jump to {ref.strip()!r}: {exc}.")
    except Refused as refused:
        return _status_only(str(refused))
    return {**KIT.show(ctx, user, dataset, found, ""), "jump_box": ""}


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
    user, current = KIT.user(ctx, request), Current.of(work)
    if KIT.late(ctx, user, current):
        return {}  # no sample, or a click that reached the server after its save
    shown = choices_of(original, modification, difficulty, note, original_features, modified_features)
    dirty = shown != (current.get("saved_label") or {})
    chosen = sum(1 for f in FIELDS if f in shown)
    KIT.keep_draft(ctx, user, current, shown if dirty else None)
    return {"sample": view.sample_progress(chosen, current.state, dirty=dirty)}


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
    user, current = KIT.user(ctx, request), Current.of(work)
    if not current.has_item:
        gr.Warning("No sample is open: nothing was saved.")
        return {"status": "No sample is open: nothing was saved.", "saved": None}
    payload = choices_of(original, modification, difficulty, note, original_features, modified_features)
    if payload == current.get("saved_label"):
        message = escape_text(f"Nothing changed on {where(current)}: your saved label stays.")
        KIT.keep_draft(ctx, user, current, None)
        if move_on:
            return {**next_after_save(ctx, user, work, UNCHANGED), "saved": UNCHANGED}
        return {"status": message, "sample": view.sample_progress(3, "saved"), "saved": UNCHANGED}
    try:
        result = KIT.submit(ctx, user, current, payload)
    except ServiceError as exc:
        return {"status": refusal(f"Not saved ({where(current)}): {exc}."), "saved": None}
    said = " · ".join(_WORDS[v] for v in (original, modification, difficulty) if v)
    fresh = current.saved(saved_label=payload).state_dict()
    message = escape_text(f"Saved {where(current)}: {said}.") + (
        " (already stored; counted once)" if result.duplicate else ""
    )
    if move_on:
        return {
            **next_after_save(ctx, user, work, result.annotation_id, result),
            "saved": result.annotation_id,
        }
    return {
        "status": message,
        "sample": view.sample_progress(3, "saved"),
        "work": fresh,
        "saved": result.annotation_id,
    }


def next_after_save(
    ctx: AppContext, user: Annotator, work: dict[str, Any], saved: int | str, receipt: Receipt | None = None
) -> dict[str, Any]:
    """The view after a save with "Next sample after saving" on: the next sample, or why there is none.
    `work`: the sample as it was shown before the save; `receipt`: the save's (KIT.following)."""
    current = Current.of(work)
    try:
        dataset = KIT.dataset(ctx, current.dataset)
    except ServiceError as exc:
        return _status_only(f"Saved, but cannot go on: {exc}.")
    found = KIT.following(ctx, user, current, dataset, receipt)
    said = f"{where(current).capitalize()} unchanged." if saved == UNCHANGED else f"Saved {where(current)}."
    return KIT.show(ctx, user, dataset, found, escape_text(said))


def build(ctx: AppContext, tab: gr.Tab) -> None:
    c = layout(ctx)
    sample = Outputs(**{name: c[name] for name in VIEW})
    view_outputs = list(sample)
    dataset, work, jump_box = c["dataset"], c["work"], c["jump_box"]
    opening = Outputs(dataset=dataset, exports=c["exports"], disputes=c["disputes"], **sample.components)
    jumping = Outputs(jump_box=jump_box, **sample.components)
    saving = Outputs(saved=c["saved"], **sample.components)
    private = quick_events()
    tab.select(opening.bind(on_tab_open, ctx), [dataset, work], list(opening), **private)
    dataset.select(sample.bind(KIT.on_dataset_change, ctx), [dataset, work], view_outputs, **private)
    shown = [c[name] for name in ("original", "modification", "difficulty", "note", *FEATURES)]
    c["previous"].click(sample.bind(on_previous, ctx), [work, *shown], view_outputs, **private)
    c["next"].click(sample.bind(on_next, ctx), [work, *shown], view_outputs, **private)
    c["skip"].click(sample.bind(on_skip, ctx), [work], view_outputs, **private)
    jumped = [c["jump"].click, jump_box.submit]
    gr.on(jumped, jumping.bind(on_jump, ctx), [work, dataset, jump_box, *shown], list(jumping), **private)
    gr.on(
        [component.input for component in shown],
        sample.bind(on_choice, ctx),
        [*shown, work],
        [c["sample"]],
        trigger_mode="always_last",
        **private,
    )
    c["save"].click(saving.bind(on_save, ctx), [work, *shown, c["move_on"]], list(saving), **private)
