"""The Data panel in the real app: an admin imports, sets the quorum, adds an annotator, exports."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from services.annotate import now_utc, submit
from services.demo import populate_demo
from services.leasing import leases_of
from store import Store, datasets, users
from store.work import next_item
from tests.browser_support import cli, login, logout, pick, running, screenshot, upload
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


def small_prmbench_file(folder: Path, lines: int = 5) -> Path:
    path = folder / "small-prm.jsonl"
    with PRMBENCH_FILE.open(encoding="utf-8") as source:
        path.write_text("".join(next(source) for _ in range(lines)), encoding="utf-8")
    return path


def file_with_a_bad_line(folder: Path) -> Path:
    good = small_prmbench_file(folder, 2).read_text(encoding="utf-8").splitlines()
    bad = json.loads(good[0]) | {"idx": "bad", "error_steps": "<img src=x onerror=alert(1)>"}
    path = folder / "has-a-bad-line.jsonl"
    path.write_text("\n".join([good[0], json.dumps(bad), good[1]]) + "\n", encoding="utf-8")
    return path


def database_with_one_label(db: Path) -> None:
    """The demo data and one stored label, so the exported log has a row to check."""
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    cli("users", "add", "ann", "--role", "annotator", "--password", "ann-password-1", db=db)
    store = Store(db)
    try:
        populate_demo(store)
        ann = users.get_user(store, "ann")
        work = next_item(
            store, leases_of(store), ann, datasets.get_dataset(store, "qwq-earliest-error"), now_utc()
        )
        submit(
            store,
            annotator=ann,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload={"earliest_error": 1},
            request_id=str(uuid.uuid4()),
        )
    finally:
        store.close()


def dataset_row(page, name: str) -> list[str]:
    row = page.locator("#data-datasets [role=row]", has_text=name)
    expect(row.first).to_be_visible()  # the tab's table renders after the click
    return row.locator("[role=gridcell]").all_inner_texts()


def test_admin_imports_sets_the_quorum_adds_an_annotator_and_downloads_the_log(tmp_path: Path, page) -> None:
    db = tmp_path / "data.duckdb"
    database_with_one_label(db)
    with running(db, "--team") as server:
        login(page, server.url, "lead", "lead-password-1")
        page.get_by_role("tab", name="Data").click()
        expect(page.locator("#data-datasets")).to_contain_text("qwq-earliest-error")
        expect(page.locator("#data-admins-only")).to_be_hidden()

        # A file with a bad line is refused, its line named, its HTML shown as text.
        page.get_by_role("tab", name="Import", exact=True).click()
        upload(page, "data-import-file", file_with_a_bad_line(tmp_path))
        page.locator("#data-import-run").click()
        status = page.locator("#data-import-status")
        expect(status).to_contain_text("Nothing was stored")
        expect(status).to_contain_text("line 2: error_steps: '<img src=x onerror=alert(1)>'")
        expect(status.locator("img")).to_have_count(0)
        screenshot(page, "data-import-refused")

        page.locator("#data-import-file button[aria-label='Clear']").click()
        upload(page, "data-import-file", small_prmbench_file(tmp_path))
        page.locator("#data-import-run").click()
        expect(status).to_contain_text(
            "small-prm.jsonl (prmbench) -> dataset 'small-prm' [step_review]: 5 new item(s)"
        )
        screenshot(page, "data-import")

        page.get_by_role("tab", name="Settings", exact=True).click()
        pick(page, "data-settings-dataset", "qwq-earliest-error")
        expect(page.locator("#data-settings-status")).to_contain_text("qwq-earliest-error (earliest_error)")
        page.locator("#data-setting-quorum input").fill("2")
        page.locator("#data-settings-save").click()
        expect(page.locator("#data-settings-status")).to_contain_text(
            "qwq-earliest-error: quorum=2, max_annotators=5"
        )
        screenshot(page, "data-settings")
        page.get_by_role("tab", name="Datasets", exact=True).click()
        # dataset, task, items, settled, discarded, quorum, ...
        assert dataset_row(page, "qwq-earliest-error")[:6] == [
            "qwq-earliest-error",
            "earliest_error",
            "174",
            "0",
            "0",
            "2",
        ]
        assert dataset_row(page, "small-prm")[:3] == ["small-prm", "step_review", "5"]
        screenshot(page, "data-datasets")

        page.get_by_role("tab", name="Annotators", exact=True).click()
        page.locator("#data-user-name").get_by_role("textbox").fill("newbie")
        page.locator("#data-user-password").get_by_role("textbox").fill("newbie-password")
        page.locator("#data-user-add").click()
        expect(page.locator("#data-users-status")).to_contain_text("added newbie (annotator)")
        expect(page.locator("#data-users")).to_contain_text("newbie")
        # the form is cleared for the next one
        expect(page.locator("#data-user-name").get_by_role("textbox")).to_have_value("")
        expect(page.locator("#data-user-password").get_by_role("textbox")).to_have_value("")
        # a wrong import's annotator is removed, only once the admin confirms
        page.locator("#data-user-name").get_by_role("textbox").fill("leaver")
        page.locator("#data-user-password").get_by_role("textbox").fill("leaver-password")
        page.locator("#data-user-add").click()
        expect(page.locator("#data-users-status")).to_contain_text("added leaver (annotator)")
        pick(page, "data-user-pick", "leaver")
        page.locator("#data-user-remove").click()
        expect(page.locator("#data-users-status")).to_contain_text("tick 'Yes, remove'")
        expect(page.locator("#data-users")).to_contain_text("leaver")
        page.locator("#data-user-remove-confirm input").check()
        page.locator("#data-user-remove").click()
        expect(page.locator("#data-users-status")).to_contain_text("removed leaver")
        expect(page.locator("#data-users")).not_to_contain_text("leaver")
        expect(page.locator("#data-user-remove-confirm input")).not_to_be_checked()
        screenshot(page, "data-annotators")

        page.get_by_role("tab", name="Export", exact=True).click()
        pick(page, "data-export-format", "log-jsonl")
        page.locator("#data-export-run").click()
        expect(page.locator("#data-export-status")).to_contain_text("wrote 1 row(s)")
        with page.expect_download() as download:
            page.locator("#data-export-file a[download]").first.click()
        assert download.value.suggested_filename.startswith("all-datasets-log-jsonl-")
        rows = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert [json.loads(r)["label_earliest_error"] for r in rows] == [1]
        screenshot(page, "data-export")
        # a benchmark format of another task is refused, naming the formats that fit
        pick(page, "data-export-format", "prmbench")
        pick(page, "data-export-dataset", "qwq-earliest-error")
        page.locator("#data-export-run").click()
        expect(page.locator("#data-export-status")).to_contain_text("holds Earliest error items")
        expect(page.locator("#data-export-status")).to_contain_text("processbench")
        # a report comes with its own extension
        pick(page, "data-export-format", "report-md")
        page.locator("#data-export-run").click()
        expect(page.locator("#data-export-status")).to_contain_text(".md")
        with page.expect_download() as download:
            page.locator("#data-export-file a[download]").first.click()
        assert download.value.suggested_filename.endswith(".md")

        # The annotator just added logs in: no Data tab, and none of its content on the page.
        logout(page)
        login(page, server.url, "newbie", "newbie-password")
        page.get_by_text("Signed in as").wait_for()
        expect(page.get_by_role("tab", name="Home")).to_be_visible()
        expect(page.get_by_role("tab", name="Data", exact=True)).to_have_count(0)
        expect(page.locator("#data-admin")).to_be_hidden()
        screenshot(page, "data-annotator-refused")
    assert cli("datasets", "list", db=db).stdout.count("small-prm") == 1
