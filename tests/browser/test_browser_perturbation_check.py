"""The perturbation check in headless Chromium: a checker fails an image variant on I2, the app's own
worker re-applies the perturbation to the same image, and the new variant comes back to the check."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from services import jobs, perturbation
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store, users
from tests.browser_support import Server, login, running, screenshot

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

PASSWORD = "checker-password-1"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("perturbation") / "check.duckdb"
    with Store(db) as store:
        populate_demo(store)
        users.add_user(store, "cleo", "annotator", PASSWORD)
        users.add_user(store, "lead", "admin", PASSWORD)
        perturbation.create_check_dataset(
            store, OPERATOR, "mathvista-quality-gate", "figures", "image", limit=1
        )
        assert jobs.run_pending(store).done == 1
    with running(db, "--no-demo") as server:
        yield server


def _page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(30_000)
    return page


def _open_tab(page: Page) -> None:
    page.get_by_role("tab", name="Home").click()
    page.get_by_role("tab", name="Perturbation check").click()


def test_a_failed_check_comes_back_with_a_new_variant(browser: Browser, app: Server) -> None:
    page = _page(browser)
    login(page, app.url, "cleo", PASSWORD)
    _open_tab(page)
    expect(page.locator("#pc-made")).to_contain_text("Image perturbation · operation:")
    expect(page.locator("#pc-made")).not_to_contain_text("variant")  # no attempt count for checkers
    expect(page.locator("#pc-header")).to_contain_text("mv-geometry-1:image")
    expect(page.locator("#pc-original-image img")).to_be_visible()
    expect(page.locator("#pc-perturbed-image img")).to_be_visible()
    expect(page.locator("#pc-admin")).to_be_hidden()  # the variants' verdicts are admins' to see
    first_variant = page.locator("#pc-perturbed-image img").get_attribute("src")
    page.locator("#pc-checklist label", has_text="I1:").click()  # I2 left unticked: the variant fails
    screenshot(page, "perturbation-check-before-save")
    page.locator("#pc-save").click()
    expect(page.locator("#pc-status")).to_contain_text("failed (I2)")

    deadline = time.time() + 30
    while time.time() < deadline:  # the app's worker makes the next variant within seconds
        _open_tab(page)
        if "Nothing left" not in page.locator("#pc-header").inner_text(timeout=5_000):
            break
        time.sleep(1)
    expect(page.locator("#pc-made")).not_to_contain_text("variant")  # a new variant, not numbered
    expect(page.locator("#pc-header")).to_contain_text("mv-geometry-1:image")
    expect(page.locator("#pc-perturbed-image img")).to_be_visible()
    assert page.locator("#pc-perturbed-image img").get_attribute("src") != first_variant
    # keyboard only from here, as the panel's key line says: 1 and 2 tick I1 and I2, s saves
    expect(page.locator("#pc-keys")).to_contain_text("1 2 … tick or untick the checklist")
    page.locator("#pc-made").click()
    page.keyboard.press("1")
    page.keyboard.press("2")
    expect(page.locator("#pc-checklist input[type=checkbox]").nth(1)).to_be_checked()
    page.keyboard.press("s")
    expect(page.locator("#pc-status")).to_contain_text("the variant passed")
    expect(page.locator("#pc-progress")).to_contain_text("You checked 1 of 1")  # one unit, two variants
    screenshot(page, "perturbation-check-passed")
    page.keyboard.press("p")  # back to the check just saved, then by number with g
    expect(page.locator("#pc-header")).to_contain_text("you checked it: pass")
    page.keyboard.press("n")
    expect(page.locator("#pc-header")).to_contain_text("Nothing left")
    page.keyboard.press("g")
    page.keyboard.type("1")
    page.keyboard.press("Enter")
    expect(page.locator("#pc-header")).to_contain_text("mv-geometry-1:image · 1 of 1 · you checked it: pass")
    page.context.close()

    admin = _page(browser)
    login(admin, app.url, "lead", PASSWORD)
    admin.get_by_role("tab", name="Jobs").click()
    expect(admin.locator("#jobs-table")).to_contain_text("perturb")
    expect(admin.locator("#jobs-loops")).to_contain_text("perturbation")
    admin.context.close()
