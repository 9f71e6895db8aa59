"""The Data panel's handlers, called as Gradio would call them, on a real store."""

from __future__ import annotations

import html
import json
import re
import uuid
from pathlib import Path

import gradio as gr
import pandas as pd
import pytest

from services.annotate import now_utc, submit
from services.leasing import leases_of
from store import Store, datasets, users
from store.assignments import progress
from store.work import next_item
from tests.conftest import PRMBENCH_FILE
from ui.context import TEAM, AppContext
from ui.kit.downloads import find_download, private_dir
from ui.panels import data


def as_user(name: str | None) -> gr.Request:
    return gr.Request(username=name)


ADMIN = as_user("lead")


def visible(status: str) -> str:
    """What a status line's Markdown shows: backslash escapes and HTML entities undone."""
    return html.unescape(re.sub(r"\\([\\`*_\[\]()#|~!])", r"\1", status))


@pytest.fixture
def ctx(store: Store) -> AppContext:
    users.add_user(store, "lead", "admin", "lead-password-1")
    users.add_user(store, "ann", "annotator", "ann-password-1")
    users.add_user(store, "judge", "adjudicator", "judge-password-1")
    return AppContext(store=store, mode=TEAM)


@pytest.fixture
def demo_ctx(demo_store: Store) -> AppContext:
    users.add_user(demo_store, "lead", "admin", "lead-password-1")
    users.add_user(demo_store, "ann", "annotator", "ann-password-1")
    return AppContext(store=demo_store, mode=TEAM)


def import_through_panel(
    ctx: AppContext, path: Path, *, skip_bad: bool = False, mapping: str = "", name: str = ""
):
    return data.on_import(ctx, str(path), "detect", name, "by format", mapping, skip_bad, None, ADMIN)


def prmbench_lines(count: int) -> list[str]:
    with PRMBENCH_FILE.open(encoding="utf-8") as handle:
        return [next(handle).rstrip("\n") for _ in range(count)]


def file_with_bad_lines(tmp_path: Path) -> Path:
    """Three good PRMBench lines, with an HTML-laden bad line 2 and broken JSON on line 4."""
    good = prmbench_lines(3)
    bad = json.loads(good[0]) | {"idx": "bad", "modified_steps": "<img src=x onerror=alert(1)>"}
    path = tmp_path / "with-bad-lines.jsonl"
    path.write_text(
        "\n".join([good[0], json.dumps(bad), good[1], "{not json <b>", good[2]]) + "\n", encoding="utf-8"
    )
    return path


# ----- import


def by_dataset(table: dict) -> dict[str, dict]:
    """The datasets table's rows (plain rows, ui.kit.table) by dataset name."""
    rows = [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]
    return {row["dataset"]: row for row in rows}


def column(table: dict, name: str) -> list:
    """One column of a table's plain rows (ui.kit.table)."""
    at = table["headers"].index(name)
    return [row[at] for row in table["data"]]


def test_importing_the_prmbench_file_adds_its_394_items(ctx: AppContext) -> None:
    status, table, settings_pick, export_pick = import_through_panel(ctx, PRMBENCH_FILE)
    assert f"-> dataset '{PRMBENCH_FILE.stem}' [step_review]: 394 new item(s)" in visible(status)
    assert status.startswith("✓")
    found = datasets.get_dataset(ctx.store, PRMBENCH_FILE.stem)  # the name defaults to the file's stem
    assert found is not None and found.task == "step_review"
    assert progress(ctx.store, found.id)["total"] == 394
    row = by_dataset(table)[PRMBENCH_FILE.stem]
    assert (row["task"], row["items"]) == ("step_review", 394)
    assert PRMBENCH_FILE.stem in settings_pick["choices"]
    assert (PRMBENCH_FILE.stem, PRMBENCH_FILE.stem) in export_pick["choices"]


