"""Browse in headless Chromium: an adjudicator filters to one error type, opens an item and sees its
lineage; a link reopens the item; an annotator sees her own finished work only."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser_support import Server, cli, login, running, screenshot
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

JUDGE, JUDGE_PASSWORD = "judge", "judge-password-1"
FIRST = "prm_test_p1_0:confidence"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("browse")
    db = folder / "browse.duckdb"
    cli("users", "add", JUDGE, "--role", "adjudicator", "--password", JUDGE_PASSWORD, db=db)
    cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db)
    # The first item comes again with its question changed: version 2, "reimported", parent 1.
    first = json.loads(PRMBENCH_FILE.read_text(encoding="utf-8").splitlines()[0])
    first["question"] = first["question"] + " (revised)"
    (folder / "again.jsonl").write_text(json.dumps(first) + "\n", encoding="utf-8")
    cli("import", str(folder / "again.jsonl"), "--dataset", "prm", db=db)
    with running(db, "--no-demo") as app:
        yield app


def new_page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    return page


def test_an_adjudicator_filters_to_one_error_type_and_sees_an_items_lineage(
    server: Server, browser: Browser
) -> None:
    page = new_page(browser)
    login(page, server.url, JUDGE, JUDGE_PASSWORD)
    page.get_by_role("tab", name="Browse").click()
    expect(page.locator("#br-page-line")).to_contain_text("394")
    page.locator("#br-error-type input").click()
    page.get_by_role("option", name="confidence", exact=True).click()
    page.keyboard.press("Escape")
    page.locator("#br-search").click()
    expect(page.locator("#br-page-line")).not_to_contain_text("394")
    table = page.locator("#br-results")
    expect(table).to_contain_text(FIRST)
    assert "circular" not in table.inner_text()
    # issue 29: no empty table with placeholder headers ("1 2 3") before an item is opened
    expect(page.locator("#br-annotations")).to_be_hidden()
    page.locator("#br-open-id input, #br-open-id textarea").first.fill("1")
    page.locator("#br-open").click()
    expect(page.locator("#br-item")).to_contain_text(FIRST)
    expect(page.locator("#br-annotations")).to_be_visible()
    expect(page.locator("#br-item")).to_contain_text("(revised)")
    expect(page.locator("#br-item .br-error-step")).to_have_count(2)
    lineage = page.locator("#br-lineage")
    expect(lineage).to_contain_text("reimported")
    expect(lineage).to_contain_text("imported")
    expect(page.locator("#br-plot img")).to_be_visible()
    link = page.locator("#br-link code").inner_text()
    assert "item=1" in link and "error_type=confidence" in link
    screenshot(page, "browse-adjudicator")

    # The link reopens the item for someone else with the role.
    again = new_page(browser)
    login(again, server.url + "/" + link, JUDGE, JUDGE_PASSWORD)
    again.goto(server.url + "/" + link)
    again.wait_for_selector("#panels")
    again.get_by_role("tab", name="Browse").click()
    expect(again.locator("#br-lineage")).to_contain_text("reimported")
    expect(again.locator("#br-item")).to_contain_text(FIRST)


def test_an_annotator_browses_only_her_own_finished_work(server: Server, browser: Browser) -> None:
    page = new_page(browser)
    login(page, server.url, "newcomer", "newcomer-password")
    page.get_by_text("Signed in as").wait_for()
    page.get_by_role("tab", name="Browse", exact=True).click()
    expect(page.locator("#br-note")).to_contain_text("Your finished work")
    expect(page.locator("#br-page-line")).to_contain_text("0 item(s)")  # she has labelled nothing yet
    for hidden in ("#br-state", "#br-difficulty", "#br-annotator", "#br-export-row"):
        expect(page.locator(hidden)).to_be_hidden()
    page.locator("#br-open-id input, #br-open-id textarea").first.fill("1")
    page.locator("#br-open").click()
    expect(page.locator("#br-status")).to_contain_text("not among your finished work")
    expect(page.locator("#br-item")).not_to_contain_text(FIRST)
