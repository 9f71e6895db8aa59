"""The step-match study's files in headless Chromium: an admin uploads predicted and reference example
sets in the Data panel (a bad file is refused with its line), samples a study, and downloads its report,
which names the encoder and says it is not CRYSTAL's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.browser_support import ROOT, cli, login, running, screenshot, upload

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)  # the first sampling loads the encoder

LEAD, PASSWORD = "lead", "lead-password-1"
EXAMPLES = ROOT / "demo_data" / "step_match_examples_demo.jsonl"


def test_an_admin_uploads_examples_samples_a_study_and_downloads_its_report(
    tmp_path: Path, browser: Browser, give_encoder_export: Callable[[Path], None]
) -> None:
    db = tmp_path / "files.duckdb"
    cli("users", "add", LEAD, "--role", "admin", "--password", PASSWORD, db=db)
    give_encoder_export(db)
    bad = tmp_path / "bad-examples.jsonl"
    bad.write_text(EXAMPLES.read_text(encoding="utf-8").splitlines()[0] + "\n{not json\n", encoding="utf-8")
    with running(db, "--no-demo") as server:
        page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
        page.set_default_timeout(60_000)
        login(page, server.url, LEAD, PASSWORD)
        page.get_by_role("tab", name="Data").click()
        page.get_by_role("tab", name="Study from examples", exact=True).click()
        page.locator("#data-study-name input, #data-study-name textarea").first.fill("uploaded")
        page.locator("#data-study-counts input, #data-study-counts textarea").first.fill("2,2,2")
        upload(page, "data-study-file", bad)
        page.locator("#data-study-run").click()
        expect(page.locator("#data-study-status")).to_contain_text("bad-examples.jsonl:2: not JSON")
        page.locator("#data-study-file button[aria-label='Clear']").first.click()
        upload(page, "data-study-file", EXAMPLES)
        # the counts once more where they are used, and seen on the page before the click: on CI a run
        # once sampled the default 100 pairs, the "2,2,2" typed before the uploads gone
        counts = page.locator("#data-study-counts input, #data-study-counts textarea").first
        counts.fill("2,2,2")
        expect(counts).to_have_value("2,2,2")
        page.locator("#data-study-run").click()
        # the first sampling loads the encoder (the export given above: not made again here)
        expect(page.locator("#data-study-status")).to_contain_text(
            "uploaded: 6 pairs sampled", timeout=240_000
        )
        expect(page.locator("#data-study-status")).to_contain_text("not CRYSTAL's all-distilroberta-v1")
        screenshot(page, "data-study-upload")

        page.goto(server.url + "/")
        page.get_by_role("tab", name="Step-match study", exact=True).click()
        page.locator("#sm-report").click()  # the accordion
        page.locator("#sm-report-download").click()
        link = page.locator("#sm-report-file a[download]")
        with page.expect_download() as download:
            link.first.click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        assert "**Encoder:** all-MiniLM-L6-v2" in text and "not CRYSTAL's all-distilroberta-v1" in text
        assert "Table S1" in text