def test_a_file_with_bad_lines_is_refused_with_every_line_number_and_nothing_is_stored(
    ctx: AppContext, tmp_path: Path
) -> None:
    status, *rest = import_through_panel(ctx, file_with_bad_lines(tmp_path))
    shown = visible(status)
    assert "Nothing was stored" in shown and "with-bad-lines.jsonl has 2 bad line(s)" in shown
    assert "(3 good line(s) held back)" in shown
    assert "- line 2: modified_steps: '<img src=x onerror=alert(1)>' is not a step number" in shown
    assert "- line 4: json: not valid JSON" in shown
    # File content is untrusted: the tag in the bad line arrives escaped, never as markup.
    assert "<img" not in status and "<b>" not in status and "&lt;img" in status
    assert datasets.list_datasets(ctx.store) == []
    assert all(isinstance(update, dict) and update.get("__type__") == "update" for update in rest)


def test_import_good_lines_keeps_them_and_lists_the_skipped_ones(ctx: AppContext, tmp_path: Path) -> None:
    status, table, *_ = import_through_panel(ctx, file_with_bad_lines(tmp_path), skip_bad=True)
    shown = visible(status)
    assert "3 new item(s)" in shown and "2 bad line(s) skipped" in shown
    assert "- line 2: modified_steps" in shown and "- line 4: json" in shown
    assert by_dataset(table)["with-bad-lines"]["items"] == 3


def test_a_column_mapping_that_is_not_json_imports_nothing(ctx: AppContext, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"prompt": "2+2?", "solution": ["4"], "id": "a"}\n', encoding="utf-8")
    status, *_ = import_through_panel(ctx, path, mapping='{"question": prompt}')
    assert "Nothing imported" in status and "The column mapping is not valid JSON" in visible(status)
    assert datasets.list_datasets(ctx.store) == []


def test_a_plain_table_imports_through_its_column_mapping_under_the_given_name(
    ctx: AppContext, tmp_path: Path
) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"prompt": "2+2?", "solution": ["2+2=4", "So 4."], "id": "a"}\n', encoding="utf-8")
    mapping = '{"question": "prompt", "steps": "solution", "external_id": "id"}'
    status, *_ = import_through_panel(ctx, path, mapping=mapping, name="  sums  ")
    assert "1 new item(s)" in visible(status)
    assert datasets.get_dataset(ctx.store, "sums") is not None


def test_importing_without_a_file_says_so(ctx: AppContext) -> None:
    status, *_ = data.on_import(ctx, None, "detect", "", "by format", "", False, None, ADMIN)
    assert "Choose a file" in status


# ----- who may do what


@pytest.mark.parametrize("who", ["ann", "judge"])
def test_the_tab_shows_non_admins_one_line_and_no_data(demo_ctx: AppContext, who: str) -> None:
    if who == "judge":
        users.add_user(demo_ctx.store, "judge", "adjudicator", "judge-password-1")
    refusal, admin_area, *rest = data.on_open(demo_ctx, as_user(who))
    assert refusal["visible"] is True and admin_area["visible"] is False
    assert "qwq-earliest-error" not in repr(rest) and "lead" not in repr(rest)


def test_the_tab_shows_an_admin_the_datasets_and_annotators(demo_ctx: AppContext) -> None:
    refusal, admin_area, table, people, settings_pick, export_pick, who = data.on_open(demo_ctx, ADMIN)
    assert refusal["visible"] is False and admin_area["visible"] is True
    assert column(table, "dataset") == [
        "prmbench-step-review",
        "qwq-earliest-error",
        "mathvista-quality-gate",
    ]
    assert column(table, "items") == [394, 174, 10]
    assert people["data"] == [["ann", "annotator", "set"], ["lead", "admin", "set"]]
    assert settings_pick["value"] == "prmbench-step-review" and who["choices"] == ["ann", "lead"]
    assert export_pick["choices"][:2] == [
        ("all datasets", ""),
        ("prmbench-step-review", "prmbench-step-review"),
    ]


def every_handler_call(ctx: AppContext, request: gr.Request, tmp_path: Path) -> list:
    bad_file = file_with_bad_lines(tmp_path)
    return [
        lambda: data.on_refresh(ctx, None, request),
        lambda: data.on_import(ctx, str(bad_file), "detect", "", "by format", "", True, None, request),
        lambda: data.on_add_user(ctx, "mallory", "admin", "mallory-password", request),
        lambda: data.on_change_role(ctx, "ann", "admin", request),
        lambda: data.on_set_password(ctx, "lead", "taken-over-1", request),
        lambda: data.on_remove_user(ctx, "lead", True, request),
        lambda: data.on_pick_dataset(ctx, "qwq-earliest-error", request),
        lambda: data.on_save_settings(ctx, "qwq-earliest-error", 1, 1, 1, 1, request),
        lambda: data.on_export(ctx, "log-csv", "", request),
        lambda: data.on_set_task_setting(ctx, "prmbench-step-review", "retain_rule", "reasonable", request),
    ]


