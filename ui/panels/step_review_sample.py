"""Step review's sample view: what showing a sample fills (VIEW), by name, and the panel's kit.

What is shown is built by the pure functions of step_review_render; this module adds the user's
draft and progress and the item on screen (ui.kit.annotation.Current)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate
from services.annotate import WorkItem
from services.records import Annotator, Dataset
from tasks import STEP_REVIEW
from tasks.step_review import FEATURES as STEP_REVIEW_FEATURES
from ui.context import AppContext
from ui.kit.annotation import AnnotationKit, Current
from ui.panels import step_review_actions as actions
from ui.panels import step_review_render as view
from ui.render import escape_text, safe_markdown

__all__ = ["FEATURES", "FIELDS", "KIT", "VIEW", "choices_of", "show", "where"]

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


def where(work: Current) -> str:
    return f"sample {work.position} ({work.external_id})"


def show(
    ctx: AppContext,
    user: Annotator,
    dataset: Dataset,
    work: WorkItem | None,
    message: str,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Every component of the sample view, for an opened item or for none (message says why)."""
    if work is None:
        done = escape_text(
            f"Nothing left for you in {dataset.name}. {annotate.why_nothing_left(ctx.store, user, dataset)} "
            "Previous (P) goes back through your labels."
        )
        return _empty(f"{message} {done}".strip(), counts or {}, Current.none_in(dataset))
    item, state = work.item, Current.opened(dataset, work, saved_label=work.my_label)
    draft = actions.draft_for(ctx, user, state.state_dict(), work.my_label)
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
        view.info_markdown(
            item.external_id,
            item.source,
            item.error_type,
            item.version,
            annotate.annotators_per_item(dataset),
        ),
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
        state.state_dict(),
    )


def _empty(message: str, counts: dict[str, int], work: dict[str, Any]) -> dict[str, Any]:
    """The sample view with no sample: why, and the user's progress."""
    # One update object per component: Gradio consumes an update while applying it.
    blank = [gr.update(value=[], choices=[], visible=False) for _ in FEATURES]
    return _named(
        view.progress_markdown(counts, None),
        "",
        "",
        gr.update(value=None, visible=False),
        "",
        "",
        "",
        *blank,
        gr.update(value=None),
        gr.update(value=None),
        gr.update(value=None, info=view.DIFFICULTY_RULE),
        "",
        "",
        message,
        work,
    )


def _named(*values: Any) -> dict[str, Any]:
    return dict(zip(VIEW, values, strict=True))


NO_DATASET = (
    "no step review dataset is chosen: pick one in the list at the top left; if the list is empty, an "
    "admin imports a PRMBench file first (Data tab)"
)
KIT = AnnotationKit(STEP_REVIEW, NO_DATASET, show, noun="sample", remembers=True, picker=gr.update)


def choices_of(
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
