"""In Chromium: an admin opens a paper's study in the planner, plans their own, and draws it."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.browser_support import cli, login, pick, running, screenshot

pytestmark = pytest.mark.browser
PASSWORD = "plan-password-1"


def test_admin_opens_a_preset_plans_a_study_and_draws_it(tmp_path: Path, page) -> None:
    db = tmp_path / "plan.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    for name in ("ann", "bea"):  # the study's raters (every annotator, by default)
        cli("users", "add", name, "--role", "annotator", "--password", PASSWORD, db=db)
    with running(db) as server:
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="QC dashboard").click()
        page.locator("#qc-planner").get_by_text("Plan a study").first.click()
        pick(page, "plan-preset", "PRMBench-V: 100 items, 2 raters, OA 0.94")
        answer = page.locator("#plan-answer")
        answer.get_by_text("0.875 to 0.972", exact=False).wait_for(timeout=60_000)
        assert page.locator("#plan-items input").input_value() == "100"

        page.locator("#plan-items input").fill("")
        page.locator("#plan-expected input").fill("0.94")
        page.locator("#plan-half-width input").fill("0.05")
        page.locator("#plan-shares textarea, #plan-shares input").first.fill("0.95,0.05")
        page.locator("#plan-go").click()
        answer.get_by_text("items needed for a half-width of 0.05: 95").wait_for(timeout=60_000)
        image = page.locator("#plan-plot img")
        image.wait_for(state="visible")
        assert image.evaluate("img => img.naturalWidth") > 600
        assert "kappa can be as low as" in answer.inner_text()
        screenshot(page, "planner-admin")

        # Gradio drops a click on a button whose event is still under way (trigger_mode "once"): the plan
        # and its plot have arrived, but wait until the event has ended before pressing Plan again.
        expect(page.locator("#plan-answer [data-testid=status-tracker]:not(.hide)")).to_have_count(0)
        page.locator("#plan-shares textarea, #plan-shares input").first.fill("0.9,<script>x</script>")
        _press_until_sent(page, "#plan-go")
        answer.get_by_text("Not planned").wait_for()
        assert page.locator("#plan-answer script").count() == 0

        # start the planned study: 95 items for 2 blind raters
        page.locator("#qc-study-name textarea, #qc-study-name input").first.fill("planned IAA")
        page.locator("#qc-study-n input").fill("95")
        page.locator("#qc-study-kept input").uncheck()  # nothing is kept yet in a new database: a pilot
        page.locator("#qc-study-draw").click()
        page.locator("#qc-study-status").get_by_text("95 items").wait_for(timeout=60_000)
        assert "planned IAA" in page.locator("#qc-studies-table").inner_text()


def _press_until_sent(page, button: str) -> None:
    """Press until the page sends the event: Gradio drops, without a word, a click on a button whose last
    event it still counts as under way, and the status line alone has not always said when that ends (a
    clean-clone run saw the second Plan never sent)."""
    for _ in range(5):
        try:
            with page.expect_request(lambda r: "/gradio_api/queue/join" in r.url, timeout=3_000):
                page.locator(button).click()
            return
        except PlaywrightTimeoutError:
            continue
    raise AssertionError(f"{button} was pressed five times and never sent")
