"""Data (admin): import datasets, manage annotators and roles, quorum settings, export.

The browser twin of `app.py import | users | datasets | export`. Everything here is for admins:
the tab shows others one line, and every handler checks the role again because Gradio exposes
each event over HTTP. Components start empty and are filled on page load, for admins only.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gradio as gr

from services import data
from services import users as user_service
from services.data import FORMATS
from services.errors import NotAllowed, ServiceError
from services.exports import EXPORT_FORMATS, export, suffix_of
from services.imports import ImportProblem, write_skip_report
from services.records import ROLES, Annotator
from tasks import EARLIEST_ERROR, TASKS, spec_for
from ui.auth import require_admin, require_user
from ui.binding import bind
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.progress import background
from ui.kit.table import Table, table_rows
from ui.panels import data_datasets, data_study, data_tokens

__all__ = [
    "build",
    "on_add_user",
    "on_change_role",
    "on_export",
    "on_import",
    "on_open",
    "on_pick_dataset",
    "on_refresh",
    "on_remove_user",
    "on_save_settings",
    "on_set_password",
    "on_set_task_setting",
]

ADMINS_ONLY = (
    "Only admins manage data: importing datasets, annotators and roles, quorum settings and exports."
)
DETECT = "detect"
BY_FORMAT = "by format"
ALL_DATASETS = ""  # the export dropdown's value for "every dataset"
SETTINGS = ("quorum", "max_annotators", "annotators_per_item", "lease_seconds")
DATASET_COLUMNS = [
    "dataset",
    "task",
    "items",
    "settled",
    "discarded",
    "quorum",
    "max annotators",
    "annotators per item",
    "lease (s)",
    "archived",
]
USER_COLUMNS = ["annotator", "role", "password"]
_MARKDOWN = re.compile(r"([\\`*_\[\]()#|~!])")  # characters Markdown would act on

HELP = """\
Formats: PRMBench, ProcessBench, QwQ, CRYSTAL and step pairs are detected; a plain JSONL / CSV / Parquet
table needs a column mapping, e.g. `{"question": "prompt", "steps": "solution", "external_id": "id"}`.
A file with bad lines imports nothing and lists each one; tick the box to import the good lines and get
a report of the rest. Re-importing adds nothing; a changed item becomes a new version.

