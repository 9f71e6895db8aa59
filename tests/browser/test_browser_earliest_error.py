"""The earliest-error panel in headless Chromium: mouse and keyboard labelling, resuming after a reload,
consensus and discard through the real gate, hostile dataset text, and blindness between annotators."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from store import Store
from store.datasets import get_dataset
from store.items import item_ids
from store.state import get_item_state
from tests.browser_support import ARTIFACTS, Server, cli, login, pick, running, screenshot
from tests.conftest import QWQ_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

LEAD, LEAD_PASSWORD = "lead", "lead-password-1"
HOSTILE_ID = "<img src=x onerror=alert(2)>"
HOSTILE_STEPS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1))",
]


def write_processbench(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def processbench_item(item_id: str, steps: list[str]) -> dict:
    return {
        "id": item_id,
        "generator": "test",
        "problem": f"Problem {item_id}: what is $1+1$?",
        "steps": steps,
        "final_answer_correct": True,
        "label": -1,
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One app for the tests that each use their own dataset and annotators (starting it is the slow part)."""
    folder = tmp_path_factory.mktemp("earliest-error")
    db = folder / "panel.duckdb"
    with QWQ_FILE.open(encoding="utf-8") as source:
        (folder / "qwq-sample.jsonl").write_text("".join(islice(source, 8)), encoding="utf-8")
    hostile = write_processbench(
        folder / "hostile.jsonl", [processbench_item(HOSTILE_ID, ["$1+1=2$.", *HOSTILE_STEPS])]
    )
    blind = write_processbench(
        folder / "blind.jsonl", [processbench_item("blind-1", ["One.", "Two.", "Three."])]
    )
    cli("users", "add", LEAD, "--role", "admin", "--password", LEAD_PASSWORD, db=db)
    cli("import", str(folder / "qwq-sample.jsonl"), "--format", "qwq", "--dataset", "qwq-sample", db=db)
    cli("import", str(hostile), "--dataset", "hostile", db=db)
    cli("import", str(blind), "--dataset", "blind", db=db)
    with running(db, "--no-demo") as app:
        yield app


def new_page(browser: Browser) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(20_000)
    return page


def open_panel(page: Page, url: str, name: str, dataset: str | None = None, item: str | None = None) -> None:
    """Log in (on 127.0.0.1 a new name becomes an annotator), open the tab, pick the dataset."""
    login(page, url, name, f"{name}-password")
    page.get_by_role("tab", name="Earliest error").click()
    expect(page.locator("#ee-header")).to_contain_text("Item")
    if dataset is not None and page.locator("#ee-dataset input").input_value() != dataset:
        pick(page, "ee-dataset", dataset, answered_on="ee-status")
        page.keyboard.press("Escape")
    if item is not None:
        expect(page.locator("#ee-header")).to_contain_text(f"Item {item}")
        expect(step(page, 0)).to_be_visible()


def header(page: Page) -> Locator:
    return page.locator("#ee-header strong").first


def step(page: Page, position: int) -> Locator:
    return page.locator(f"#ee-steps .ee-step.ee-pos-{position}")


def expect_chosen(page: Page, label: int) -> None:
    """A choice shows twice: its radio is checked and its step is marked as the earliest error."""
    expect(page.locator(f'#ee-choice input[value="{label}"]')).to_be_checked()
    if label >= 0:
        expect(step(page, label)).to_have_class(re.compile(r"\bee-selected\b"))
        expect(page.locator("#ee-steps .ee-selected")).to_have_count(1)
    else:
        expect(page.locator("#ee-steps .ee-selected")).to_have_count(0)


def save_and_expect_next(page: Page, save: Callable[[], None], saved: str) -> str:
    """Save (by mouse or key) and wait until the next item's steps are on screen; returns the saved item."""
    item, steps_text = header(page).inner_text(), page.locator("#ee-steps").inner_text()
    save()
    expect(header(page)).not_to_have_text(item)
    expect(page.locator("#ee-status")).to_contain_text(f"Saved: {saved}. Next item")
    expect(page.locator("#ee-steps")).not_to_have_text(steps_text)
    return item


