"""CRYSTAL's loop 2 in the real app and headless Chromium: an annotator rejects an item at the quality
gate, the app's own worker regenerates it through the team's command backend, and the annotator later
finds the regenerated version in the same gate, with its lineage, and accepts it."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from services import generator_settings
from services.access import OPERATOR
from store import Store
from tests.browser.test_browser_quality_gate import check_criteria, open_gate
from tests.browser_support import ROOT, Server, cli, running, screenshot

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

GATE = "gate-loop"
FAKE = [sys.executable, str(ROOT / "tests" / "fake_generator.py")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("gate-loop") / "loop.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    cli(
        "import",
        str(ROOT / "demo_data" / "crystal_demo.jsonl"),
        "--format",
        "crystal",
        "--dataset",
        GATE,
        db=db,
    )
    cli("datasets", "set", GATE, "dual_percent=0", db=db)
    with Store(db) as store:  # the team's own generator: the job as JSON on stdin, JSON back
        generator_settings.configure(store, OPERATOR, {"backend": "command", "command": FAKE})
    with running(db, "--no-demo") as app:
        yield app


def test_a_rejected_item_comes_back_regenerated_in_the_same_gate_and_is_accepted(
    server: Server, browser: Browser
) -> None:
    page = open_gate(browser, server.url, "rex", dataset=GATE)
    expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-1")
    check_criteria(page, "234")  # C1 fails
    page.locator("#qg-reason input, #qg-reason textarea").first.fill("Step 2 misreads the side lengths.")
    page.locator("#qg-reject").click()
    expect(page.locator("#qg-status")).to_contain_text("Saved: rejected")
    expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-2")
    # The app's worker runs the regeneration job; back on the item, the regenerated version shows.
    for _ in range(30):
        page.locator("#qg-jump input, #qg-jump textarea").first.fill("1")  # open item 1 afresh
        page.locator("#qg-go").click()
        expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-1")
        page.wait_for_timeout(1000)
        if "version 2" in page.locator("#qg-header").inner_text():
            break
    expect(page.locator("#qg-header")).to_contain_text("version 2")
    expect(page.locator("#qg-steps")).to_contain_text("Regenerated step 1")
    page.locator("#qg-header").click()
    page.keyboard.press("l")
    expect(page.locator("#qg-lineage")).to_contain_text("regenerated")
    screenshot(page, "quality-gate-regenerated")
    check_criteria(page, "1234")
    page.keyboard.press("a")
    expect(page.locator("#qg-status")).to_contain_text("Saved: accepted")
    page.context.close()