**Images:** an upload is read from a temporary folder, so images the file names by a relative path are
not found there. Put them in the file as base64, or import from the command line next to the image
files: `python app.py import PATH`.
"""


# ----- what the tables show (no SQL here: store functions, mapped to rows)


def _datasets_frame(ctx: AppContext, acting: Annotator) -> dict[str, Any]:
    rows = []
    for row in data.dataset_rows(ctx.store, acting):
        d, counts = row.dataset, row.counts
        rows.append(
            [
                d.name,
                d.task,
                counts["total"],
                counts["settled"],
                counts["discarded"],
                *(int(d.setting(key)) for key in SETTINGS),
                "archived" if d.archived else "",
            ]
        )
    return table_rows(DATASET_COLUMNS, rows)  # plain rows: opening the app loads no pandas


def _users_frame(ctx: AppContext, acting: Annotator) -> dict[str, Any]:
    # Never the hash: only whether a password is set.
    rows = [
        [u.name, u.role, "set" if u.has_password else "none"]
        for u in user_service.list_all(ctx.store, acting)
    ]
    return table_rows(USER_COLUMNS, rows)


def _dataset_choices(ctx: AppContext, acting: Annotator, keep: str | None) -> tuple[dict, dict]:
    """Fresh choices for the settings and export dropdowns, keeping what is picked when it still exists."""
    names = [row.dataset.name for row in data.dataset_rows(ctx.store, acting)]
    picked = keep if keep in names else (names[0] if names else None)
    return (
        gr.update(choices=names, value=picked),
        gr.update(choices=[("all datasets", ALL_DATASETS), *[(n, n) for n in names]]),
    )


def _user_choices(ctx: AppContext, acting: Annotator, keep: str | None = None) -> dict:
    names = [u.name for u in user_service.list_all(ctx.store, acting)]
    return gr.update(choices=names, value=keep if keep in names else None)


def _plain(text: str) -> str:
    """Untrusted text (file lines, names) as inert Markdown: tags escaped, Markdown syntax backslashed.

    Unlike ui.render.escape_text, quotes stay as they are: its `&#x27;` gets its `#` backslashed,
    and Markdown then shows the entity itself instead of the quote.
    """
    return _MARKDOWN.sub(r"\\\1", html.escape(str(text), quote=False))


def _done(text: str) -> str:
    return f"✓ {_plain(text)}"


def _refused(text: str) -> str:
    return f"**Nothing changed.** {_plain(text)}"


# ----- handlers: find the user, check the role, call one store/exports function, map the result


def on_open(ctx: AppContext, request: gr.Request) -> tuple:
    """Show the panel to admins with its data; others get one line and no data at all."""
    user = require_user(ctx, request)
    if not user.is_admin:
        return (gr.update(visible=True), gr.update(visible=False), *[gr.skip()] * 5)
    settings_pick, export_pick = _dataset_choices(ctx, user, None)
    return (
        gr.update(visible=False),
        gr.update(visible=True),
        _datasets_frame(ctx, user),
        _users_frame(ctx, user),
        settings_pick,
        export_pick,
        _user_choices(ctx, user),
    )


def on_refresh(ctx: AppContext, picked: str | None, request: gr.Request) -> tuple:
    admin = require_admin(ctx, request)
    return (_datasets_frame(ctx, admin), *_dataset_choices(ctx, admin, picked))


def on_import(
    ctx: AppContext,
    file: str | None,
    fmt: str | None,
    name: str,
    task: str | None,
    mapping_text: str,
    skip_bad: bool,
    picked: str | None,
    request: gr.Request,
) -> tuple:
    """Import one uploaded file whole, or refuse it and list every bad line (nothing stored)."""
    admin = require_admin(ctx, request)
    unchanged = (gr.skip(), gr.skip(), gr.skip())
    if not file:
        return ("**Nothing imported.** Choose a file to upload first.", *unchanged)
    path = Path(file)
    try:
        mapping = _parse_mapping(mapping_text)
    except ValueError as exc:
        return (f"**Nothing imported.** {_plain(str(exc))}", *unchanged)
    try:
        outcome = data.import_file(
            ctx.store,
            admin,
            path,
            format=None if fmt in (None, "", DETECT) else fmt,
            dataset=(name or "").strip() or path.stem,
            task=None if task in (None, "", BY_FORMAT) else task,
            mapping=mapping,
            skip_bad=bool(skip_bad),
            shown_name=path.name,  # the admin knows the file by its own name, not the upload's path
        )
    except data.ImportRefused as exc:
        report = _report_link(ctx, admin, path.name, list(exc.problems), [])
        return (f"{_rejection(path.name, exc)}\n\n{report}", *unchanged)
    except ServiceError as exc:
        return (f"**Nothing imported.** {_plain(str(exc))}", *unchanged)
    said = outcome.summary()
    if outcome.report_path:  # a path on the server means nothing to the admin: the file is offered below
        said = said.replace(str(outcome.report_path), "the report file below")
    text = _done(said)
    for title, problems in (("Skipped lines", outcome.skipped), ("Kept with a warning", outcome.warnings)):
        if problems:
            text += f"\n\n{title}:\n" + "\n".join(f"- line {p.line}: {_plain(p.reason)}" for p in problems)
    if outcome.skipped or outcome.warnings:
        text += "\n\n" + _report_link(ctx, admin, path.name, outcome.skipped, outcome.warnings)
    return (text, _datasets_frame(ctx, admin), *_dataset_choices(ctx, admin, picked))


def _report_link(
    ctx: AppContext,
    admin: Annotator,
    file_name: str,
    skipped: list[ImportProblem],
    warnings: list[ImportProblem],
) -> str:
    """What was skipped or kept with a change, and why, line by line, as a file for this admin only."""
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    report = folder / f"{Path(file_name).stem}-import-report.tsv"
    write_skip_report(report, Path(file_name), skipped, warnings)
    offered = offer_download(ctx, admin, report, report.name)
    shutil.rmtree(folder, ignore_errors=True)
    until = datetime.fromtimestamp(offered.expires_at, UTC).strftime("%H:%M UTC")
    return f"[Download {_plain(offered.filename)}]({offered.url}) (every line and why; until {until}, for you only)"


def _parse_mapping(text: str | None) -> dict[str, str] | None:
    if not (text or "").strip():
        return None
    try:
        mapping = json.loads(text)  # type: ignore[arg-type]
    except json.JSONDecodeError as exc:
        raise ValueError(f"The column mapping is not valid JSON ({exc.msg} at character {exc.pos}).") from exc
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
    ):
        raise ValueError(
            'The column mapping must be a JSON object of field to column names, e.g. {"question": "prompt"}.'
        )
    return mapping


def _rejection(file_name: str, exc: data.ImportRefused) -> str:
    """Every bad line with its number and reason; file content is untrusted, so all of it is escaped."""
    lines = "\n".join(f"- line {p.line}: {_plain(p.reason)}" for p in exc.problems)
    return (
        f"**Nothing was stored.** {_plain(file_name)} has {len(exc.problems)} bad line(s) "
        f"({exc.good} good line(s) held back). Fix them and upload again, or tick "
        f"*Import good lines and report the rest*.\n\n{lines}"
    )


def on_add_user(ctx: AppContext, name: str, role: str, password: str, request: gr.Request) -> tuple:
    """Add an annotator with a password (the one rule: 8 characters or more); the form is cleared."""
    acting = require_user(ctx, request)
    try:
        added = user_service.add(ctx.store, acting, name, role, password or "")
    except NotAllowed as exc:
        raise gr.Error(str(exc)) from exc
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip(), gr.skip(), gr.skip(), gr.skip())
    return (
        _done(f"added {added.name} ({added.role})"),
        _users_frame(ctx, acting),
        _user_choices(ctx, acting, added.name),
        "",
        "",
    )


def on_remove_user(ctx: AppContext, name: str | None, confirmed: bool, request: gr.Request) -> tuple:
    """Remove an annotator once the admin ticked the confirmation: they can no longer log in, their open
    sessions end, and every label they gave stays in the log (and in exports)."""
    acting = require_user(ctx, request)
    if not name:
        return (_refused("pick an annotator first"), gr.skip(), gr.skip(), gr.skip())
    if not confirmed:
        return (
            _refused(f"tick 'Yes, remove' to remove {name}: they can no longer log in; their labels stay"),
            gr.skip(),
            gr.skip(),
            gr.skip(),
        )
    try:
        user_service.remove(ctx.store, acting, name)
    except NotAllowed as exc:
        raise gr.Error(str(exc)) from exc
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip(), gr.skip(), False)
    return (
        _done(f"removed {name}: they can no longer log in; their labels stay in the log"),
        _users_frame(ctx, acting),
        _user_choices(ctx, acting, None),
        False,
    )


def on_change_role(ctx: AppContext, name: str | None, role: str, request: gr.Request) -> tuple:
    acting = require_user(ctx, request)
    if not name:
        return (_refused("pick an annotator first"), gr.skip())
    try:
        user_service.set_role(ctx.store, acting, name, role)
    except NotAllowed as exc:
        raise gr.Error(str(exc)) from exc
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip())
    return (_done(f"{name} is now {role}"), _users_frame(ctx, acting))


def on_set_password(ctx: AppContext, name: str | None, password: str, request: gr.Request) -> tuple:
    acting = require_user(ctx, request)
    if not name:
        return (_refused("pick an annotator first"), gr.skip(), gr.skip())
    try:
        user_service.set_password(ctx.store, acting, name, password or "")
    except NotAllowed as exc:
        raise gr.Error(str(exc)) from exc
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip(), gr.skip())
    return (_done(f"password of {name} changed"), _users_frame(ctx, acting), "")


def _task_settings(found: Any) -> tuple[Any, str]:
    """The task's own settings of a dataset: a pick list of their names and a line per setting."""
    spec = spec_for(found.task)
    keys = [*spec.options, *spec.list_settings, *spec.numbers]
    if not keys:
        return gr.update(choices=[], value=None, visible=False), ""
    lines = []
    for key in keys:
        value = found.setting(key)
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        if key in spec.options:
            allowed = f" (one of {', '.join(spec.options[key])})"
        elif key in spec.numbers:
            number = spec.numbers[key]
            allowed = f" ({number.accepts()}{'; ' + number.why if number.why else ''})"
        else:
            allowed = " (names, comma-separated)"
        lines.append(f"- **{key}** = {_plain(shown) or '*none*'}{allowed}")
    return gr.update(choices=keys, value=keys[0], visible=True), "\n".join(lines)