def click_save(page: Page) -> Callable[[], None]:
    return lambda: page.locator("#ee-save").click()


def press(page: Page, key: str) -> Callable[[], None]:
    return lambda: page.keyboard.press(key)


def table_rows(page: Page, table: str) -> list[list[str]]:
    """The body cells of a Gradio dataframe, row by row."""
    return page.locator(f"{table} [role=row]:has([role=gridcell])").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.innerText.trim()))"
    )


def viewport_shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def test_an_annotator_labels_by_mouse_and_keyboard_and_resumes_after_a_reload(
    server: Server, page: Page
) -> None:
    open_panel(page, server.url, "mia", "qwq-sample")
    expect(page.locator("#ee-progress-line")).to_contain_text("You labelled 0")
    saved = []
    for position in (1, 0, 2):  # the mouse: click the step's text, then Save
        step(page, position).locator("p").first.click()
        expect_chosen(page, position)
        saved.append(save_and_expect_next(page, click_save(page), f"Step {position + 1}"))
    # The keyboard alone: a step's number then s; j j Enter then Ctrl+Enter; 0 (all correct) then s.
    page.keyboard.press("2")
    expect_chosen(page, 1)
    saved.append(save_and_expect_next(page, press(page, "s"), "Step 2"))
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(step(page, 1)).to_have_class(re.compile(r"\bee-cursor\b"))
    page.keyboard.press("Enter")
    expect_chosen(page, 1)
    saved.append(save_and_expect_next(page, press(page, "Control+Enter"), "Step 2"))
    page.keyboard.press("a")
    expect_chosen(page, -1)
    saved.append(save_and_expect_next(page, press(page, "s"), "All steps are correct"))
    assert len(set(saved)) == 6
    expect(page.locator("#ee-progress-line")).to_contain_text("You labelled 6")

    # A choice not saved yet survives a reload, on the item the annotator still holds.
    waiting = header(page).inner_text()
    step(page, 2).click()
    expect(page.locator("#ee-chosen")).to_contain_text("Your choice: Step 3")
    page.reload()
    page.get_by_role("tab", name="Earliest error").click()
    expect(header(page)).to_have_text(waiting)
    expect(page.locator("#ee-header")).to_contain_text("resumed with your unsaved choice")
    expect_chosen(page, 2)

    # Previous goes back through the annotator's own labels, showing each one for correction.
    page.keyboard.press("p")
    expect(header(page)).to_have_text(saved[-1])
    expect(page.locator("#ee-header")).to_contain_text("you labelled it All steps are correct")
    expect_chosen(page, -1)
    page.keyboard.press("n")
    expect(header(page)).to_have_text(waiting)

    # The reference toggle, then the layout at 1366x768: the list, the choice, Save and navigation side by side.
    page.keyboard.press("r")
    expect(page.locator("#ee-reference-text")).to_contain_text("Reference answer")
    page.keyboard.press("r")
    page.evaluate("window.scrollTo(0, 0)")
    main, side = page.locator("#ee-main").bounding_box(), page.locator("#ee-side").bounding_box()
    assert main and side and main["x"] + main["width"] <= side["x"]
    for control in ("#ee-choice", "#ee-save", "#ee-previous", "#ee-skip", "#ee-next", "#ee-steps .ee-pos-0"):
        box = page.locator(control).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= 768, control
    viewport_shot(page, "earliest-error-1366x768")
    screenshot(page, "earliest-error-1366x768-full")
    page.set_viewport_size({"width": 1920, "height": 1080})
    viewport_shot(page, "earliest-error-1920x1080")


