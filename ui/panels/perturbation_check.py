"""Perturbation check: ConfProBench's quality control (docs/PROTOCOLS.md D3), one variant at a time.

The checker sees the original and its perturbed version side by side (a step, or an image), which
perturbation made it (for a syntactic variant, the one transformation it applies: T4 needs it), and
the type's checklist. Ticking every item passes the variant; an unticked item fails it, and the same
perturbation is applied again to the same step or image: the new variant comes back to the check.
Admins also see each unit's variants with their records and verdicts, and the warnings.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from services import annotate, perturbation
from services.annotate import WorkItem
from services.errors import ServiceError
from services.records import Annotator, Dataset
from tasks import PERTURBATION_CHECK
from tasks.perturbation_check import CHECKLISTS, perturbation_of
from ui.auth import require_admin
from ui.context import AppContext
from ui.kit.annotation import AnnotationKit, Current, progress_line, quick_events
from ui.kit.keymap import keys_reminder
from ui.kit.messages import refusal
from ui.kit.outputs import Outputs
from ui.kit.table import Table
from ui.render import LATEX_DELIMITERS, escape_text, safe_markdown

__all__ = [
    "build",
    "on_history",
    "on_save",
    "on_tab_open",
]

NO_DATASET = "No perturbation check yet: an admin starts one in the Jobs tab."
TYPE_TITLES = {
    "synonym": "Synonym substitution",
    "syntactic": "Syntactic transformation",
    "image": "Image perturbation",
}


def _how_made(record: dict[str, Any]) -> str:
    """Which perturbation made the variant, in the checker's words."""
    kind = record.get("type")
    # No attempt count: "variant 3" would tell the checker that two earlier variants failed (issue 32).
    line = f"**{TYPE_TITLES.get(str(kind), str(kind))}**"
    if kind == "syntactic":
        label = record.get("transformation_label") or record.get("transformation") or "not recorded"
        line += f" · transformation applied: **{escape_text(str(label))}**"
    elif kind == "image":
        params = record.get("parameters") or [{}]
        shown = ", ".join(f"{k} {v}" for k, v in (params[0] if params else {}).items() if k != "size")
        line += f" · operation: **{escape_text(str(record.get('operation')))}** ({escape_text(shown)})"
    return line


SHORTCUTS = keys_reminder("Perturbation check")


def _checklist(kind: str | None) -> list[tuple[str, str]]:
    return [(f"{key}: {text}", key) for key, text in CHECKLISTS.get(str(kind), {}).items()]