def on_pick_dataset(ctx: AppContext, name: str | None, request: gr.Request) -> tuple:
    """The picked dataset's current settings, defaults included, into the four number fields, and its
    task's own settings listed with what each accepts."""
    admin = require_admin(ctx, request)
    try:
        found = data.dataset(ctx.store, admin, name or "")
    except ServiceError:
        return (*[None] * len(SETTINGS), "", gr.update(choices=[], value=None, visible=False), "")
    if found.task == EARLIEST_ERROR:
        rule = "each item starts with *quorum* annotators and escalates up to *max annotators* until that many agree"
    else:
        rule = "each item gets *annotators per item* labels"
    return (
        *[int(found.setting(key)) for key in SETTINGS],
        f"**{_plain(found.name)}** ({found.task}): {rule}.",
        *_task_settings(found),
    )


def on_set_task_setting(
    ctx: AppContext, name: str | None, key: str | None, value: str | None, request: gr.Request
) -> tuple:
    """One of the task's own settings (a choice, or a comma-separated list of names) set for a dataset."""
    admin = require_admin(ctx, request)
    if not name or not key:
        return (_refused("pick a dataset and a setting first"), gr.skip(), gr.skip())
    try:
        updated = data.update_settings(ctx.store, admin, name, {key: (value or "").strip()})
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip(), gr.skip())
    shown = updated.setting(key)
    said = ", ".join(shown) if isinstance(shown, list) else str(shown)
    return (_done(f"{updated.name}: {key} = {said or 'none'}"), _task_settings(updated)[1], "")