def test_three_agreeing_annotators_settle_an_item_and_five_disagreeing_discard_another(
    tmp_path: Path, browser: Browser
) -> None:
    db = tmp_path / "quorum.duckdb"
    steps = ["Let $x = 2$.", "Then $x^2 = 4$.", "So $x^3 = 6$.", "Hence the answer is 6."]
    source = write_processbench(
        tmp_path / "quorum.jsonl", [processbench_item(i, steps) for i in ("q-1", "q-2")]
    )
    cli("import", str(source), "--dataset", "quorum", db=db)
    with running(db, "--no-demo") as server:
        pages = {}
        for name in ("a1", "a2", "a3"):  # three blind annotators agree on step 3 of q-1
            pages[name] = page = new_page(browser)
            open_panel(page, server.url, name, item="q-1")
            step(page, 2).click()
            expect_chosen(page, 2)
            save_and_expect_next(page, click_save(page), "Step 3")
            expect(header(page)).to_have_text("Item q-2")
        # q-2: 0, 0, 1 leaves no majority of three; a 4th (1) ties it; a 5th (2) cannot make three agree.
        for name, label in (("a1", 0), ("a2", 0), ("a3", 1), ("a4", 1), ("a5", 2)):
            if name not in pages:
                pages[name] = new_page(browser)
                open_panel(pages[name], server.url, name, item="q-2")
            page = pages[name]
            page.keyboard.press(str(label + 1))
            expect_chosen(page, label)
            page.keyboard.press("s")
            expect(page.locator("#ee-header")).to_contain_text("Nothing left for you in quorum")
        page = pages["a5"]  # an annotator: their own row, and no settlement shares (they move with others')
        page.get_by_text("View statistics (v)").click()
        expect(page.locator("#ee-stats-annotators [role=gridcell]").first).to_be_visible()
        assert [row[0] for row in table_rows(page, "#ee-stats-annotators")] == ["a5"]
        expect(page.locator("#ee-stats-shares")).to_be_hidden()
        page = pages["a1"]  # the first name on a fresh local database is the admin: every row and the shares
        page.get_by_text("View statistics (v)").click()
        expect(page.locator("#ee-stats-shares [role=gridcell]").first).to_be_visible()
        assert table_rows(page, "#ee-stats-shares") == [
            ["3/3", "1", "0.5"],
            ["discarded", "1", "0.5"],
            ["open", "0", "0"],
        ]
        for opened in pages.values():
            opened.context.close()
    store = Store(db)
    try:
        dataset = get_dataset(store, "quorum")
        assert dataset is not None
        first, second = (get_item_state(store, i) for i in item_ids(store, dataset.id))
        assert first is not None and (first.status, first.settled_at, first.decision["label"]) == (
            "consensus",
            3,
            2,
        )
        assert second is not None and (second.status, second.settled_at) == ("discarded", 5)
    finally:
        store.close()


def test_hostile_step_text_shows_as_text_and_runs_nothing(server: Server, page: Page) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_panel(page, server.url, "hal", "hostile", item=HOSTILE_ID)
    steps = page.locator("#ee-steps")
    for text in HOSTILE_STEPS[:2]:
        expect(steps.get_by_text(text).first).to_be_visible()
    expect(steps).to_contain_text("[click me](javascript:alert(1))")
    expect(page.locator("#ee-steps img, #ee-steps script, #ee-steps a, #ee-header img")).to_have_count(0)
    expect(step(page, 0).locator(".katex")).to_have_count(1)  # math still renders
    step(page, 2).click()
    expect_chosen(page, 2)
    screenshot(page, "earliest-error-hostile")
    page.keyboard.press("s")
    expect(page.locator("#ee-status")).to_contain_text("Saved: Step 3")
    expect(page.locator("#ee-reference")).to_be_hidden()  # nothing left: no item, no reference
    assert dialogs == []


