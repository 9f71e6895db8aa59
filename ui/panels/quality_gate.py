"""Quality gate: CRYSTAL's human gate (its Figure S3) on one screen.

Left, the input triplet: the image (fullscreen to zoom), question, choices, ground-truth answer and
source, with Prev / Next, an index slider and an index box. Right, the candidate steps as a table:
each step edited in place, marked incorrect or not, moved, inserted or deleted (or all of them as
text, one per line, as in the figure); the four criteria C1-C4; Accept (all four hold) or Reject
(the unchecked ones fail, with a reason). The label goes through services.annotate like every task;
an accepted edit becomes the item's new version, whose lineage the panel shows.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import gradio as gr
import pandas as pd

from services import annotate, drafts, gate, statistics
from services.annotate import WorkItem
from services.errors import AlreadyLabelled, ServiceError
from services.records import Annotator, Dataset
from tasks import QUALITY_GATE
from tasks.quality_gate import CRITERIA, STEP_ROLE, parse_steps_text
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.keymap import keys_line
from ui.kit.messages import refusal, said
from ui.kit.opening import seconds_open
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.panels import quality_gate_disputes as disputes
from ui.panels import quality_gate_render as view
from ui.render import LATEX_DELIMITERS, escape_text

__all__ = [
    "build",
    "on_dataset_change",
    "on_decide",
    "on_delete_step",
    "on_draft",
    "on_insert_step",
    "on_jump",
    "on_move_step",
    "on_next",
    "on_previous",
    "on_select_step",
    "on_skip",
    "on_steps_from_text",
    "on_tab_open",
    "on_text_open",
]

PANEL = QUALITY_GATE  # drafts are kept per user and panel
NO_DATASET = "No quality-gate dataset yet: an admin imports one (python app.py import FILE --format crystal)."
SHORTCUTS = "**Keys** (**?** shows them all): " + keys_line("Quality gate")
COLUMNS = ["Step", "Incorrect"]
CRITERION_CHOICES = [(f"{k.upper()} {c.name}: {c.asks}", k) for k, c in CRITERIA.items()]
# What showing an item fills, by name (ui.kit.outputs).
ITEM = (
    "header",
    "image",
    "question",
    "choices",
    "answer",
    "table",
    "criteria",
    "reason",
    "groups",
    "lineage",
    "slider",
    "status",
    "current",
    "selected",
)


def _say(message: str, warn: bool = False) -> str:
    return refusal(message) if warn else said(message)


def _has_item(current: Any) -> bool:
    return isinstance(current, dict) and current.get("item_id") is not None


def table_of(steps: list[str], incorrect: set[int] | None = None) -> pd.DataFrame:
    """The steps as the editable table: one row a step, its 'Incorrect' mark (1-based numbers)."""
    marked = incorrect or set()
    return pd.DataFrame([[s, (i + 1) in marked] for i, s in enumerate(steps)], columns=COLUMNS)


def steps_of(table: Any) -> tuple[list[str], set[int]]:
    """The table back to (steps, incorrect step numbers): empty rows dropped, numbers after them."""
    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table or [], columns=COLUMNS)
    steps: list[str] = []
    incorrect: set[int] = set()
    for _, row in frame.iterrows():
        text = str(row.iloc[0] if len(row) else "").strip()
        if not text or text == "nan":
            continue
        steps.append(text)
        if len(row) > 1 and str(row.iloc[1]).lower() in ("true", "1"):
            incorrect.add(len(steps))
    return steps, incorrect


def _show(
    ctx: AppContext, user: Annotator, dataset: Dataset, shown: WorkItem | None, message: str
) -> dict[str, Any]:
    if shown is None:
        counts = annotate.progress(ctx.store, user, dataset)
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
            "current": {"dataset": dataset.name, "item_id": None},
            "selected": None,
        }
    item = shown.item
    steps = item.steps.get(STEP_ROLE, [])
    mine = shown.my_label or {}
    current = {
        "dataset": dataset.name,
        "item_id": item.item_id,
        "external_id": item.external_id,
        "version_id": item.version_id,
        "state": shown.state,
        "request_id": uuid.uuid4().hex,
        "opened_at": time.time(),
    }
    marked = {int(k) for k, v in (mine.get("steps") or {}).items() if v == "incorrect"}
    total = shown.progress.get("total", 0)
    draft = drafts.get(ctx.store, user, PANEL, _draft_key(current))
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
        "lineage": _lineage(ctx, user, item.item_id) if item.version > 1 else view.FIRST_VERSION,
        "slider": gr.Slider(minimum=1, maximum=max(total, 2), value=shown.position, step=1),
        "status": message,
        "current": current,
        "selected": None,
    }


def _draft_key(current: dict[str, Any]) -> str:
    return f"{current['dataset']}|{current['item_id']}|{current['version_id']}"


def on_draft(
    ctx: AppContext, table: Any, criteria: Any, reason: str, current: Any, request: gr.Request
) -> dict[str, Any]:
    """Unsaved steps, marks, criteria and reason, kept for this user on the server (a reload, a
    restart or another tab brings them back) until the item is saved."""
    user = require_user(ctx, request)
    if not _has_item(current) or annotate.saved_attempt(
        ctx.store, user, str(current.get("request_id") or "")
    ):
        return {}  # no item, or an edit that reached the server after its item was saved
    steps, incorrect = steps_of(table)
    value = {
        "steps": steps,
        "incorrect": sorted(incorrect),
        "criteria": list(criteria or []),
        "reason": reason or "",
    }
    drafts.put(ctx.store, user, PANEL, _draft_key(current), value)
    return {}


def _groups(ctx: AppContext, user: Annotator, item_id: int, version_id: int) -> str:
    try:
        found = gate.step_groups(ctx.store, user, item_id, version_id, ctx.encoder)
    except (ServiceError, RuntimeError, OSError) as exc:
        return said(f"Steps could not be grouped ({exc}); the gate works without it.")
    return view.groups_markdown(found)


def _lineage(ctx: AppContext, user: Annotator, item_id: int, unless_current: int | None = None) -> str:
    try:
        return view.lineage_markdown(gate.lineage(ctx.store, user, item_id, unless_current))
    except ServiceError:
        return ""


def _dataset(ctx: AppContext, name: str | None) -> Dataset:
    if not name:
        raise ServiceError(NO_DATASET)
    return annotate.dataset_for(ctx.store, name, QUALITY_GATE)


def _where(ctx: AppContext, current: Any) -> tuple[dict[str, Any], Dataset]:
    current = current if isinstance(current, dict) else {}
    return current, _dataset(ctx, current.get("dataset"))


def _open(ctx: AppContext, user: Annotator, name: str | None) -> dict[str, Any]:
    try:
        dataset = _dataset(ctx, name)
    except ServiceError as exc:
        return {"status": _say(str(exc), warn=bool(name))}
    shown = annotate.next_item(ctx.store, user, dataset)
    message = "" if shown else said(annotate.why_nothing_left(ctx.store, user, dataset))
    return _show(ctx, user, dataset, shown, message)


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab claims the annotator's item (the one they hold first); coming back changes nothing."""
    user = require_user(ctx, request)
    names = statistics.dataset_names(ctx.store, QUALITY_GATE)
    shown = current.get("dataset") if _has_item(current) else None
    wanted = [n for n in (shown, dataset) if n in names]
    dataset = wanted[0] if wanted else (names[0] if names else None)
    opened = {
        "dataset": gr.Dropdown(choices=names, value=dataset),
        "disputes_box": gr.Accordion(visible=user.can_see_labels),  # adjudicators and admins only
    }
    if _has_item(current) and current["dataset"] == dataset:
        return opened
    return {**opened, **_open(ctx, user, dataset)}