@pytest.mark.parametrize("who", ["ann", "judge", None])
def test_every_handler_refuses_anyone_but_an_admin_and_changes_nothing(
    demo_ctx: AppContext, tmp_path: Path, who: str | None
) -> None:
    users.add_user(demo_ctx.store, "judge", "adjudicator", "judge-password-1")
    store = demo_ctx.store
    before = (datasets.list_datasets(store), users.list_users(store))
    calls = every_handler_call(demo_ctx, as_user(who), tmp_path)
    for call in calls:
        with pytest.raises(gr.Error):
            call()
    assert (datasets.list_datasets(store), users.list_users(store)) == before
    assert users.authenticate(store, "lead", "lead-password-1") is not None
    assert list(private_dir(demo_ctx).iterdir()) == []
    assert len(calls) == len(data.__all__) - 2  # every handler but on_open (tested above) and build


# ----- annotators


def test_adding_an_annotator_lists_them_without_any_password_hash(ctx: AppContext) -> None:
    status, people, who, name, password = data.on_add_user(
        ctx, " newbie ", "annotator", "newbie-password", ADMIN
    )
    assert visible(status) == "✓ added newbie (annotator)"
    assert name == password == ""  # the form is cleared for the next one
    assert ["newbie", "annotator", "set"] in people["data"]
    assert who["value"] == "newbie"
    assert "scrypt" not in repr((status, people, who))
    assert users.authenticate(ctx.store, "newbie", "newbie-password") is not None


def test_an_unknown_role_is_refused_with_the_store_message(ctx: AppContext) -> None:
    status, people, _, name, password = data.on_add_user(ctx, "newbie", "superuser", "newbie-password", ADMIN)
    assert people == name == password == gr.skip()  # the table and the form are left as they are
    assert "unknown role 'superuser': choose one of annotator, adjudicator, admin" in visible(status)
    assert "Nothing changed" in status and users.get_user(ctx.store, "newbie") is None


def test_an_existing_name_and_a_short_password_are_refused(ctx: AppContext) -> None:
    status, *_ = data.on_add_user(ctx, "ann", "annotator", "another-password", ADMIN)
    assert "annotator 'ann' already exists" in visible(status)
    status, *_ = data.on_add_user(ctx, "shorty", "annotator", "short", ADMIN)
    assert "at least 8 characters" in status and users.get_user(ctx.store, "shorty") is None


def test_changing_a_role_is_stored_and_shown(ctx: AppContext) -> None:
    status, people = data.on_change_role(ctx, "ann", "adjudicator", ADMIN)
    assert status == "✓ ann is now adjudicator"
    assert users.get_user(ctx.store, "ann").role == "adjudicator"
    assert ["ann", "adjudicator", "set"] in people["data"]


def test_an_admin_cannot_take_away_their_own_admin_role(ctx: AppContext) -> None:
    status, _ = data.on_change_role(ctx, "lead", "annotator", ADMIN)
    assert "your own admin role" in status and users.get_user(ctx.store, "lead").role == "admin"


def test_setting_a_password_replaces_the_old_one(ctx: AppContext) -> None:
    status, _, cleared = data.on_set_password(ctx, "ann", "brand-new-password", ADMIN)
    assert status == "✓ password of ann changed" and cleared == ""
    assert users.authenticate(ctx.store, "ann", "brand-new-password") is not None
    assert users.authenticate(ctx.store, "ann", "ann-password-1") is None
    status, *_ = data.on_set_password(ctx, "ann", "short", ADMIN)
    assert "at least 8 characters" in status


def test_an_annotator_added_in_the_panel_always_has_a_password(ctx: AppContext) -> None:
    status, *_ = data.on_add_user(ctx, "nopass", "annotator", "", ADMIN)
    assert "at least 8 characters" in status and users.get_user(ctx.store, "nopass") is None


