"""Quality gate: CRYSTAL's human gate (its Figure S3) on one screen.

Left, the input triplet: the image (fullscreen to zoom), question, choices, ground-truth answer and
source, with Prev / Next, an index slider and an index box. Right, the candidate steps as a table:
each step edited in place, marked incorrect or not, moved, inserted or deleted (or all of them as
text, one per line, as in the figure); the four criteria C1-C4; Accept (all four hold) or Reject
(the unchecked ones fail, with a reason). The label goes through services.annotate like every task;
an accepted edit becomes the item's new version, whose lineage the panel shows.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate, gate
from services.annotate import WorkItem
from services.errors import ServiceError
from services.records import Annotator, Dataset
from tasks import QUALITY_GATE
from tasks.quality_gate import CRITERIA, STEP_ROLE
from ui.context import AppContext
from ui.kit.annotation import AnnotationKit, Current, quick_events
from ui.kit.keymap import keys_reminder
from ui.kit.messages import said
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.panels import quality_gate_disputes as disputes
from ui.panels import quality_gate_render as view
from ui.panels.quality_gate_steps import (
    COLUMNS,
    on_delete_step,
    on_insert_step,
    on_move_step,
    on_select_step,
    on_steps_from_text,
    on_text_open,
    steps_of,
    table_of,
)
from ui.render import LATEX_DELIMITERS, escape_text

__all__ = [
    "build",
    "on_decide",
    "on_delete_step",
    "on_draft",
    "on_insert_step",
    "on_move_step",
    "on_select_step",
    "on_steps_from_text",
    "on_tab_open",
    "on_text_open",
]

NO_DATASET = "No quality-gate dataset yet: an admin imports one (a CRYSTAL file) in the Data tab."
SHORTCUTS = keys_reminder("Quality gate")
CRITERION_CHOICES = [(f"{k.upper()} {c.name}: {c.asks}", k) for k, c in CRITERIA.items()]


def _show(
    ctx: AppContext,
    user: Annotator,
    dataset: Dataset,
    shown: WorkItem | None,
    message: str,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    if shown is None:
        counts = counts or annotate.progress(ctx.store, user, dataset)
        return {
            "header": f"**Nothing left for you in {escape_text(dataset.name)}** · you labelled "
            f"{counts.get('mine', 0)} of {counts.get('total', 0)}. Prev (p) reopens your own labels.",
            "image": None,
            "question": "",
            "choices": "",
            "answer": "",
            "table": table_of([]),
            "criteria": [],
            "reason": "",
            "groups": "",
            "lineage": "",
            "status": message,
            "current": Current.none_in(dataset),
            "selected": None,
            "step_note": "",
        }
    item = shown.item
    steps = item.steps.get(STEP_ROLE, [])
    mine = shown.my_label or {}
    current = Current.opened(dataset, shown)
    marked = {int(k) for k, v in (mine.get("steps") or {}).items() if v == "incorrect"}
    total = shown.progress.get("total", 0)
    draft = KIT.draft(ctx, user, current)
    if isinstance(draft, dict) and draft.get("steps"):  # unsaved work on this item comes back as it was left
        mine = {
            **mine,
            "edited_steps": draft["steps"],
            "criteria": {k: True for k in draft.get("criteria", [])},
        }
        mine["reason"] = draft.get("reason", "")
        marked = {int(i) for i in draft.get("incorrect", [])}
    heading = view.header(item, shown.position, total, shown.state, shown.my_label or {}, dataset.name)
    if draft:
        heading += " · with your unsaved changes"
    flag = gate.judge_flag(ctx.store, item.item_id)
    if flag:
        heading += f" · ⚑ {escape_text(flag)}"
    return {
        "header": heading,
        "image": item.image_paths[0] if item.image_paths else None,
        "question": view.text_block(item.question),
        "choices": view.choices_markdown(item.options),
        "answer": view.answer_markdown(item.reference_answer, item.source),
        "table": table_of(mine.get("edited_steps") or steps, marked),
        "criteria": [k for k, held in (mine.get("criteria") or {}).items() if held],
        "reason": mine.get("reason", ""),
        "groups": _groups(ctx, user, item.item_id, item.version_id),
        "lineage": _lineage(ctx, user, item.item_id, shown=item.version_id)
        if item.version > 1
        else view.FIRST_VERSION,
        "slider": gr.Slider(minimum=1, maximum=max(total, 2), value=shown.position, step=1),
        "status": message,
        "current": current.state_dict(),
        "selected": None,
        "step_note": "",  # a step picked on the last item is not this one's
    }


KIT = AnnotationKit(
    QUALITY_GATE, NO_DATASET, _show, jump_hint="type an item id or an index from 1 to the dataset size"
)


def on_draft(
    ctx: AppContext, table: Any, criteria: Any, reason: str, state: Any, request: gr.Request
) -> dict[str, Any]:
    """Unsaved steps, marks, criteria and reason, kept for this user on the server (a reload, a
    restart or another tab brings them back) until the item is saved."""
    user, current = KIT.user(ctx, request), Current.of(state)
    if KIT.late(ctx, user, current):
        return {}  # no item, or an edit that reached the server after its item was saved
    steps, incorrect = steps_of(table)
    value = {
        "steps": steps,
        "incorrect": sorted(incorrect),
        "criteria": list(criteria or []),
        "reason": reason or "",
    }
    KIT.keep_draft(ctx, user, current, value)
    return {}


def _groups(ctx: AppContext, user: Annotator, item_id: int, version_id: int) -> str:
    try:
        found = gate.step_groups(ctx.store, user, item_id, version_id, ctx.encoder)
    except (ServiceError, RuntimeError, OSError) as exc:
        return said(f"Steps could not be grouped ({exc}); the gate works without it.")
    return view.groups_markdown(found)


def _lineage(
    ctx: AppContext,
    user: Annotator,
    item_id: int,
    unless_current: int | None = None,
    shown: int | None = None,
) -> str:
    try:
        return view.lineage_markdown(gate.lineage(ctx.store, user, item_id, unless_current, shown))
    except ServiceError:
        return ""


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the annotator's item (the one they hold first); coming back changes nothing."""
    user = KIT.user(ctx, request)
    reviewers = {"disputes_box": gr.Accordion(visible=user.can_see_labels)}  # adjudicators and admins only
    return KIT.on_tab(ctx, user, dataset, current, reviewers)


