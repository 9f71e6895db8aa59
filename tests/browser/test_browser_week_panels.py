"""A team's first week, as a new annotator and an admin meet it in headless Chromium at 1366x768 (issue 29):
dataset text read the same in every panel, step review on one screen opened on its first change, a
22-step chain picked without a nested scroll, a draft note kept over a reload, Scores without empty
tables, and an import's skipped lines as a file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from importers.records import ItemRecord
from store import Store, users
from store.bulk import write_records
from tests.browser_support import Server, login, running, screenshot, upload

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

WIDTH, HEIGHT = 1366, 768
LEAD, LEAD_PASSWORD = "lead", "lead-password-1"
PAIR = (
    "The interval is $(-5,5)$. Three pencils cost $1.24. Five pencils cost $1.82 <img src=x onerror=alert(1)>"
)
FIRST_CHANGE = 13  # 0-based: step 14 of 18 is the one the modification rewrote


def _review_steps() -> tuple[list[str], list[str]]:
    original = [f"Step {n + 1}: we add ${n} + 1 = {n + 1}$ and carry on with the sum." for n in range(18)]
    modified = list(original)
    modified[FIRST_CHANGE] = (
        f"Step {FIRST_CHANGE + 1}: we add ${FIRST_CHANGE} + 1 = {FIRST_CHANGE + 7}$ at once."
    )
    return original, modified


def make_database(db: Path) -> None:
    """Three small datasets of the shapes a new team meets: a long step-review sample whose change is
    deep, a 22-step solution, and a step pair with a formula, two prices and a tag."""
    original, modified = _review_steps()
    with Store(db) as store:
        with store.writing() as tx:
            write_records(
                tx,
                "long-review",
                "step_review",
                [
                    ItemRecord(
                        external_id="deep-change",
                        question="Count to 18.",
                        steps={"original": original, "modified": modified},
                        error_steps=[FIRST_CHANGE],
                        modified_steps=[FIRST_CHANGE],
                        error_type="counterfactual",
                        rationale="Step 14 adds 7 instead of 1.",
                    )
                ],
                "prmbench",
            )
            write_records(
                tx,
                "long-chain",
                "earliest_error",
                [
                    ItemRecord(
                        external_id="chain-22",
                        question="What is 22 + 0?",
                        steps={"solution": [f"Step {n + 1}. Now the total is {n + 1}." for n in range(22)]},
                        earliest_error=-1,
                        final_answer_correct=True,
                    )
                ],
                "processbench",
            )
            write_records(
                tx,
                "pairs",
                "step_match",
                [
                    ItemRecord(
                        external_id="pair-1",
                        question="What do $5 and $10 make?",
                        steps={"predicted": [PAIR], "reference": ["$x^2$ and *twice*"]},
                    )
                ],
                "steppairs",
            )
        users.add_user(store, LEAD, "admin", LEAD_PASSWORD)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("week") / "week.duckdb"
    make_database(db)
    with running(db, "--no-demo") as server:
        yield server


def _page(browser: Browser, app: Server, name: str, password: str | None = None) -> Page:
    page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
    page.set_default_timeout(30_000)
    login(page, app.url, name, password)
    return page


def _open(page: Page, app: Server, tab: str, dataset: str) -> None:
    """A shared link to the panel and its dataset (the URL keeps the place)."""
    page.goto(f"{app.url}/?tab={tab}&dataset={dataset}")
    page.wait_for_selector("#logout-link", timeout=30_000)


def _viewport_shot(page: Page, name: str) -> None:
    """The whole page and the window alone: at 1366x768 the annotation panels should be one screen."""
    whole = screenshot(page, name)
    page.screenshot(path=str(whole.with_name(f"{name}-viewport.png")))


def _page_scroll(page: Page) -> int:
    return page.evaluate("document.scrollingElement.scrollHeight - window.innerHeight")


def test_the_step_match_pair_reads_as_every_panel_reads_dataset_text(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "sam")
    _open(page, app, "step_match", "pairs")
    predicted = page.locator("#sm-predicted")
    expect(predicted.locator(".katex").first).to_be_visible()  # $(-5,5)$ typeset, not a raw red \(-5,5\)
    expect(predicted).to_contain_text("Three pencils cost $1.24. Five pencils cost $1.82")  # prices stay text
    expect(predicted).not_to_contain_text("\\(")
    expect(predicted).to_contain_text("<img src=x onerror=alert(1)>")  # the tag as text
    expect(predicted.locator("img")).to_have_count(0)
    expect(page.locator("#sm-question")).to_contain_text("What do $5 and $10 make?")
    expect(page.locator("#sm-question .katex")).to_have_count(0)
    expect(page.locator("#sm-reference .katex").first).to_be_visible()
    _viewport_shot(page, "week-step-match-text")
    page.context.close()


def test_step_review_fits_one_screen_and_opens_on_the_first_change(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "rita")
    _open(page, app, "step_review", "long-review")
    expect(page.locator("#step-review-progress")).to_contain_text("Sample 1 / 1")
    pane, first = page.locator("#step-review-right"), page.locator("#step-review-steps .sr-error").first
    expect(first).to_contain_text(f"Step {FIRST_CHANGE + 1}")

    def first_change_in_pane() -> bool:
        box, room = first.bounding_box(), pane.bounding_box()
        return bool(
            box and room and box["y"] >= room["y"] - 1 and box["y"] + 30 <= room["y"] + room["height"]
        )

    page.wait_for_function(
        """() => { const p = document.getElementById('step-review-right');
                   const f = p && p.querySelector('#step-review-steps .sr-error');
                   if (!f) return false;
                   const a = f.getBoundingClientRect(), b = p.getBoundingClientRect();
                   return a.top >= b.top - 1 && a.top + 30 <= b.bottom; }"""
    )
    assert first_change_in_pane()
    assert _page_scroll(page) <= 0, "the page itself scrolls"
    for control in (
        "#step-review-original",
        "#step-review-difficulty",
        "#step-review-save",
        "#step-review-keys",
    ):
        expect(page.locator(control)).to_be_in_viewport(ratio=1)
    keys = page.locator("#step-review-keys")
    assert keys.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the key line is cut"
    expect(keys).to_contain_text("Ctrl+Enter")
    _viewport_shot(page, "week-step-review-one-screen")

    # A note typed alone is kept on the server: a reload brings it back, and the page says where it was kept.
    note = page.locator("#step-review-note textarea")
    note.press_sequentially("step 14 jumps by seve", delay=20)  # typed: fill() sends Gradio no input event

    def last_key(response) -> bool:
        return "/gradio_api/" in response.url and "jumps by seven" in (response.request.post_data or "")

    with page.expect_response(last_key):  # the draft with the whole note has reached the server
        note.press_sequentially("n")
    page.reload()
    page.wait_for_selector("#logout-link", timeout=30_000)
    expect(page.locator("#step-review-note textarea")).to_have_value("step 14 jumps by seven")
    expect(page.locator("#step-review-status")).to_contain_text("kept on the server")
    page.context.close()


def test_a_22_step_chain_is_picked_without_a_nested_scroll(browser: Browser, app: Server) -> None:
    page = _page(browser, app, "edda")
    _open(page, app, "earliest_error", "long-chain")
    expect(page.locator("#ee-steps .ee-step")).to_have_count(22)
    choices = page.locator("#ee-choice label")
    expect(choices).to_have_count(23)  # "All steps are correct" and one per step
    for n in range(23):
        expect(choices.nth(n)).to_be_in_viewport(ratio=1)
    nested = page.evaluate(
        """() => [...document.querySelectorAll('#tab-earliest_error *')].filter((e) => {
               const s = getComputedStyle(e);
               return ['auto', 'scroll'].includes(s.overflowY) && e.scrollHeight > e.clientHeight + 1
                      && e.clientHeight > 0;
           }).map((e) => e.id || e.className).slice(0, 5)"""
    )
    assert nested == [], f"boxes that scroll inside the page: {nested}"
    _viewport_shot(page, "week-earliest-error-22-steps")
    page.locator("#ee-steps .ee-step.ee-pos-21").scroll_into_view_if_needed()  # the page scrolls, once
    page.locator("#ee-steps .ee-step.ee-pos-21").click()
    expect(page.locator("#ee-chosen")).to_contain_text("Step 22")
    expect(page.locator("#ee-save")).to_be_in_viewport()  # the side column follows the page
    page.context.close()


def test_scores_shows_no_empty_tables(browser: Browser, app: Server) -> None:
    page = _page(browser, app, LEAD, LEAD_PASSWORD)
    page.get_by_role("tab", name="Scores").click()
    expect(page.locator("#sc-status")).to_contain_text("No predictions on")
    for table in (
        "#sc-models",
        "#sc-subsets",
        "#sc-prmbench-v",
        "#sc-mpbench",
        "#sc-difficulty",
        "#sc-preset-table",
    ):
        expect(page.locator(table)).to_be_hidden()
    expect(page.locator("#sc-content")).not_to_contain_text("MPBench Table 2")
    expect(page.locator("#sc-prmscore-convention")).to_be_hidden()
    expect(page.locator("#sc-presets")).to_be_hidden()  # no study yet, and Table 2 is an earliest-error table
    _viewport_shot(page, "week-scores-no-predictions")
    page.context.close()


def test_an_imports_skipped_lines_download_as_a_file(browser: Browser, app: Server, tmp_path: Path) -> None:
    good = {"id": "ok-1", "problem": "1 + 1?", "steps": ["2"], "label": -1, "final_answer_correct": True}
    lines = [json.dumps(good), "{not json", json.dumps({**good, "id": "ok-2", "label": "seven"})]
    lines_file = tmp_path / "with-bad-lines.jsonl"
    lines_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = _page(browser, app, LEAD, LEAD_PASSWORD)
    page.get_by_role("tab", name="Data").click()
    page.get_by_role("tab", name="Import").click()
    upload(page, "data-import-file", lines_file)
    page.locator("#data-import-skip-bad input").check()
    page.locator("#data-import-run").click()
    status = page.locator("#data-import-status")
    expect(status).to_contain_text("2 bad line(s) skipped")
    expect(status).not_to_contain_text("import-reports/")  # no path on the server
    with page.expect_download() as download:
        status.get_by_text("Download with-bad-lines-import-report.tsv").click()
    rows = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert [row.split("\t")[:3] for row in rows[2:]] == [
        ["skipped", "with-bad-lines.jsonl", "2"],
        ["skipped", "with-bad-lines.jsonl", "3"],
    ]
    _viewport_shot(page, "week-data-import-report")
    page.context.close()