def _show(
    ctx: AppContext,
    user: Annotator,
    dataset: Dataset,
    shown: WorkItem | None,
    message: str,
    counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    if shown is None:
        return {
            "header": f"**Nothing left for you in {escape_text(dataset.name)}.** Thank you.",
            "made": "",
            "original": "",
            "perturbed": "",
            "original_image": gr.Image(value=None, visible=False),
            "perturbed_image": gr.Image(value=None, visible=False),
            "checklist": gr.CheckboxGroup(choices=[], value=[]),
            "status": message,
            "progress": progress_line(counts or {}, "variants", verb="checked"),
            "current": Current.none_in(dataset),
        }
    item = shown.item
    record = perturbation_of(item)
    kind = record.get("type")
    mine = (shown.my_label or {}).get("checks") or {}
    where = f"**{escape_text(item.external_id)}** · {shown.position} of {shown.progress.get('total', 0)}"
    if shown.state == "done":
        where += f" · you checked it: **{escape_text(str((shown.my_label or {}).get('verdict')))}**"
    images = item.image_paths
    n_original = int(record.get("images") or 0)
    is_image = kind == "image" and len(images) > n_original > 0
    return {
        "header": where,
        "made": _how_made(record),
        "original": "" if is_image else safe_markdown((item.steps.get("original") or [""])[0]),
        "perturbed": "" if is_image else safe_markdown((item.steps.get("perturbed") or [""])[0]),
        "original_image": gr.Image(value=images[0] if is_image else None, visible=is_image),
        "perturbed_image": gr.Image(value=images[n_original] if is_image else None, visible=is_image),
        "checklist": gr.CheckboxGroup(choices=_checklist(kind), value=[k for k, ok in mine.items() if ok]),
        "status": message,
        "progress": progress_line(shown.progress, "variants", verb="checked"),
        "current": Current.opened(dataset, shown, named=False, type=kind).state_dict(),
    }


KIT = AnnotationKit(
    PERTURBATION_CHECK,
    NO_DATASET,
    _show,
    noun="variant",
    save_moves_by_history=False,
    jump_hint="type a unit id or a number from 1 to the dataset size, then Go",
)


def on_tab_open(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Opening the tab gives the checker their next variant; admins also get the variants' history."""
    user = KIT.user(ctx, request)
    return KIT.on_tab(ctx, user, dataset, current, {"admin_box": gr.Accordion(visible=user.is_admin)})


def on_save(ctx: AppContext, ticked: Any, state: Any, request: gr.Request) -> dict[str, Any]:
    """Store the verdicts (ticked items hold, the rest fail) and show the next variant."""
    user, current = KIT.user(ctx, request), Current.of(state)
    if not current.has_item:
        return KIT.status("There is no variant to save.", warn=True)
    ticked = set(ticked or [])
    checks = {key: key in ticked for key in CHECKLISTS.get(str(current.get("type")), {})}
    try:
        dataset = KIT.dataset(ctx, current.dataset)
        receipt = KIT.submit(ctx, user, current, {"checks": checks}, first=False)
        shown = KIT.following(ctx, user, current, dataset)
    except ServiceError as exc:
        return KIT.status(f"Not saved: {exc}", warn=True)
    failed = [key for key, ok in checks.items() if not ok]
    verdict = (
        f"failed ({', '.join(failed)}): a new variant will come back to the check" if failed else "passed"
    )
    saved = "Already saved" if receipt.duplicate else "Saved"
    message = f"✓ {saved}: the variant {verdict}."
    if shown is None:
        message += " " + annotate.why_nothing_left(ctx.store, user, dataset)
    return KIT.show(ctx, user, dataset, shown, message)


def on_history(ctx: AppContext, dataset: str | None, current: Any, request: gr.Request) -> dict[str, Any]:
    """Admins: the shown unit's variants (records, verdicts, reviewers, parents) and the warnings."""
    user = require_admin(ctx, request)
    try:
        warnings = perturbation.warnings(ctx.store, user, dataset or "")
        shown = Current.of(current)
        variants = perturbation.history(ctx.store, user, shown.item_id) if shown.has_item else []
    except ServiceError as exc:
        return {"warnings": refusal(str(exc))}
    rows = [
        {
            "version": v.version,
            "reason": v.reason,
            "parent version id": v.parent_version_id,
            "attempt": v.record.get("attempt"),
            "operation / transformation": v.record.get("operation") or v.record.get("transformation") or "",
            "parameters": str(v.record.get("parameters") or ""),
            "seed": v.record.get("seed"),
            "candidate": v.record.get("candidate_index"),
            "checks": "; ".join(f"{c['reviewer']}: {c['verdict']} {c['checks']}" for c in v.checks),
        }
        for v in variants
    ]
    lines = "\n".join(f"- ⚠ {escape_text(w)}" for w in warnings) or "No warnings."
    return {"warnings": lines, "variants": pd.DataFrame(rows)}


def build(ctx: AppContext, tab: gr.Tab) -> None:
    math_ = {"latex_delimiters": LATEX_DELIMITERS}
    with gr.Column(elem_id="pc-panel"):
        current = gr.State(None)
        with gr.Row(equal_height=True):
            header = gr.Markdown(elem_id="pc-header")
            dataset = gr.Dropdown(
                choices=[], show_label=False, container=False, scale=0, min_width=220, elem_id="pc-dataset"
            )
        made = gr.Markdown(elem_id="pc-made")
        with gr.Row(equal_height=True):
            with gr.Column():
                gr.Markdown("**Original**")
                original = gr.Markdown(elem_id="pc-original", **math_)
                original_image = gr.Image(
                    visible=False,
                    interactive=False,
                    show_label=False,
                    height=300,
                    elem_id="pc-original-image",
                )
            with gr.Column():
                gr.Markdown("**Perturbed**")
                perturbed = gr.Markdown(elem_id="pc-perturbed", **math_)
                perturbed_image = gr.Image(
                    visible=False,
                    interactive=False,
                    show_label=False,
                    height=300,
                    elem_id="pc-perturbed-image",
                )
        checklist = gr.CheckboxGroup(
            choices=[],
            label="Tick every item that holds; an unticked item fails the variant",
            elem_id="pc-checklist",
        )
        with gr.Row():
            previous = gr.Button("Previous (p)", size="sm", elem_id="pc-previous")
            save = gr.Button("Save check (s)", variant="primary", elem_id="pc-save")
            following = gr.Button("Next (n)", size="sm", elem_id="pc-next")
            skip = gr.Button("Skip (x)", size="sm", elem_id="pc-skip")
            jump = gr.Textbox(
                placeholder="unit id or number (g)",
                show_label=False,
                container=False,
                min_width=160,
                elem_id="pc-jump",
            )
            go = gr.Button("Go", size="sm", min_width=60, elem_id="pc-go")
        status = gr.Markdown(elem_id="pc-status")
        progress = gr.Markdown(elem_id="pc-progress")
        gr.Markdown(SHORTCUTS, elem_id="pc-keys")
        with gr.Accordion(
            "Variants and warnings (admins)", open=False, visible=False, elem_id="pc-admin"
        ) as admin_box:
            show = gr.Button("Show this unit's variants", size="sm", elem_id="pc-history")
            warnings = gr.Markdown(elem_id="pc-warnings")
            variants = Table(interactive=False, wrap=True, elem_id="pc-variants")

    item = Outputs(
        header=header,
        made=made,
        original=original,
        perturbed=perturbed,
        original_image=original_image,
        perturbed_image=perturbed_image,
        checklist=checklist,
        status=status,
        progress=progress,
        current=current,
    )
    opened = Outputs(dataset=dataset, admin_box=admin_box, **item.components)
    private = quick_events()
    tab.select(opened.bind(on_tab_open, ctx), [dataset, current], list(opened), **private)
    dataset.input(item.bind(KIT.on_dataset_change, ctx), [dataset, current], list(item), **private)
    save.click(item.bind(on_save, ctx), [checklist, current], list(item), **private)
    skip.click(item.bind(KIT.on_skip, ctx), [current], list(item), **private)
    previous.click(item.bind(KIT.on_previous, ctx), [current], list(item), **private)
    following.click(item.bind(KIT.on_next, ctx), [current], list(item), **private)
    jumped = Outputs(jump=jump, **item.components)
    go.click(jumped.bind(KIT.on_jump, ctx), [jump, current], list(jumped), **private)
    jump.submit(jumped.bind(KIT.on_jump, ctx), [jump, current], list(jumped), **private)
    history = Outputs(warnings=warnings, variants=variants)
    show.click(history.bind(on_history, ctx), [dataset, current], list(history), api_visibility="private")