def test_removing_an_annotator_needs_the_confirmation_and_keeps_their_labels(demo_ctx: AppContext) -> None:
    label_one_item(demo_ctx.store)  # ann's label
    status, people, who, confirm = data.on_remove_user(demo_ctx, "ann", False, ADMIN)
    assert "tick 'Yes, remove'" in visible(status) and people == gr.skip()
    assert users.get_user(demo_ctx.store, "ann") is not None
    status, people, who, confirm = data.on_remove_user(demo_ctx, "ann", True, ADMIN)
    assert visible(status).startswith("✓ removed ann") and confirm is False
    assert "ann" not in [row[0] for row in people["data"]] and "ann" not in who["choices"]
    assert users.authenticate(demo_ctx.store, "ann", "ann-password-1") is None
    status, file = data.on_export(demo_ctx, "log-csv", "", ADMIN)
    assert pd.read_csv(downloaded(file, demo_ctx))["annotator"].tolist() == ["ann"]  # the label stays


def test_an_admin_cannot_remove_themselves(ctx: AppContext) -> None:
    status, *_ = data.on_remove_user(ctx, "lead", True, ADMIN)
    assert "cannot remove yourself" in status and users.get_user(ctx.store, "lead") is not None


# ----- settings


def test_picking_a_dataset_shows_its_settings(demo_ctx: AppContext) -> None:
    *numbers, rule, keys, listed = data.on_pick_dataset(demo_ctx, "qwq-earliest-error", ADMIN)
    assert numbers == [3, 5, 1, 900] and "escalates up to max annotators" in visible(rule).replace("*", "")
    assert keys["visible"] is False and listed == ""  # ProcessBench's task has no settings of its own
    *numbers, rule, keys, listed = data.on_pick_dataset(demo_ctx, "prmbench-step-review", ADMIN)
    assert numbers == [3, 5, 1, 900] and "annotators per item" in rule
    assert keys["choices"] == ["retain_rule", "difficulty_required", "disagreement_policy", "features"]
    assert "retain_rule = correct_and_reasonable (one of correct_and_reasonable, reasonable)" in visible(
        listed
    ).replace("*", "")


def test_a_task_setting_is_set_from_the_panel_and_a_bad_value_is_named(demo_ctx: AppContext) -> None:
    status, listed, box = data.on_set_task_setting(
        demo_ctx, "prmbench-step-review", "features", " uses figure , , long chain ", ADMIN
    )
    assert visible(status) == "✓ prmbench-step-review: features = uses figure, long chain" and box == ""
    assert "uses figure, long chain" in visible(listed)
    status, *_ = data.on_set_task_setting(demo_ctx, "prmbench-step-review", "retain_rule", "sometimes", ADMIN)
    assert "must be one of correct_and_reasonable, reasonable, not 'sometimes'" in visible(status)
    found = datasets.get_dataset(demo_ctx.store, "prmbench-step-review")
    assert found.setting("retain_rule") == "correct_and_reasonable"
    assert found.setting("features") == ["uses figure", "long chain"]
    with pytest.raises(gr.Error):
        data.on_set_task_setting(
            demo_ctx, "prmbench-step-review", "features", "x", gr.Request(username="ann")
        )


def test_saving_settings_changes_the_quorum(demo_ctx: AppContext) -> None:
    status, table = data.on_save_settings(demo_ctx, "qwq-earliest-error", 2.0, 4.0, 1.0, 600.0, ADMIN)
    assert (
        visible(status)
        == "✓ qwq-earliest-error: quorum=2, max_annotators=4, annotators_per_item=1, lease_seconds=600"
    )
    found = datasets.get_dataset(demo_ctx.store, "qwq-earliest-error")
    assert (found.setting("quorum"), found.setting("max_annotators"), found.setting("lease_seconds")) == (
        2,
        4,
        600,
    )
    row = by_dataset(table)["qwq-earliest-error"]
    assert (row["quorum"], row["max annotators"], row["lease (s)"]) == (2, 4, 600)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ((3, 1, 1, 900), "max_annotators (1) cannot be below quorum (3)"),
        ((3, 5, 0, 900), "setting 'annotators_per_item' must be a positive whole number, not 0"),
        ((2.5, 5, 1, 900), "setting 'quorum' must be a positive whole number, not 2.5"),
        ((None, 5, 1, 900), "quorum: type a whole number"),
    ],
)
def test_a_bad_setting_is_refused_with_the_message_and_nothing_changes(
    demo_ctx: AppContext, values: tuple, message: str
) -> None:
    before = datasets.list_datasets(demo_ctx.store)
    status, table = data.on_save_settings(demo_ctx, "qwq-earliest-error", *values, ADMIN)
    assert message in visible(status) and "Nothing changed" in status
    assert datasets.list_datasets(demo_ctx.store) == before
    assert table == gr.skip()  # the table is left as it is