def on_save_settings(
    ctx: AppContext,
    name: str | None,
    quorum: float | None,
    max_annotators: float | None,
    annotators_per_item: float | None,
    lease_seconds: float | None,
    request: gr.Request,
) -> tuple:
    admin = require_admin(ctx, request)
    if not name:
        return (_refused("pick a dataset first"), gr.skip())
    given = dict(zip(SETTINGS, (quorum, max_annotators, annotators_per_item, lease_seconds), strict=True))
    empty = [key for key, value in given.items() if value is None]
    if empty:
        return (_refused(f"{', '.join(empty)}: type a whole number"), gr.skip())
    # gr.Number hands floats; a whole float is the integer the admin typed, anything else is refused below.
    changes = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in given.items()}
    try:
        updated = data.update_settings(ctx.store, admin, name, changes)
    except ServiceError as exc:
        return (_refused(str(exc)), gr.skip())
    shown = ", ".join(f"{key}={updated.setting(key)}" for key in SETTINGS)
    return (_done(f"{updated.name}: {shown}"), _datasets_frame(ctx, admin))


def on_export(
    ctx: AppContext,
    fmt: str,
    dataset: str | None,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio's way of asking for a progress bar)
) -> tuple:
    """Write the export out of every served folder and offer it as a link for this admin only."""
    admin = require_admin(ctx, request)
    if fmt not in EXPORT_FORMATS:  # checked before it becomes part of a file name
        return (f"**Nothing exported.** {_plain(f'unknown export format {fmt!r}')}", gr.update(visible=False))
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", dataset or "all-datasets").strip("-.") or "dataset"
    out = folder / f"{stem}-{fmt}-{stamp}.{suffix_of(fmt)}"
    try:
        written = export(ctx.store, fmt, out, dataset=dataset or None, progress=lambda d, w: progress(d, w))
    except ServiceError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return (f"**Nothing exported.** {_plain(str(exc))}", gr.update(value="", visible=False))
    link = offer_download(ctx, admin, written.path, written.path.name)
    links = download_link_html(link)
    if written.manifest is not None:  # what the file holds: filter, counts, time, version
        manifest = offer_download(ctx, admin, written.manifest, written.manifest.name)
        links += " " + download_link_html(manifest)
    shutil.rmtree(folder, ignore_errors=True)  # image files of a stepgate export with images beside it
    skipped = (
        f"; left out, not of this format's task: {', '.join(written.left_out)}" if written.left_out else ""
    )
    return (
        _done(f"wrote {written.rows} row(s) to {written.path.name}{skipped}"),
        gr.update(value=links, visible=True),
    )


# ----- layout