def on_dataset_change(ctx: AppContext, dataset: str, current: Any, request: gr.Request) -> dict[str, Any]:
    user = require_user(ctx, request)
    if _has_item(current) and current["dataset"] == dataset:
        return {}
    return _open(ctx, user, dataset)


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
    ctx: AppContext, verdict: str, table: Any, criteria: Any, reason: str, current: Any, request: gr.Request
) -> dict[str, Any]:
    """Accept or reject (or s: whichever the criteria say), store the label, then the next item.

    The reply says "saved" and nothing of the item's state: on a dual item that would tell the
    annotator what the other one chose.
    """
    user = require_user(ctx, request)
    if not _has_item(current):
        return {"status": _say("There is no item to save.", warn=True)}
    payload = payload_of(str(verdict), table, criteria, reason)
    try:
        dataset = _dataset(ctx, current["dataset"])
        receipt = annotate.submit(
            ctx.store,
            annotator=user,
            item_id=current["item_id"],
            version_id=current["version_id"],
            payload=payload,
            request_id=current["request_id"],
            seconds_spent=seconds_open(current),
            first_label=current.get("state") in ("new", "resumed"),
        )
    except AlreadyLabelled as exc:
        return {"status": _say(f"Not saved: {exc}", warn=True)}
    except ServiceError as exc:
        return {"status": _say(f"Not saved: {exc}", warn=True)}
    drafts.clear(ctx.store, user, PANEL, _draft_key(current))
    shown = annotate.next_in_history(ctx.store, user, dataset, current["item_id"])
    word = "Already saved" if receipt.duplicate else "Saved"
    following = f"item {shown.item.external_id}" if shown else "nothing left for you here"
    what = view.verdict_words(payload)
    result = _show(ctx, user, dataset, shown, said(f"✓ {word}: {what}. Next item: {following}."))
    saved = _lineage(ctx, user, int(current["item_id"]), unless_current=int(current["version_id"]))
    if saved:  # the saved item has a new version (an accepted edit): show who and why
        title = f"**Item {escape_text(current.get('external_id'))}, just saved**"
        result["lineage"] = f"{title}\n\n{saved}\n\n**This item**\n\n{result['lineage']}"
    return result


