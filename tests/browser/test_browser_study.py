"""An agreement study in Chromium: an admin draws it in the QC dashboard for two raters, a rater labels
a study item in the normal Step review panel, the study's progress moves, and Browse shows the item's
gate state and labels exactly as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from services.demo import populate_demo
from services.studies import draw_study
from store import Store, studies, users
from tests.browser_support import cli, login, running, screenshot
from tests.gold_support import GOOD, label

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

DATASET = "prmbench-step-review"
PASSWORD = "study-password-1"


def _team(tmp_path: Path) -> Path:
    """An admin and three annotators; ann has kept 6 items in the gate (the study's pool)."""
    db = tmp_path / "study.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    for name in ("ann", "bea", "cid"):
        cli("users", "add", name, "--role", "annotator", "--password", PASSWORD, db=db)
    with Store(db) as store:
        populate_demo(store)
        label(store, "ann", 6, GOOD)
    return db


def _page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    return page


def _expect_kept(page: Page, count: int) -> None:
    """Browse, state "complete": the gate has kept ``count`` items."""
    page.get_by_role("tab", name="Browse").click()
    # opening the tab runs its own search with the filters of the page's address (none): wait for it
    expect(page.locator("#br-page-line")).to_contain_text("item(s)")
    expect(page.locator("#br-state input")).to_have_value("")
    page.locator("#br-state input").click()
    page.get_by_role("option", name="complete", exact=True).click()
    page.keyboard.press("Escape")
    expect(page.locator("#br-state input")).to_have_value("complete")
    page.locator("#br-search").click()
    expect(page.locator("#br-page-line")).to_contain_text(f"{count} item(s) · page 1 of 1")


def test_a_rater_labels_a_study_item_in_the_panel_and_the_gate_does_not_move(
    tmp_path: Path, browser: Browser
) -> None:
    db = _team(tmp_path)
    with running(db, "--no-demo") as server:
        lead = _page(browser)
        login(lead, server.url, "lead", PASSWORD)
        _expect_kept(lead, 6)

        lead.get_by_role("tab", name="QC dashboard").click()
        lead.locator("#qc-study-name textarea, #qc-study-name input").first.fill("iaa")
        lead.locator("#qc-study-n input").fill("4")
        for name in ("bea", "cid"):
            lead.locator("#qc-study-raters input").click()
            lead.get_by_role("option", name=name, exact=True).click()
        lead.keyboard.press("Escape")
        expect(lead.locator("#qc-study-kept input")).to_be_checked()  # as the papers drew, by default
        lead.locator("#qc-study-draw").click()
        expect(lead.locator("#qc-study-status")).to_contain_text("4 kept items")
        table = lead.locator("#qc-studies-table")
        expect(table).to_contain_text("0/8")
        screenshot(lead, "study-drawn")

        # bea opens Step review as on any day: her first sample is a study item.
        bea = _page(browser)
        login(bea, server.url, "bea", PASSWORD)
        bea.get_by_role("tab", name="Step review").click()
        expect(bea.locator("#step-review-progress")).to_contain_text("Sample")
        position = int(
            re.search(r"Sample (\d+) /", bea.locator("#step-review-progress").inner_text()).group(1)
        )
        for field, value in (
            ("original", "incorrect"),
            ("modification", "unreasonable"),
            ("difficulty", "hard"),
        ):
            bea.locator(f"#step-review-{field} label").filter(
                has=bea.locator(f"input[value='{value}']")
            ).click()
        bea.locator("#step-review-save").click()
        expect(bea.locator("#step-review-status")).to_contain_text("Saved sample")
        expect(bea.locator("#step-review-progress")).to_contain_text("you labelled 1")
        screenshot(bea, "study-rater-saved")

        # The study's progress moved: one of its eight labels.
        lead.locator("#qc-study-show").click()
        expect(lead.locator("#qc-study-summary")).to_contain_text("0 of 4 items")
        expect(table).to_contain_text("1/8")
        with lead.expect_download() as download:  # the study's own labels: bea's one, nobody's gate label
            lead.locator("#qc-study-download-labels a").click()
        rows = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert len(rows) == 2 and ",bea," in rows[1] and "unreasonable" in rows[1]

        # Browse: the same items kept, and the study item shows only the gate's label (ann's), as before.
        _expect_kept(lead, 6)
        lead.locator("#br-open-id input, #br-open-id textarea").first.fill(str(position))
        lead.locator("#br-open").click()
        annotations = lead.locator("#br-annotations")
        expect(annotations).to_contain_text("ann")
        assert "bea" not in annotations.inner_text() and "unreasonable" not in annotations.inner_text()
        screenshot(lead, "study-browse-unchanged")


def test_an_admin_gives_a_removed_raters_study_items_to_another_annotator(
    tmp_path: Path, browser: Browser
) -> None:
    db = _team(tmp_path)
    cli("users", "add", "dan", "--role", "annotator", "--password", PASSWORD, db=db)
    with Store(db) as store:
        lead = users.get_user(store, "lead")
        draw_study(
            store,
            lead,
            dataset=DATASET,
            name="s",
            n_items=3,
            raters=2,
            stratify_by=None,
            rater_names=["bea", "cid"],
        )
        users.remove_user(store, "bea")  # she left the team before labelling any of her three items
    with running(db, "--no-demo") as server:
        page = _page(browser)
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="QC dashboard").click()
        expect(page.locator("#qc-study-pick input")).to_have_value("s")
        expect(page.locator("#qc-study-reassign-from input")).to_have_value("bea")
        page.locator("#qc-study-reassign-to input").click()
        page.get_by_role("option", name="dan", exact=True).click()
        page.keyboard.press("Escape")
        page.locator("#qc-study-reassign-go").click()
        expect(page.locator("#qc-study-status")).to_contain_text("gave 3 pending item(s) of bea to dan")
        expect(page.locator("#qc-study-reassign-from input")).to_have_value("")  # bea holds nothing now
        screenshot(page, "study-reassigned")
    with Store(db) as store:
        study = studies.get_study(store, "s")
        raters = studies.assigned_raters(store, study.id)
        assert len(raters) == 3 and all(sorted(names) == ["cid", "dan"] for names in raters.values())