def build(ctx: AppContext) -> None:
    refusal = gr.Markdown(ADMINS_ONLY, visible=False, elem_id="data-admins-only")
    with gr.Column(visible=False, elem_id="data-admin") as admin_area, gr.Tabs(elem_id="data-sections"):
        with gr.Tab("Datasets", id="data-datasets-tab"):
            table = Table(
                headers=DATASET_COLUMNS,
                datatype="str",
                interactive=False,
                max_height=420,
                elem_id="data-datasets",
                show_label=False,
            )
            refresh = gr.Button("Refresh", size="sm", elem_classes=["data-action"], elem_id="data-refresh")
            _, life_events, _ = data_datasets.build(ctx)
        with gr.Tab("Import", id="data-import"):
            with gr.Row():
                upload = gr.File(
                    label="File (JSONL, CSV or Parquet)",
                    file_types=[".jsonl", ".json", ".csv", ".parquet"],
                    height=150,
                    scale=2,
                    elem_id="data-import-file",
                )
                with gr.Column(scale=3):
                    with gr.Row():
                        fmt = gr.Dropdown(
                            [DETECT, *FORMATS], value=DETECT, label="Format", elem_id="data-import-format"
                        )
                        task = gr.Dropdown(
                            [BY_FORMAT, *TASKS], value=BY_FORMAT, label="Task", elem_id="data-import-task"
                        )
                        name = gr.Textbox(
                            label="Dataset name",
                            placeholder="default: the file name",
                            elem_id="data-import-name",
                        )
                    mapping = gr.Textbox(
                        label="Column mapping (JSON, plain tables only)",
                        elem_id="data-import-mapping",
                        placeholder='{"question": "prompt", "steps": "solution"}',
                    )
                    with gr.Row(equal_height=True):
                        skip_bad = gr.Checkbox(
                            label="Import good lines and report the rest",
                            value=False,
                            elem_id="data-import-skip-bad",
                        )
                        run_import = gr.Button("Import", variant="primary", elem_id="data-import-run")
            import_status = gr.Markdown("", elem_id="data-import-status", latex_delimiters=[])
            gr.Markdown(HELP, elem_classes=["data-help"])
        with gr.Tab("Annotators", id="data-annotators"), gr.Row():
            people = Table(
                headers=USER_COLUMNS,
                datatype="str",
                interactive=False,
                max_height=440,
                elem_id="data-users",
                show_label=False,
                scale=2,
            )
            with gr.Column(scale=3):
                gr.Markdown("**Add an annotator**", elem_classes=["data-note"])
                with gr.Row(equal_height=True):
                    new_name = gr.Textbox(label="Name", elem_id="data-user-name")
                    new_role = gr.Dropdown(
                        list(ROLES), value="annotator", label="Role", elem_id="data-user-role"
                    )
                    new_password = gr.Textbox(
                        label="Password",
                        placeholder=f"{user_service.MIN_PASSWORD}+ characters",
                        type="password",
                        elem_id="data-user-password",
                    )
                    add = gr.Button(
                        "Add", variant="primary", elem_classes=["data-action"], elem_id="data-user-add"
                    )
                gr.Markdown("**Change an annotator**", elem_classes=["data-note"])
                with gr.Row(equal_height=True):
                    who = gr.Dropdown([], label="Annotator", elem_id="data-user-pick")
                    role = gr.Dropdown(
                        list(ROLES), value="annotator", label="New role", elem_id="data-user-new-role"
                    )
                    change_role = gr.Button(
                        "Change role", elem_classes=["data-action"], elem_id="data-user-role-save"
                    )
                with gr.Row(equal_height=True):
                    password = gr.Textbox(
                        label=f"New password ({user_service.MIN_PASSWORD} characters or more)",
                        type="password",
                        elem_id="data-user-new-password",
                    )
                    set_password = gr.Button(
                        "Set password", elem_classes=["data-action"], elem_id="data-user-password-save"
                    )
                with gr.Row(equal_height=True):
                    confirm_remove = gr.Checkbox(
                        label="Yes, remove: they can no longer log in; their labels stay in the log",
                        value=False,
                        elem_id="data-user-remove-confirm",
                    )
                    remove = gr.Button(
                        "Remove annotator",
                        variant="stop",
                        elem_classes=["data-action"],
                        elem_id="data-user-remove",
                    )
                users_status = gr.Markdown("", elem_id="data-users-status", latex_delimiters=[])
        with gr.Tab("Settings", id="data-settings"):
            gr.Markdown(
                "**quorum** and **max annotators**: earliest-error escalation (ProcessBench: 3 must agree, "
                "up to 5 annotators). **annotators per item**: how many label each item of the other "
                "tasks. **lease seconds**: how long an opened item stays reserved for its annotator.",
                elem_classes=["data-note"],
            )
            with gr.Row(equal_height=True):
                picked = gr.Dropdown([], label="Dataset", elem_id="data-settings-dataset", min_width=240)
                numbers = [
                    gr.Number(
                        label=key.replace("_", " "), precision=0, minimum=1, elem_id=f"data-setting-{key}"
                    )
                    for key in SETTINGS
                ]
                save = gr.Button(
                    "Save", variant="primary", elem_classes=["data-action"], elem_id="data-settings-save"
                )
            settings_status = gr.Markdown("", elem_id="data-settings-status", latex_delimiters=[])
            with gr.Row(equal_height=True):
                task_key = gr.Dropdown(
                    [], label="Task setting", visible=False, elem_id="data-task-setting", min_width=240
                )
                task_value = gr.Textbox(
                    label="New value",
                    placeholder="a choice, or names separated by commas",
                    elem_id="data-task-setting-value",
                )
                set_task = gr.Button("Set", elem_classes=["data-action"], elem_id="data-task-setting-save")
            task_settings = gr.Markdown("", elem_id="data-task-settings", latex_delimiters=[])
        with gr.Tab("Export", id="data-export"):
            with gr.Row(equal_height=True):
                export_fmt = gr.Dropdown(
                    list(EXPORT_FORMATS), value="log-csv", label="Format", elem_id="data-export-format"
                )
                export_dataset = gr.Dropdown(
                    [("all datasets", ALL_DATASETS)],
                    value=ALL_DATASETS,
                    label="Dataset",
                    elem_id="data-export-dataset",
                )
                run_export = gr.Button(
                    "Export", variant="primary", elem_classes=["data-action"], elem_id="data-export-run"
                )
            export_status = gr.Markdown("", elem_id="data-export-status", latex_delimiters=[])
            download = gr.HTML("", visible=False, elem_id="data-export-file")
        with gr.Tab("Study from examples", id="data-study"):
            data_study.build(ctx)
        with gr.Tab("API tokens", id="data-tokens", elem_id="data-tokens-tab") as tokens_tab:
            data_tokens.build(ctx, tokens_tab)

    private = {"api_visibility": "private"}
    gr.on(
        None,
        bind(on_open, ctx),
        None,
        [refusal, admin_area, table, people, picked, export_dataset, who],
        **background(),
        **private,
    )
    refresh.click(bind(on_refresh, ctx), [picked], [table, picked, export_dataset], **private)
    for event in life_events:  # an archive, restore or removal shows in the table and the pickers
        event.then(bind(on_refresh, ctx), [picked], [table, picked, export_dataset], **private)
    run_import.click(
        bind(on_import, ctx),
        [upload, fmt, name, task, mapping, skip_bad, picked],
        [import_status, table, picked, export_dataset],
        **private,
    )
    add.click(
        bind(on_add_user, ctx),
        [new_name, new_role, new_password],
        [users_status, people, who, new_name, new_password],
        **private,
    )
    remove.click(
        bind(on_remove_user, ctx),
        [who, confirm_remove],
        [users_status, people, who, confirm_remove],
        **private,
    )
    change_role.click(bind(on_change_role, ctx), [who, role], [users_status, people], **private)
    set_password.click(
        bind(on_set_password, ctx), [who, password], [users_status, people, password], **private
    )
    picked.change(
        bind(on_pick_dataset, ctx),
        [picked],
        [*numbers, settings_status, task_key, task_settings],
        **background(),
        **private,
    )
    set_task.click(
        bind(on_set_task_setting, ctx),
        [picked, task_key, task_value],
        [settings_status, task_settings, task_value],
        **private,
    )
    save.click(bind(on_save_settings, ctx), [picked, *numbers], [settings_status, table], **private)
    run_export.click(bind(on_export, ctx), [export_fmt, export_dataset], [export_status, download], **private)