def payload_of(verdict: str, table: Any, criteria: Any, reason: str) -> dict[str, Any]:
    """The label from the panel's controls; "save" means accept when all four criteria hold."""
    held = set(criteria or [])
    if verdict == "save":
        verdict = "accept" if held >= set(CRITERIA) else "reject"
    steps, incorrect = steps_of(table)
    return {
        "verdict": verdict,
        "criteria": {k: k in held for k in CRITERIA},
        "reason": (reason or "").strip(),
        "steps": {str(i): "incorrect" if i in incorrect else "correct" for i in range(1, len(steps) + 1)},
        "edited_steps": steps,
    }


def on_decide(
    ctx: AppContext, verdict: str, table: Any, criteria: Any, reason: str, state: Any, request: gr.Request
) -> dict[str, Any]:
    """Accept or reject (or s: whichever the criteria say), store the label, then the next item.

    The reply says "saved" and nothing of the item's state: on a dual item that would tell the
    annotator what the other one chose.
    """
    user, current = KIT.user(ctx, request), Current.of(state)
    if not current.has_item:
        return KIT.status("There is no item to save.", warn=True)
    payload = payload_of(str(verdict), table, criteria, reason)
    try:
        dataset = KIT.dataset(ctx, current.dataset)
        receipt = KIT.submit(ctx, user, current, payload)
    except ServiceError as exc:
        return KIT.status(f"Not saved: {exc}", warn=True)
    shown = KIT.following(ctx, user, current, dataset, receipt)
    result = KIT.show(
        ctx, user, dataset, shown, KIT.saved_line(receipt, escape_text(view.verdict_words(payload)), shown)
    )
    saved = _lineage(ctx, user, int(current.item_id or 0), unless_current=current.version_id)
    if saved:  # reviewers: the saved item has a new version (an accepted edit): who and why
        title = f"**Item {escape_text(current.external_id)}, just saved**"
        result["lineage"] = f"{title}\n\n{saved}\n\n**This item**\n\n{result['lineage']}"
    return result


