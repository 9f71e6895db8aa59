"""Home as a new annotator and an admin meet it (issue 29): a work queue whose buttons open the right
panel on the right dataset; an admin archives a wrong import in the Data panel and it leaves the
annotator's Home and pickers."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from services.demo import populate_demo
from store import Store
from tests.browser_support import cli, login, logout, running, screenshot
from tests.conftest import QWQ_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


def _database(tmp_path: Path) -> Path:
    db = tmp_path / "home.duckdb"
    store = Store(db)
    try:
        populate_demo(store)
    finally:
        store.close()
    small = tmp_path / "second.jsonl"
    with QWQ_FILE.open(encoding="utf-8") as source:
        small.write_text("".join(next(source) for _ in range(3)), encoding="utf-8")
    cli("import", str(small), "--dataset", "second-earliest", db=db)
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    cli("users", "add", "ann", "--role", "annotator", "--password", "ann-password-1", db=db)
    return db


def card(page, name: str):
    return page.locator(".home-card", has=page.locator(".home-name", has_text=name)).first


def test_home_opens_the_panel_on_a_dataset_and_an_archived_import_leaves_it(tmp_path: Path, page) -> None:
    db = _database(tmp_path)
    with running(db, "--team") as server:
        login(page, server.url, "ann", "ann-password-1")
        second = card(page, "second-earliest")
        expect(second).to_contain_text("3 left for you")
        expect(second).to_contain_text("0 of 3 labelled by you")
        expect(second.locator(".home-bar")).to_be_visible()
        expect(page.locator("#home-work")).not_to_contain_text("settled")  # blind: no decided counts
        screenshot(page, "home-annotator")
        # The button opens Earliest error on that dataset, not on the panel's first one.
        second.get_by_role("button", name="Open in Earliest error").click()
        expect(page.get_by_role("tab", name="Earliest error")).to_have_attribute("aria-selected", "true")
        expect(page.locator("#ee-dataset input")).to_have_value("second-earliest")
        logout(page)

        login(page, server.url, "lead", "lead-password-1")
        expect(card(page, "qwq-earliest-error").locator(".home-states")).to_contain_text("174 open")
        screenshot(page, "home-admin")
        page.get_by_role("tab", name="Data").click()
        page.locator("#data-life-dataset input").click()
        page.get_by_role("option", name="second-earliest", exact=True).click()
        expect(page.locator("#data-life-status")).to_contain_text("deletes for good: 3 items, 3 versions")
        page.locator("#data-life-archive").click()
        expect(page.locator("#data-life-status")).to_contain_text("archived second-earliest")
        row = page.locator("#data-datasets [role=row]", has_text="second-earliest").first
        expect(row).to_contain_text("archived")
        logout(page)

        login(page, server.url, "ann", "ann-password-1")
        expect(card(page, "qwq-earliest-error")).to_be_visible()
        expect(page.locator("#home-work")).not_to_contain_text("second-earliest")
        page.get_by_role("tab", name="Earliest error").click()
        page.locator("#ee-dataset input").click()
        expect(page.get_by_role("option", name="qwq-earliest-error", exact=True)).to_be_visible()
        expect(page.get_by_role("option", name="second-earliest", exact=True)).to_have_count(0)


def test_a_link_with_tab_and_dataset_opens_there_and_survives_a_reload(tmp_path: Path, page) -> None:
    db = _database(tmp_path)
    with running(db, "--team") as server:
        login(page, server.url, "ann", "ann-password-1")
        page.goto(server.url.rstrip("/") + "/?tab=earliest_error&dataset=second-earliest")
        expect(page.get_by_role("tab", name="Earliest error")).to_have_attribute("aria-selected", "true")
        expect(page.locator("#ee-dataset input")).to_have_value("second-earliest")
        page.reload()
        expect(page.get_by_role("tab", name="Earliest error")).to_have_attribute("aria-selected", "true")
        expect(page.locator("#ee-dataset input")).to_have_value("second-earliest")
        page.get_by_role("tab", name="Home").click()
        page.wait_for_function("() => window.location.search.includes('tab=home')")
        page.goto(server.url.rstrip("/") + "/?tab=no-such-tab&dataset=no-such-dataset")  # ignored
        page.wait_for_selector("#logout-link")
        expect(page.get_by_role("tab", name="Home")).to_have_attribute("aria-selected", "true")
        expect(page.locator("#home-work")).to_contain_text("second-earliest")