def test_a_second_annotator_sees_no_trace_of_the_first_ones_label(server: Server, browser: Browser) -> None:
    first = new_page(browser)
    open_panel(first, server.url, "ann-a", "blind", item="blind-1")
    step(first, 1).click()
    expect_chosen(first, 1)
    first.keyboard.press("s")
    expect(first.locator("#ee-header")).to_contain_text("Nothing left for you in blind")

    second = new_page(browser)
    open_panel(second, server.url, "ann-b", "blind", item="blind-1")
    expect(second.locator("#ee-steps .ee-step")).to_have_count(3)
    expect(second.locator("#ee-steps .ee-selected")).to_have_count(0)
    expect(second.locator("#ee-choice input:checked")).to_have_count(0)
    expect(second.locator("#ee-header")).not_to_contain_text("labelled")
    second.keyboard.press("v")
    expect(second.locator("#ee-stats-note")).to_contain_text("Your own labels only")
    expect(second.locator("#ee-stats")).not_to_contain_text("ann-a")
    step(second, 0).click()
    second.keyboard.press("s")
    expect(second.locator("#ee-header")).to_contain_text("Nothing left for you in blind")
    second.locator("#ee-stats-refresh").click()
    expect(second.locator("#ee-stats-annotators")).to_contain_text("ann-b")
    assert [row[0] for row in table_rows(second, "#ee-stats-annotators")] == ["ann-b"]
    assert [row[0] for row in table_rows(second, "#ee-stats-labels")] == ["ann-b"]
    expect(second.locator("#ee-stats")).not_to_contain_text("ann-a")
    first.context.close()
    second.context.close()


def test_question_mark_opens_one_help_with_the_shared_keys_and_the_error_guidance(
    server: Server, page: Page
) -> None:
    open_panel(page, server.url, "hana", "qwq-sample")
    help_box = page.locator("#stepgate-help")
    expect(help_box).to_be_hidden()
    page.keyboard.press("?")
    expect(help_box).to_be_visible()
    for text in ("next item", "skip", "jump to an item", "all steps are correct", "Completeness error"):
        expect(help_box).to_contain_text(text)
    page.keyboard.press("a")  # while the help is open, keys do not act on the panel behind it
    page.keyboard.press("Escape")
    expect(help_box).to_be_hidden()
    expect(page.locator("#ee-choice input:checked")).to_have_count(0)
    page.keyboard.press("0")  # no step 0: a lone 0 chooses nothing ("all correct" is a)
    expect(page.locator("#ee-choice input:checked")).to_have_count(0)
    page.keyboard.press("a")
    expect_chosen(page, -1)


def test_a_second_tab_on_the_same_item_warns_and_keeps_the_first_label(
    server: Server, browser: Browser
) -> None:
    first = new_page(browser)
    open_panel(first, server.url, "tia", "blind")
    second = first.context.new_page()  # the same login, another tab: the item tia holds
    second.set_viewport_size({"width": 1366, "height": 768})
    second.goto(server.url)
    second.get_by_role("tab", name="Earliest error").click()
    expect(header(second)).to_have_text(header(first).inner_text())
    step(first, 0).click()
    expect_chosen(first, 0)
    first.keyboard.press("s")
    expect(first.locator("#ee-status")).to_contain_text("Saved: Step 1")
    step(second, 1).click()
    expect_chosen(second, 1)
    second.keyboard.press("s")
    expect(second.locator("#ee-status")).to_contain_text("already saved a label")
    # The second tab now shows the item as stored: the first tab's label, to correct if wanted.
    expect(second.locator("#ee-header")).to_contain_text("you labelled it Step 1")
    expect_chosen(second, 0)


def test_the_keys_the_overlay_lists_for_moving_do_what_it_says(server: Server, page: Page) -> None:
    """x skips, g and / open the jump box, k and the arrows move the cursor (j, Enter, s, n, p, a, r, v,
    digits and ? are pressed in the tests above)."""
    open_panel(page, server.url, "kai", "qwq-sample")
    first = header(page).inner_text()
    page.keyboard.press("x")
    expect(header(page)).not_to_have_text(first)
    expect(page.locator("#ee-status")).to_contain_text("Skipped")
    jump_box = page.locator("#ee-jump textarea, #ee-jump input").first
    for key in ("g", "/"):
        page.keyboard.press(key)
        expect(jump_box).to_be_focused()
        page.keyboard.press("Escape")
        expect(jump_box).not_to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(step(page, 2)).to_have_class(re.compile(r"\bee-cursor\b"))
    page.keyboard.press("k")
    page.keyboard.press("ArrowUp")
    expect(step(page, 0)).to_have_class(re.compile(r"\bee-cursor\b"))
    page.keyboard.press("Enter")
    expect_chosen(page, 0)