def build(ctx: AppContext, tab: gr.Tab) -> None:
    math = {"latex_delimiters": LATEX_DELIMITERS}
    with gr.Column(elem_id="qg-panel"):
        current = gr.State(None)
        selected = gr.State(None)
        with gr.Row(elem_id="qg-top", equal_height=True):
            header = gr.Markdown(elem_id="qg-header")
            status = gr.Markdown(elem_id="qg-status")
            dataset = gr.Dropdown(
                choices=[], show_label=False, container=False, scale=0, min_width=220, elem_id="qg-dataset"
            )
        with gr.Row(elem_id="qg-layout", equal_height=False):
            with gr.Column(scale=2, min_width=380, elem_id="qg-left"):
                image = gr.Image(
                    label="Image", type="filepath", interactive=False, height=200,
                    buttons=["fullscreen", "download"], elem_id="qg-image",
                )  # fmt: skip
                question = gr.Markdown(elem_id="qg-question", **math)
                choices = gr.Markdown(elem_id="qg-choices", **math)
                answer = gr.Markdown(elem_id="qg-answer", **math)
                with gr.Row(elem_id="qg-nav"):
                    previous = gr.Button("◀️ Prev (p)", size="sm", elem_id="qg-previous", min_width=60)
                    skip = gr.Button("Skip (x)", size="sm", elem_id="qg-skip", min_width=60)
                    following = gr.Button("Next ▶️ (n)", size="sm", elem_id="qg-next", min_width=60)
                with gr.Row(elem_id="qg-jump-row", equal_height=True):
                    slider = gr.Slider(
                        1, 2, value=1, step=1, label="Index", elem_id="qg-slider", scale=3, min_width=140
                    )
                    jump = gr.Textbox(
                        placeholder="Index or id (g)", show_label=False, container=False,
                        elem_id="qg-jump", scale=2, min_width=90,
                    )  # fmt: skip
                    go = gr.Button("Jump to Index", size="sm", elem_id="qg-go", scale=1, min_width=80)
                gr.Markdown(SHORTCUTS, elem_id="qg-keys")
            with gr.Column(scale=3, min_width=480, elem_id="qg-right"):
                gr.Markdown("**Reference steps**: edit a cell to change a step; tick *Incorrect* to mark one",
                            elem_id="qg-steps-title")  # fmt: skip
                table = Table(
                    headers=COLUMNS, datatype=["str", "bool"], interactive=True, wrap=True,
                    show_row_numbers=True, max_height=220, column_widths=["76%", "24%"], elem_id="qg-steps",
                )  # fmt: skip
                with gr.Row(elem_id="qg-step-tools"):
                    up = gr.Button("↑ Move up", size="sm", elem_id="qg-up", min_width=60)
                    down = gr.Button("↓ Move down", size="sm", elem_id="qg-down", min_width=60)
                    insert = gr.Button("+ Add below", size="sm", elem_id="qg-insert", min_width=60)
                    delete = gr.Button("✕ Delete", size="sm", elem_id="qg-delete", min_width=60)
                step_note = gr.Markdown(elem_id="qg-step-note")
                with gr.Accordion("Edit reference steps as text (one step per line) (e)", open=False,
                                  elem_id="qg-text") as text_box:  # fmt: skip
                    steps_text = gr.Textbox(lines=6, max_lines=12, show_label=False, elem_id="qg-steps-text")
                    use_text = gr.Button("Use these steps", size="sm", elem_id="qg-use-text")
                groups = gr.Markdown(elem_id="qg-groups")
                criteria = gr.CheckboxGroup(
                    CRITERION_CHOICES, label="Criteria that hold (1-4)", elem_id="qg-criteria"
                )
                with gr.Row(elem_id="qg-decide", equal_height=True):
                    reason = gr.Textbox(
                        placeholder="Reason (needed to reject)", show_label=False, container=False,
                        elem_id="qg-reason", scale=3, min_width=160,
                    )  # fmt: skip
                    accept = gr.Button("✓ Accept (a)", variant="primary", elem_id="qg-accept", min_width=90)
                    reject = gr.Button("✕ Reject (r)", variant="stop", elem_id="qg-reject", min_width=90)
                with gr.Accordion("Versions (lineage) (l)", open=False, elem_id="qg-lineage-box"):
                    lineage = gr.Markdown(elem_id="qg-lineage")
        disputes_box = disputes.build(ctx, dataset)

    item = Outputs(
        header=header, image=image, question=question, choices=choices, answer=answer, table=table,
        criteria=criteria, reason=reason, groups=groups, lineage=lineage, slider=slider, status=status,
        current=current, selected=selected, step_note=step_note,
    )  # fmt: skip
    shown = Outputs(dataset=dataset, jump=jump, disputes_box=disputes_box, **item.components)
    editing = Outputs(table=table, selected=selected, step_note=step_note, steps_text=steps_text)
    private = quick_events()
    opened = Outputs(dataset=dataset, disputes_box=disputes_box, **item.components)
    tab.select(opened.bind(on_tab_open, ctx), [dataset, current], list(opened), **private)
    dataset.input(item.bind(KIT.on_dataset_change, ctx), [dataset, current], list(item), **private)
    for button, word in ((accept, "accept"), (reject, "reject")):
        verdict = gr.State(word)
        button.click(
            item.bind(on_decide, ctx), [verdict, table, criteria, reason, current], list(item), **private
        )
    previous.click(item.bind(KIT.on_previous, ctx), [current], list(item), **private)
    following.click(item.bind(KIT.on_next, ctx), [current], list(item), **private)
    skip.click(item.bind(KIT.on_skip, ctx), [current], list(item), **private)
    for event, source in ((jump.submit, jump), (go.click, jump), (slider.release, slider)):
        event(shown.bind(KIT.on_jump, ctx), [source, current], [*item, jump], **private)
    table.select(editing.bind(on_select_step, ctx), [table], list(editing), **private)
    # Unsaved work is kept on the server: typed cells, marks, criteria, the reason, and each step tool.
    keeping = Outputs()
    draft_inputs = [table, criteria, reason, current]
    for event in (table.input, criteria.input, reason.blur):
        event(keeping.bind(on_draft, ctx), draft_inputs, [], trigger_mode="always_last", **private)
    tools = [
        (button, on_move_step, [table, selected, gr.State(way)])
        for button, way in ((up, "up"), (down, "down"))
    ]
    tools += [(insert, on_insert_step, [table, selected]), (delete, on_delete_step, [table, selected])]
    tools += [(use_text, on_steps_from_text, [steps_text, table])]
    for button, handler, inputs in tools:
        edited = button.click(editing.bind(handler, ctx), inputs, list(editing), **private)
        edited.then(keeping.bind(on_draft, ctx), draft_inputs, [], **private)
    text_box.expand(editing.bind(on_text_open, ctx), [table], list(editing), **private)
