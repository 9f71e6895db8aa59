"""Step review's layout (PRMBench-V's Figure 13 on one screen): the components, named; the panel
(step_review.py) wires their events."""

from __future__ import annotations

import gradio as gr
from gradio.components import Component

from services import statistics
from tasks import STEP_REVIEW
from ui.context import AppContext
from ui.panels import step_review_actions as actions
from ui.panels import step_review_disputes as disputes
from ui.panels import step_review_render as view
from ui.render import LATEX_DELIMITERS

__all__ = ["DIFFICULTY", "MODIFICATION", "ORIGINAL", "layout"]

ORIGINAL = [("Correct (C)", "correct"), ("Incorrect (I)", "incorrect")]
MODIFICATION = [("Reasonable (R)", "reasonable"), ("Unreasonable (U)", "unreasonable")]
DIFFICULTY = [("Easy (E)", "easy"), ("Medium (M)", "medium"), ("Hard (H)", "hard")]


def layout(ctx: AppContext) -> dict[str, Component]:
    """Every component of the panel, by the name the panel's wiring uses."""
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
            # In the pane, not below the bar: the page itself never scrolls at 1366x768 (issue 29).
            export_choice = actions.build(ctx, dataset)
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
        gr.Markdown(view.KEYS_BAR, elem_id="step-review-keys")
    disputes_box = disputes.build(ctx, dataset)

    return {
        "dataset": dataset,
        "jump_box": jump_box,
        "jump": jump,
        "progress": progress_md,
        "info": info_md,
        "question": question_md,
        "image": image,
        "answer": answer_md,
        "rationale": rationale_md,
        "steps": steps_md,
        "original_features": original_features,
        "modified_features": modified_features,
        "original": original,
        "modification": modification,
        "difficulty": difficulty,
        "note": note,
        "sample": sample_md,
        "status": status_md,
        "work": work,
        "move_on": move_on,
        "previous": previous,
        "skip": skip,
        "next": nxt,
        "save": save,
        "exports": export_choice,
        "disputes": disputes_box,
        "saved": saved,
    }
