"""Jobs (admins): the regeneration queue, where every item sent back stands, the share of items that
re-iterated per loop, the generators' settings and prompt templates, and starting a perturbation check.

A rejected item never silently disappears: "Sent back" lists each one as regenerating, queued,
waiting (backoff), or failed with its reason; a failed job is retried from here.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from services import generator_settings, jobs, perturbation, statistics
from services.errors import ServiceError
from tasks import TASKS
from tasks.perturbation_check import PERTURBATION_TYPES
from ui.auth import require_admin
from ui.context import AppContext
from ui.kit.messages import refusal, said
from ui.kit.outputs import Outputs
from ui.kit.progress import on_status
from ui.kit.table import Table
from ui.render import escape_text

__all__ = [
    "build",
    "on_create_check",
    "on_refresh",
    "on_retry",
    "on_run",
    "on_save_prompt",
    "on_save_settings",
]

KINDS = ("synonym", "syntactic", "regenerate_steps", "judge", "insert_error", "solve")
BACKENDS = ("none", "http", "command")
STATUSES = ["all", "queued", "running", "done", "failed"]


def _frame(rows: list[dict[str, Any]], empty: str) -> pd.DataFrame:
    return pd.DataFrame(rows) if rows else pd.DataFrame({"": [empty]})


def on_refresh(ctx: AppContext, status: str | None, request: gr.Request) -> dict[str, Any]:
    """The queue, the items sent back, the loops' shares and the settings (never the key itself)."""
    user = require_admin(ctx, request)
    try:
        wanted = None if status in (None, "", "all") else status
        config = generator_settings.generator_config(ctx.store)
        shown = generator_settings.shown_settings(config)
        sources = [n for task in TASKS for n in statistics.dataset_names(ctx.store, task)]
        return {
            "jobs_table": _frame(jobs.job_rows(ctx.store, user, wanted), "No jobs."),
            "standing": _frame(jobs.standing(ctx.store, user), "Nothing was sent back."),
            "loops": _frame(jobs.loop_table(ctx.store, user), "No item re-iterated yet."),
            "warnings": "\n".join(
                f"- ⚠ {escape_text(w)}" for w in jobs.perturbation_warnings(ctx.store, user)
            ),
            "settings_note": (
                f"Text jobs go to **{escape_text(shown['backend'])}**, the judge to "
                f"**{escape_text(shown['judge_backend'])}** · key {shown['api_key']} · command: "
                f"{escape_text(shown['command']) or '(none; set with python app.py jobs config command=...)'}"
            ),
            "backend": gr.Dropdown(choices=list(BACKENDS), value=config.backend),
            "judge_backend": gr.Dropdown(choices=list(BACKENDS), value=config.judge_backend),
            "base_url": config.base_url,
            "model": config.model,
            "timeout": config.timeout_seconds,
            "source": gr.Dropdown(choices=sources),
            "status_line": "",
        }
    except ServiceError as exc:
        return {"status_line": refusal(str(exc))}


def on_retry(ctx: AppContext, job_id: Any, status: str | None, request: gr.Request) -> dict[str, Any]:
    user = require_admin(ctx, request)
    try:
        count = jobs.retry(ctx.store, user, int(str(job_id).strip()) if str(job_id or "").strip() else None)
    except ServiceError as exc:
        return {"status_line": refusal(str(exc))}
    except ValueError:
        return {
            "status_line": refusal(
                "A job id is a number: give one, or leave it empty to retry every failed job."
            )
        }
    return {**on_refresh(ctx, status, request), "status_line": said(f"Queued again: {count} failed jobs.")}


def on_run(ctx: AppContext, status: str | None, request: gr.Request) -> dict[str, Any]:
    """Run up to 20 due jobs now (the app's worker runs them anyway within seconds)."""
    require_admin(ctx, request)
    summary = jobs.run_pending(ctx.store, "jobs-tab", limit=20)
    return {**on_refresh(ctx, status, request), "status_line": said(f"Ran due jobs: {summary.line()}.")}


def on_save_settings(
    ctx: AppContext,
    backend: str,
    judge_backend: str,
    base_url: str,
    model: str,
    api_key: str,
    timeout: Any,
    status: str | None,
    request: gr.Request,
) -> dict[str, Any]:
    """Save the generator settings; an empty key field keeps the key that is set."""
    user = require_admin(ctx, request)
    changes: dict[str, Any] = {
        "backend": backend,
        "judge_backend": judge_backend,
        "base_url": base_url or "",
        "model": model or "",
        "timeout_seconds": timeout,
    }
    if api_key:
        changes["api_key"] = api_key
    try:
        generator_settings.configure(ctx.store, user, changes)
    except ServiceError as exc:
        return {"status_line": refusal(str(exc))}
    return {
        **on_refresh(ctx, status, request),
        "api_key": "",
        "status_line": said("Generator settings saved."),
    }


def on_prompt_kind(ctx: AppContext, kind: str, request: gr.Request) -> dict[str, Any]:
    require_admin(ctx, request)
    return {"prompt": generator_settings.generator_config(ctx.store).prompt(kind) if kind in KINDS else ""}


def on_save_prompt(ctx: AppContext, kind: str, text: str, request: gr.Request) -> dict[str, Any]:
    """Save the prompt template of a job kind; an empty text restores the default."""
    user = require_admin(ctx, request)
    try:
        config = generator_settings.configure(ctx.store, user, {f"prompt.{kind}": text or ""})
    except ServiceError as exc:
        return {"status_line": refusal(str(exc))}
    return {"prompt": config.prompt(kind), "status_line": said(f"Prompt for {kind} jobs saved.")}


