"""Browse exports in headless Chromium: an adjudicator filters to one error type and a difficulty
filter's choices, exports that view and downloads the file and its manifest (which names the filter)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.browser_support import Server, cli, login, pick, running, screenshot
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

JUDGE, PASSWORD = "judge", "judge-password-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("browse-export") / "browse.duckdb"
    cli("users", "add", JUDGE, "--role", "adjudicator", "--password", PASSWORD, db=db)
    cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db)
    with running(db, "--no-demo") as app:
        yield app


def test_an_adjudicator_downloads_an_export_of_a_filter(server: Server, browser: Browser) -> None:
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    login(page, server.url, JUDGE, PASSWORD)
    page.get_by_role("tab", name="Browse").click()
    expect(page.locator("#br-page-line")).to_contain_text("394")
    pick(page, "br-error-type", "circular")
    page.keyboard.press("Escape")
    page.locator("#br-search").click()
    expect(page.locator("#br-page-line")).not_to_contain_text("394")
    matched = int(page.locator("#br-page-line strong").inner_text())
    for plot in ("br-plot-chains", "br-plot-annotators", "br-plot-time"):
        expect(page.locator(f"#{plot} img")).to_be_visible()
    pick(page, "br-export-format", "items-jsonl")
    page.keyboard.press("Escape")
    page.locator("#br-export").click()
    expect(page.locator("#br-export-status")).to_contain_text(f"Wrote {matched} row(s)")
    links = page.locator("#br-export-file a[download]")
    expect(links).to_have_count(2)
    with page.expect_download() as download:
        links.nth(0).click()
    assert download.value.suggested_filename.startswith("browse-items-jsonl-")
    rows = [json.loads(r) for r in Path(download.value.path()).read_text(encoding="utf-8").splitlines()]
    assert len(rows) == matched and {r["error_type"] for r in rows} == {"circular"}
    with page.expect_download() as side:
        links.nth(1).click()
    manifest = json.loads(Path(side.value.path()).read_text(encoding="utf-8"))
    assert (
        manifest["filter"]["items"]["error_type"] == "circular"
        and manifest["filter"]["items_matched"] == matched
    )
    assert manifest["database"]["items"] == 394 and manifest["exported_at"]
    screenshot(page, "browse-export")
