"""The Jobs tab in Chromium as a new team meets it: a fresh install with no generator, a rejected gate
item waiting for one (with the annotator's reason), a generator set in the tab, the item regenerated."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from services.demo import populate_demo
from store import Store
from tests.browser_support import cli, login, running, screenshot
from tests.services.test_regeneration import REJECT, _label, _reject_one, chat  # noqa: F401 (the chat fixture)

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

PASSWORD = "jobs-password-1"
WAITING = "waiting for a generator: set one in Jobs"

# Each visible header of a table and the lines its words take: a word broken inside ("ve rs io n")
# takes more lines than the header has words.
_HEADER_LINES = """(root) => [...root.querySelectorAll('th')].filter(th => th.offsetParent !== null).map(th => {
  const tops = new Set(), walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const range = document.createRange(); range.selectNodeContents(node);
    for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
  }
  return [th.innerText.trim(), tops.size];
}).filter(([text]) => text)"""


def broken_headers(page, selector: str) -> list[tuple[str, int]]:
    """The headers of a table whose words were broken inside (more lines than words)."""
    rows = page.locator(selector).evaluate(_HEADER_LINES)
    assert rows, f"no headers in {selector}"
    return [(text, lines) for text, lines in rows if lines > len(text.split())]


def test_a_rejected_item_waits_for_a_generator_then_runs_once_one_is_set(tmp_path: Path, page, chat) -> None:  # noqa: F811
    db = tmp_path / "jobs.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    with Store(db) as store:
        populate_demo(store)
        rejected = _reject_one(store)
    page.set_viewport_size({"width": 1366, "height": 768})
    with running(db, "--no-demo") as server:
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="Jobs").click()
        standing = page.locator("#jobs-standing")
        row = standing.locator("tbody tr", has_text=rejected.external_id)
        expect(row).to_contain_text(WAITING)
        expect(row).to_contain_text(REJECT["reason"])  # the annotator's reason, not a generator's error
        expect(standing).not_to_contain_text("no generator is configured")
        expect(page.locator("#jobs-table")).to_contain_text(WAITING)
        expect(page.locator("#jobs-table")).to_contain_text("0/3")  # no attempt spent
        for table in ("#jobs-table", "#jobs-standing"):  # "jo b", "atte mpts", "ve rs io n" before
            assert broken_headers(page, table) == []
        # Job id starts empty (empty: every failed job), not 0.
        expect(page.locator("#jobs-id input, #jobs-id textarea").first).to_have_value("")
        page.locator("#jobs-perturb").get_by_text("Start a perturbation check").click()
        expect(page.locator("#jobs-limit")).to_contain_text("0 or empty: all")
        screenshot(page, "jobs-waiting-for-a-generator")

        # The admin sets a generator in the tab; the waiting job runs without a retry.
        page.locator("#jobs-generators").get_by_text("Generators").first.click()
        page.locator("#jobs-backend input").click()
        page.get_by_role("option", name="http", exact=True).click()
        page.locator("#jobs-base-url textarea, #jobs-base-url input").first.fill(chat.url)
        page.locator("#jobs-model textarea, #jobs-model input").first.fill("m")
        page.locator("#jobs-save").click()
        expect(page.locator("#jobs-status")).to_contain_text("Generator settings saved")
        for _ in range(30):
            page.locator("#jobs-refresh").click()
            page.wait_for_timeout(1000)
            if "Nothing was sent back" in standing.inner_text():
                break
        expect(standing).to_contain_text("Nothing was sent back")
        expect(page.locator("#jobs-table")).to_contain_text("done")
        screenshot(page, "jobs-after-a-generator-is-set")
