"""The step-match study in headless Chromium: an annotator labels sampled pairs with the keyboard, blind
to the encoder, and a reviewer opens the Table S1 report with the calibrated threshold."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, expect
from playwright.sync_api import Error as PlaywrightError

from store import Store
from store.datasets import get_dataset
from store.items import item_ids
from tests.browser_support import ROOT, Server, cli, login, logout, running, screenshot

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

LEAD, LEAD_PASSWORD = "lead", "lead-password-1"
EXAMPLES = ROOT / "demo_data" / "step_match_examples_demo.jsonl"


@pytest.fixture(scope="module")
def study(
    tmp_path_factory: pytest.TempPathFactory, give_encoder_export: Callable[[Path], None]
) -> Iterator[tuple[Server, list[str]]]:
    """A sampled study of 6 pairs (2 per band); yields the app and the hidden scores as text."""
    db = tmp_path_factory.mktemp("step-match") / "study.duckdb"
    cli("users", "add", LEAD, "--role", "admin", "--password", LEAD_PASSWORD, db=db)
    give_encoder_export(db)
    made = cli("study", str(EXAMPLES), "--dataset", "pairs", "--counts", "2,2,2", "--seed", "5", db=db)
    assert "6 pairs" in made.stdout and "not CRYSTAL's all-distilroberta-v1" in made.stdout
    with Store(db) as store:
        dataset = get_dataset(store, "pairs")
        from store.items import get_item

        hidden = [format(get_item(store, i).meta["similarity"], ".3f") for i in item_ids(store, dataset.id)]
    with running(db, "--no-demo") as app:
        yield app, hidden


def new_page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    return page


def open_study(page: Page, header: str = "Pair pair-") -> None:
    page.get_by_role("tab", name="Step-match study").click()
    expect(page.locator("#sm-header")).to_contain_text(re.compile(header))


def test_an_annotator_labels_blind_and_a_reviewer_sees_the_report(
    browser: Browser, study: tuple[Server, list[str]]
) -> None:
    server, hidden = study
    page = new_page(browser)
    replies: list[str] = []

    def keep(response: Response) -> None:
        if "/gradio_api/" in response.url:
            with contextlib.suppress(PlaywrightError):  # a stream that ended with the page
                # Gradio's own timings ("duration": 0.1188...) can hold a score's digits by chance.
                replies.append(re.sub(r'"(average_)?duration":\s*[-0-9.e]+', "", response.text()))

    login(page, server.url, "ann", "ann-password")
    page.on("response", keep)
    open_study(page)
    expect(page.locator("#sm-report")).to_be_hidden()
    first = page.locator("#sm-header").inner_text()
    page.keyboard.press("x")  # skipped: the pair comes back after the rest
    expect(page.locator("#sm-status")).to_contain_text("Skipped")
    expect(page.locator("#sm-header")).not_to_have_text(first)
    for n in range(6):
        header = page.locator("#sm-header").inner_text()
        expect(page.locator("#sm-predicted")).not_to_be_empty()
        page.keyboard.press("m" if n % 2 == 0 else "n")
        expect(
            page.locator('#sm-choice input[value="%s"]' % ("match" if n % 2 == 0 else "no_match"))
        ).to_be_checked()
        page.keyboard.press("s" if n < 5 else "Control+Enter")  # the last pair by the other save key
        expect(page.locator("#sm-status")).to_contain_text(
            "Saved: " + ("Match" if n % 2 == 0 else "No match")
        )
        if n < 5:
            expect(page.locator("#sm-header")).not_to_have_text(header)
    expect(page.locator("#sm-header")).to_contain_text("Nothing left for you")
    expect(page.locator("#sm-keys")).to_contain_text("m / n match / no match")
    page.keyboard.press("?")  # the overlay gives the study its own keys: n is "no match" here
    expect(page.locator("#stepgate-help")).to_contain_text("except the Step-match study")
    expect(page.locator("#stepgate-help")).to_have_class(re.compile("stepgate-help-open"))
    page.keyboard.press("Escape")
    expect(page.locator("#stepgate-help")).not_to_have_class(re.compile("stepgate-help-open"))
    expect(page.locator("#sm-progress")).to_contain_text("You labelled 6 of 6")
    seen = page.content() + "".join(replies)
    for score in hidden:  # the encoder's scores are nowhere in the page or the event replies
        assert score not in seen
    assert "encoder_match" not in seen and "similarity" not in "".join(replies)
    assert any("Saved" in r for r in replies)  # the replies were read
    page.remove_listener("response", keep)
    logout(page)

    login(page, server.url, LEAD, LEAD_PASSWORD)
    open_study(page, "Nothing left")  # one annotator per pair: all are labelled
    page.locator("#sm-report").get_by_text("Study report").click()
    page.locator("#sm-report-refresh").click()
    expect(page.locator("#sm-report-note")).to_contain_text("6 of 6 pairs labelled")
    expect(page.locator("#sm-report-note")).to_contain_text("not CRYSTAL's all-distilroberta-v1")
    expect(page.locator("#sm-table")).to_contain_text("Overall")
    expect(page.locator("#sm-table")).to_contain_text("[0.35, 0.50)")
    expect(page.locator("#sm-calibration")).to_contain_text("Calibrated threshold for all-MiniLM-L6-v2")
    expect(page.locator("#sm-humans")).to_contain_text("Human-human agreement")
    screenshot(page, "step-match-report")
