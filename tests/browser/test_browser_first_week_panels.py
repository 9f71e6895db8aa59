"""A new annotator's first items in the annotation panels, in headless Chromium at 1366x768 (issue 29):
their own progress moves, a choice on one item does not carry over to the next, and a panel with no
data says what an admin does in the app, never a command line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from services.demo import populate_demo
from store import Store, users
from tests.browser_support import Server, login, running, screenshot

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The demo's datasets (step review, earliest error, quality gate); no perturbation check or study."""
    db = tmp_path_factory.mktemp("first-week") / "first.duckdb"
    with Store(db) as store:
        populate_demo(store)
        users.add_user(store, "lead", "admin", "lead-password-1")  # a new name is then an annotator
    with running(db, "--no-demo") as server:
        yield server


def _page(browser: Browser, app: Server, name: str) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(30_000)
    login(page, app.url, name)
    return page


def test_an_annotator_sees_their_own_progress_move_in_step_review(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "nina")
    page.get_by_role("tab", name="Step review").click()
    progress = page.locator("#step-review-progress")
    expect(progress).to_contain_text("you labelled 0 of")
    expect(progress).not_to_contain_text("Overall progress")  # the settled share is not an annotator's
    for field, value in (("original", "correct"), ("modification", "reasonable"), ("difficulty", "easy")):
        page.locator(f"#step-review-{field} label").filter(
            has=page.locator(f"input[value='{value}']")
        ).click()
    page.locator("#step-review-save").click()
    expect(progress).to_contain_text("Sample 2")
    expect(progress).to_contain_text("you labelled 1 of")
    screenshot(page, "first-week-step-review-progress")
    page.context.close()


def test_a_choice_on_one_item_does_not_carry_over_to_the_next(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "omar")
    page.get_by_role("tab", name="Earliest error").click()
    first = page.locator("#ee-header").inner_text()
    page.locator("#ee-steps .ee-step.ee-pos-3").click()
    expect(page.locator("#ee-chosen")).to_contain_text("Step 4")
    page.locator("#ee-save").click()
    expect(page.locator("#ee-status")).to_contain_text("Saved")
    expect(page.locator("#ee-header")).not_to_have_text(first)
    expect(page.locator("#ee-chosen")).not_to_contain_text("Step 4")
    expect(page.locator("#ee-steps .ee-selected")).to_have_count(0)
    expect(page.locator("#ee-choice input:checked")).to_have_count(0)
    screenshot(page, "first-week-earliest-error-next-item")

    page.get_by_role("tab", name="Quality gate").click()
    expect(page.locator("#qg-header")).to_contain_text("Index")
    page.locator("#qg-insert").click()  # a step added (and picked) on this item
    expect(page.locator("#qg-step-note")).to_contain_text("added")
    page.locator("#qg-skip").click()
    expect(page.locator("#qg-status")).to_contain_text("Skipped")
    expect(page.locator("#qg-step-note")).not_to_contain_text("added")
    screenshot(page, "first-week-quality-gate-next-item")
    page.context.close()


def test_a_panel_with_no_data_tells_an_annotator_no_command_line(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "pia")
    for title, status, says in (
        ("Perturbation check", "#pc-status", "Jobs tab"),
        ("Step-match study", "#sm-status", "Data tab"),
    ):
        page.get_by_role("tab", name=title).click()
        expect(page.locator(status)).to_contain_text(says)
        panel = page.locator(".tabitem:visible")
        expect(panel).not_to_contain_text("python app.py")
        expect(panel).not_to_contain_text("--dataset")
        screenshot(page, f"first-week-no-data-{title.lower().replace(' ', '-')}")
    page.context.close()