def _navigate(ctx: AppContext, current: Any, request: gr.Request, move: str, ref: str = "") -> dict[str, Any]:
    user = require_user(ctx, request)
    try:
        current, dataset = _where(ctx, current)
        if move == "previous":
            shown = annotate.previous_item(ctx.store, user, dataset, current.get("item_id"))
            if shown is None:
                return {"status": _say("There is no earlier item of yours in this dataset.")}
        elif move == "next":
            shown = annotate.next_in_history(ctx.store, user, dataset, current.get("item_id"))
        elif move == "skip":
            if current.get("state") == "done":
                return {
                    "status": _say("You labelled this item already, so there is nothing to skip: n moves on.")
                }
            shown = annotate.skip_item(ctx.store, user, dataset, current.get("item_id"))
        else:
            if not str(ref or "").strip():
                raise ServiceError("type an item id or an index from 1 to the dataset size")
            shown = annotate.jump_to(ctx.store, user, dataset, str(ref).strip())
    except ServiceError as exc:
        return {"status": _say(f"Cannot open item: {exc}" if move == "jump" else str(exc), warn=True)}
    message = {
        "skip": "Skipped: the item went back to the pool.",
        "jump": f"Jumped to index {shown.position}." if shown else "",
    }.get(move, "")
    return _show(ctx, user, dataset, shown, said(message) if message else "")


