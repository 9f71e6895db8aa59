"""What every annotation panel shares (ui/kit/annotation.py), in headless Chromium, as a new annotator
meets it: each of the five panels in turn."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, Response, Route, expect

from services import jobs, perturbation
from services.access import OPERATOR
from services.demo import DEMO_DIR, populate_demo
from services.imports import import_file
from store import Store
from store.annotations import annotations_frame
from tests.browser_support import Server, answered, login, running, screenshot, settled

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)

# tab title -> (the dataset picker, the line that names the item on screen)
PANELS = {
    "Step review": ("#step-review-dataset", "#step-review-info"),
    "Earliest error": ("#ee-dataset", "#ee-header"),
    "Quality gate": ("#qg-dataset", "#qg-header"),
    "Perturbation check": ("#pc-dataset", "#pc-header"),
    "Step-match study": ("#sm-dataset", "#sm-header"),
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One dataset for each annotation panel (local mode: a new name is a new annotator)."""
    db = _datasets(tmp_path_factory.mktemp("kit") / "kit.duckdb", variants=1)
    with running(db, "--no-demo") as server:
        yield server


def _datasets(db: Path, variants: int) -> Path:
    with Store(db) as store:
        populate_demo(store)
        import_file(store, DEMO_DIR / "step_pairs_demo.jsonl", format="steppairs", dataset="pairs")
        perturbation.create_check_dataset(
            store, OPERATOR, "mathvista-quality-gate", "figures", "image", limit=variants
        )
        assert jobs.run_pending(store).done == variants
    return db


def _settled(shown: Locator) -> str:
    """The line's text once the page's quick events are answered (ui/js/busy.js) and it has stopped
    changing (a loaded machine renders an opening in steps)."""
    settled(shown.page)
    text = shown.inner_text()
    for _ in range(30):
        shown.page.wait_for_timeout(150)
        again = shown.inner_text()
        if again == text:
            return text
        text = again
    return text


def _page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(30_000)
    return page


def test_choosing_the_dataset_already_chosen_keeps_the_item_in_every_panel(
    browser: Browser, app: Server
) -> None:
    """Issue 28: it answered HTTP 500 and covered the panel with red Error badges."""
    page = _page(browser)
    failed: list[str] = []

    def keep(response: Response) -> None:
        if response.status >= 500:
            failed.append(f"{response.status} {response.url}")

    page.on("response", keep)
    login(page, app.url, "newcomer")
    for title, (picker, line) in PANELS.items():
        page.get_by_role("tab", name=title).click()
        shown = page.locator(line)
        expect(shown).not_to_be_empty()
        expect(shown).not_to_contain_text("Nothing left")
        expect(shown).not_to_contain_text("processing")  # the opening's progress note gone
        before = _settled(shown)
        chosen = page.locator(f"{picker} input").input_value()
        assert chosen, f"{title}: no dataset chosen"
        page.locator(f"{picker} input").click()
        with page.expect_response(answered) as answer:
            page.get_by_role("option", name=chosen, exact=True).click()
        # The status, not the body: a queued event's answer comes on an event stream whose body
        # Chromium may already have dropped; an error inside it shows as the toast checked below.
        assert answer.value.ok, f"{title}: {answer.value.status} {answer.value.url}"
        expect(page.locator(f"{picker} input")).to_have_value(chosen)
        panel = page.locator(".tabitem:visible")
        expect(panel.locator(".error")).to_have_count(0)
        expect(page.locator(".toast-body.error")).to_have_count(0)
        expect(shown).not_to_contain_text("processing")
        assert _settled(shown) == before, f"{title}: the item changed"
        screenshot(page, f"kit-reselect-{title.lower().replace(' ', '-')}")
    assert not failed, failed