# ----- export


def label_one_item(store: Store) -> None:
    annotator = users.get_user(store, "ann")
    dataset = datasets.get_dataset(store, "qwq-earliest-error")
    work = next_item(store, leases_of(store), annotator, dataset, now_utc())
    submit(
        store,
        annotator=annotator,
        item_id=work.item.item_id,
        version_id=work.item.version_id,
        payload={"earliest_error": -1},
        request_id=str(uuid.uuid4()),
    )


def downloaded(update: dict, ctx: AppContext) -> Path:
    """The file behind the offered link (ui.kit.downloads), found as the download route finds it."""
    assert update["visible"] is True
    token = re.search(r'href="/stepgate/download/([^"]+)"', update["value"]).group(1)
    found = find_download(ctx, token)
    assert found is not None and found[2] == "lead"
    return found[0]


def test_exporting_the_items_of_a_dataset_writes_one_line_per_item(demo_ctx: AppContext) -> None:
    status, file = data.on_export(demo_ctx, "items-jsonl", "prmbench-step-review", ADMIN)
    path = downloaded(file, demo_ctx)
    assert path.is_relative_to(private_dir(demo_ctx)) and path.suffix == ".jsonl"
    assert path.name.startswith("prmbench-step-review-items-jsonl-")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 394 and "wrote 394 row(s)" in visible(status)


def test_exporting_the_annotation_log_writes_every_stored_label(demo_ctx: AppContext) -> None:
    label_one_item(demo_ctx.store)
    status, file = data.on_export(demo_ctx, "log-csv", "", ADMIN)
    frame = pd.read_csv(downloaded(file, demo_ctx))
    assert len(frame) == 1 and "wrote 1 row(s)" in visible(status)
    assert frame.loc[0, "label_earliest_error"] == -1
    assert downloaded(file, demo_ctx).name.startswith("all-datasets-log-csv-")


def test_exporting_an_unknown_dataset_says_so_and_offers_nothing(demo_ctx: AppContext) -> None:
    status, file = data.on_export(demo_ctx, "log-csv", "no-such-set", ADMIN)
    assert "Nothing exported" in status and "no dataset named 'no-such-set'" in visible(status)
    assert file["visible"] is False and list(private_dir(demo_ctx).iterdir()) == []


def test_an_unknown_export_format_writes_nothing(demo_ctx: AppContext) -> None:
    status, file = data.on_export(demo_ctx, "../../escape", "", ADMIN)
    assert "unknown export format '../../escape'" in visible(status)
    assert file["visible"] is False and list(private_dir(demo_ctx).iterdir()) == []


def test_the_skipped_lines_are_a_file_to_download_not_a_server_path(ctx: AppContext, tmp_path: Path) -> None:
    """Issue 29: what was skipped and why, line by line, as a file for the admin who imported (the status
    named a path on the server before); a refused file offers the same list."""
    status, *_ = import_through_panel(ctx, file_with_bad_lines(tmp_path), skip_bad=True)
    assert str(ctx.store.data_dir) not in status and "the report file below" in visible(status)
    token = re.search(r"\]\(/[^)]*/([0-9A-Za-z_-]+)\)", status)
    assert token, status
    found = find_download(ctx, token.group(1))
    assert found is not None
    path, name, owner = found
    assert name == "with-bad-lines-import-report.tsv" and owner == "lead"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1] == "kind\tfile\tline\treason"
    assert [line.split("\t")[2] for line in lines[2:]] == ["2", "4"]
    assert lines[2].startswith("skipped\twith-bad-lines.jsonl\t2\tmodified_steps:")

    refused, *_ = import_through_panel(ctx, file_with_bad_lines(tmp_path), name="again")
    assert "Nothing was stored" in visible(refused) and "with-bad-lines-import-report.tsv" in refused