def on_create_check(
    ctx: AppContext, source: str, name: str, kind: str, limit: Any, status: str | None, request: gr.Request
) -> dict[str, Any]:
    """A perturbation-check dataset from a dataset's steps or images; its variants are made by the queue."""
    user = require_admin(ctx, request)
    try:
        made = perturbation.create_check_dataset(
            ctx.store, user, source or "", (name or "").strip(), kind, limit=int(limit) if limit else None
        )
    except (ServiceError, ValueError) as exc:
        return {"status_line": refusal(str(exc))}
    return {
        **on_refresh(ctx, status, request),
        "status_line": said(f"{made.dataset}: {made.units} units queued for their first variant."),
    }


def build(ctx: AppContext, tab: gr.Tab) -> None:
    with gr.Column(elem_id="jobs-panel"):
        status_line = gr.Markdown(elem_id="jobs-status")
        with gr.Row():
            status = gr.Dropdown(
                STATUSES, value="all", label="Jobs", scale=0, min_width=160, elem_id="jobs-filter"
            )
            refresh = gr.Button("Refresh", size="sm", elem_id="jobs-refresh")
            run = gr.Button("Run due jobs now", size="sm", elem_id="jobs-run")
            job_id = gr.Textbox(  # a Number shows 0 when empty: "retry job 0" is not what empty means
                value="",
                label="Job id",
                placeholder="empty: every failed job",
                max_lines=1,
                elem_id="jobs-id",
            )
            retry = gr.Button("Retry failed", size="sm", elem_id="jobs-retry")
        warnings = gr.Markdown(elem_id="jobs-warnings")
        jobs_table = Table(interactive=False, wrap=True, elem_id="jobs-table")
        gr.Markdown("**Sent back** (rejected in a gate or failed a check): where each stands")
        standing = Table(interactive=False, wrap=True, elem_id="jobs-standing")
        gr.Markdown("**Items that re-iterated, per loop**")
        loops = Table(interactive=False, elem_id="jobs-loops")
        with gr.Accordion("Generators", open=False, elem_id="jobs-generators"):
            settings_note = gr.Markdown(elem_id="jobs-settings-note")
            with gr.Row():
                backend = gr.Dropdown(
                    ["none", "http", "command"], label="Text jobs go to", elem_id="jobs-backend"
                )
                judge_backend = gr.Dropdown(
                    ["none", "http", "command"], label="Judge (loop 1)", elem_id="jobs-judge"
                )
                timeout = gr.Number(label="Timeout, seconds", elem_id="jobs-timeout")
            with gr.Row():
                base_url = gr.Textbox(label="Base URL (chat completions)", elem_id="jobs-base-url")
                model = gr.Textbox(label="Model", elem_id="jobs-model")
                api_key = gr.Textbox(label="Key (empty: keep)", type="password", elem_id="jobs-key")
            save = gr.Button("Save generator settings", size="sm", elem_id="jobs-save")
            kind = gr.Dropdown(list(KINDS), value="synonym", label="Prompt of", elem_id="jobs-kind")
            prompt = gr.Textbox(
                lines=8, label="Prompt template ($fields are filled per job)", elem_id="jobs-prompt"
            )
            save_prompt = gr.Button("Save prompt", size="sm", elem_id="jobs-save-prompt")
        with gr.Accordion("Start a perturbation check (ConfProBench)", open=False, elem_id="jobs-perturb"):
            with gr.Row():
                source = gr.Dropdown([], label="From dataset", elem_id="jobs-source")
                name = gr.Textbox(label="New dataset name", elem_id="jobs-check-name")
                check_kind = gr.Dropdown(
                    list(PERTURBATION_TYPES), value="image", label="Perturbation", elem_id="jobs-check-kind"
                )
                limit = gr.Number(
                    value=None,
                    label="At most (units)",
                    info="How many steps or images of the source dataset the check takes; 0 or empty: all",
                    precision=0,
                    minimum=0,
                    elem_id="jobs-limit",
                )
            create = gr.Button("Create and queue", size="sm", elem_id="jobs-create")

    view = Outputs(
        jobs_table=jobs_table,
        standing=standing,
        loops=loops,
        warnings=warnings,
        settings_note=settings_note,
        backend=backend,
        judge_backend=judge_backend,
        base_url=base_url,
        model=model,
        timeout=timeout,
        source=source,
        status_line=status_line,
    )
    # Every event of the panel fills most of it: its progress on the panel's status line only.
    private = {"api_visibility": "private", **on_status(status_line, "full")}
    tab.select(view.bind(on_refresh, ctx), [status], list(view), **private)
    refresh.click(view.bind(on_refresh, ctx), [status], list(view), **private)
    status.input(view.bind(on_refresh, ctx), [status], list(view), **private)
    retry.click(view.bind(on_retry, ctx), [job_id, status], list(view), **private)
    run.click(view.bind(on_run, ctx), [status], list(view), **private)
    saved = Outputs(api_key=api_key, **view.components)
    save.click(
        saved.bind(on_save_settings, ctx),
        [backend, judge_backend, base_url, model, api_key, timeout, status],
        list(saved),
        **private,
    )
    prompts = Outputs(prompt=prompt, status_line=status_line)
    kind.input(prompts.bind(on_prompt_kind, ctx), [kind], list(prompts), **private)
    tab.select(prompts.bind(on_prompt_kind, ctx), [kind], list(prompts), **private)
    save_prompt.click(prompts.bind(on_save_prompt, ctx), [kind, prompt], list(prompts), **private)
    create.click(
        view.bind(on_create_check, ctx), [source, name, check_kind, limit, status], list(view), **private
    )