def test_a_save_held_up_shows_the_pages_busy_mark_until_the_next_item_is_in(
    browser: Browser, app: Server
) -> None:
    """Quick events show no Gradio progress (ui/kit/annotation.quick_events): a save the server is slow
    to answer must still be seen to be under way (ui/js/busy.js), and the mark must go with the answer."""
    page = _page(browser)
    login(page, app.url, "patient")
    page.get_by_role("tab", name="Earliest error").click()
    header = page.locator("#ee-header")
    expect(header).not_to_be_empty()
    expect(header).not_to_contain_text("Nothing left")
    before = _settled(header)
    _label_earliest_error(page)
    page.wait_for_timeout(300)  # the choice's own event settles, as between a person's clicks
    busy = page.locator("#stepgate-busy")
    expect(busy).to_be_hidden()
    held: list[Route] = []

    def hold(route: Route) -> None:  # the server "slow": each request waits until let through
        held.append(route)

    page.route("**/gradio_api/run/**", hold)
    page.locator("#ee-save").click()
    expect(busy).to_be_visible()
    expect(busy).to_have_text("Working...")
    expect(header).to_have_text(before)
    screenshot(page, "kit-busy-mark", full_page=False)
    assert held, "the save never left the page"
    for route in held:
        route.continue_()
    page.unroute("**/gradio_api/run/**", hold)
    expect(header).not_to_have_text(before)
    expect(busy).to_be_hidden()
    expect(page.locator(".toast-body.error")).to_have_count(0)


def _label_sample(page: Page) -> None:
    for key in ("c", "r", "e"):  # original correct, modification reasonable, easy
        page.keyboard.press(key)


def _label_earliest_error(page: Page) -> None:
    page.locator("#ee-choice input[type='radio']").nth(1).check()


def _label_gate(page: Page) -> None:
    page.locator("#qg-header").click()  # keys act while focus is outside the table
    for key in "1234":  # the four criteria hold
        page.keyboard.press(key)


def _label_variant(page: Page) -> None:
    for box in page.locator("#pc-checklist input[type='checkbox']").all():
        box.check()


def _label_pair(page: Page) -> None:
    page.keyboard.press("m")


# tab title -> (how a full label is given, the button that saves it and moves on)
LABELS: dict[str, tuple[Callable[[Page], None], str]] = {
    "Step review": (_label_sample, "#step-review-save"),
    "Earliest error": (_label_earliest_error, "#ee-save"),
    "Quality gate": (_label_gate, "#qg-accept"),
    "Perturbation check": (_label_variant, "#pc-save"),
    "Step-match study": (_label_pair, "#sm-save"),
}


def test_each_save_labels_the_item_on_screen_and_shows_the_next_in_every_panel(
    browser: Browser, tmp_path: Path
) -> None:
    """A save answers only what changed (ui/kit/outputs.py leaves out props the page has): the next
    item must still appear whole after every save, and every label must go to the item that was shown
    when it was saved, in the order shown."""
    db = _datasets(tmp_path / "saves.duckdb", variants=3)
    shown: list[str] = []
    with running(db, "--no-demo") as server:
        page = _page(browser)
        login(page, server.url, "saver")
        for title, (_, line) in PANELS.items():
            label, save = LABELS[title]
            page.get_by_role("tab", name=title).click()
            header = page.locator(line)
            expect(header).not_to_be_empty()
            expect(header).not_to_contain_text("processing")
            for _ in range(3):
                before = _settled(header)
                assert "Nothing left" not in before, f"{title}: ran out of items"
                shown.append(before)
                label(page)
                page.wait_for_timeout(300)  # the choices' own events settle, as between a person's clicks
                page.locator(save).click()
                expect(header).not_to_have_text(before)
                expect(page.locator(".toast-body.error")).to_have_count(0)
    with Store(db) as store:
        log = annotations_frame(store)
    mine = log[log["annotator"] == "saver"]
    assert len(mine) == len(shown), (len(mine), shown)
    for (_, row), header_text in zip(mine.iterrows(), shown, strict=True):
        assert str(row["external_id"]) in header_text, (row["external_id"], header_text)