def on_previous(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    """Back through the annotator's own labels, newest first."""
    return _navigate(ctx, current, request, "previous")


def on_next(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    """Forward through the annotator's own labels, then the item they hold or a new one."""
    return _navigate(ctx, current, request, "next")


def on_skip(ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
    return _navigate(ctx, current, request, "skip")


def on_jump(ctx: AppContext, ref: Any, current: Any, request: gr.Request) -> dict[str, Any]:
    """The index box, Jump and the index slider: an item by its 1-based index or its id."""
    if isinstance(ref, float) and ref.is_integer():
        ref = int(ref)
    return {**_navigate(ctx, current, request, "jump", str(ref if ref is not None else "")), "jump": ""}


def on_select_step(ctx: AppContext, table: Any, evt: gr.SelectData, request: gr.Request) -> dict[str, Any]:
    """A click in the table picks the step that the move, insert and delete buttons act on."""
    require_user(ctx, request)
    row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
    return {"selected": int(row), "step_note": said(f"Step {int(row) + 1} selected.")}


def _edited(table: Any, selected: Any, change: str) -> dict[str, Any]:
    steps, incorrect = steps_of(table)
    rows = [[s, (i + 1) in incorrect] for i, s in enumerate(steps)]
    at = int(selected) if isinstance(selected, int | float) and 0 <= int(selected) < len(rows) else None
    if change != "insert" and at is None:
        return {"step_note": _say("Click a step in the table first.", warn=True)}
    if change == "insert":
        at = len(rows) - 1 if at is None else at
        rows.insert(at + 1, ["(new step: type it here)", False])
        at, note = at + 1, f"Step {at + 2} added: double-click it to type."
    elif change == "delete":
        assert at is not None
        rows.pop(at)
        at, note = (min(at, len(rows) - 1) if rows else None), f"Step {at + 1} deleted."
    else:
        assert at is not None
        to = at + (-1 if change == "up" else 1)
        if not 0 <= to < len(rows):
            return {"step_note": said("That step cannot move further.")}
        rows[at], rows[to] = rows[to], rows[at]
        at, note = to, f"Step moved to {to + 1}."
    return {"table": pd.DataFrame(rows, columns=COLUMNS), "selected": at, "step_note": said(note)}


def on_move_step(
    ctx: AppContext, table: Any, selected: Any, direction: str, request: gr.Request
) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "up" if direction == "up" else "down")


def on_insert_step(ctx: AppContext, table: Any, selected: Any, request: gr.Request) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "insert")


def on_delete_step(ctx: AppContext, table: Any, selected: Any, request: gr.Request) -> dict[str, Any]:
    require_user(ctx, request)
    return _edited(table, selected, "delete")


def on_text_open(ctx: AppContext, table: Any, request: gr.Request) -> dict[str, Any]:
    """The figure's text area: the current steps, one per line."""
    require_user(ctx, request)
    return {"steps_text": "\n".join(steps_of(table)[0])}


def on_steps_from_text(ctx: AppContext, text: str, table: Any, request: gr.Request) -> dict[str, Any]:
    """Replace the steps by the text area's lines (marks kept for steps whose text is unchanged)."""
    require_user(ctx, request)
    steps = parse_steps_text(text or "")
    if not steps:
        return {"step_note": _say("The text holds no step: one step per line.", warn=True)}
    old, incorrect = steps_of(table)
    wrong = {old[i - 1] for i in incorrect}
    marked = {i + 1 for i, s in enumerate(steps) if s in wrong}
    return {
        "table": table_of(steps, marked),
        "selected": None,
        "step_note": said(f"{len(steps)} steps from the text."),
    }


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
        current=current, selected=selected,
    )  # fmt: skip
    shown = Outputs(dataset=dataset, jump=jump, disputes_box=disputes_box, **item.components)
    editing = Outputs(table=table, selected=selected, step_note=step_note, steps_text=steps_text)
    private = {"api_visibility": "private", "show_progress": "minimal", "queue": False}
    opened = Outputs(dataset=dataset, disputes_box=disputes_box, **item.components)
    tab.select(opened.bind(on_tab_open, ctx), [dataset, current], list(opened), **private)
    dataset.input(item.bind(on_dataset_change, ctx), [dataset, current], list(item), **private)
    for button, word in ((accept, "accept"), (reject, "reject")):
        verdict = gr.State(word)
        button.click(
            item.bind(on_decide, ctx), [verdict, table, criteria, reason, current], list(item), **private
        )
    previous.click(item.bind(on_previous, ctx), [current], list(item), **private)
    following.click(item.bind(on_next, ctx), [current], list(item), **private)
    skip.click(item.bind(on_skip, ctx), [current], list(item), **private)
    for event, source in ((jump.submit, jump), (go.click, jump), (slider.release, slider)):
        event(shown.bind(on_jump, ctx), [source, current], [*item, jump], **private)
    table.select(editing.bind(on_select_step, ctx), [table], list(editing), **private)
    # Unsaved work is kept on the server: typed cells, marks, criteria, the reason, and each step tool.
    keep = {"api_visibility": "private", "show_progress": "hidden", "queue": False}
    keeping = Outputs()
    draft_inputs = [table, criteria, reason, current]
    for event in (table.input, criteria.input, reason.blur):
        event(keeping.bind(on_draft, ctx), draft_inputs, [], trigger_mode="always_last", **keep)
    tools = [
        (button, on_move_step, [table, selected, gr.State(way)])
        for button, way in ((up, "up"), (down, "down"))
    ]
    tools += [(insert, on_insert_step, [table, selected]), (delete, on_delete_step, [table, selected])]
    tools += [(use_text, on_steps_from_text, [steps_text, table])]
    for button, handler, inputs in tools:
        edited = button.click(editing.bind(handler, ctx), inputs, list(editing), **private)
        edited.then(keeping.bind(on_draft, ctx), draft_inputs, [], **keep)
    text_box.expand(editing.bind(on_text_open, ctx), [table], list(editing), **private)
