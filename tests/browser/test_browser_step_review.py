"""Step review in the real app and headless Chromium: mouse and keyboard labelling, a draft that survives a
reload, corrections, hostile dataset text, the enlarged image, moved steps, layout, statistics and exports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from services.imports import import_file
from store import Store
from store.datasets import update_settings
from tests.browser_support import (
    ARTIFACTS,
    Server,
    cli,
    free_port,
    login,
    pick,
    running,
    screenshot,
    start_server,
)
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

LEAD, LEAD_PASSWORD = "lead", "lead-password-1"
RADIO = "#step-review-{field} input[value='{value}']"
EVIL = (
    '<img src=x onerror="window.__stepgate_xss=1;alert(1)"><script>window.__stepgate_xss=2;alert(2)</script>'
)
LINK = "[click](javascript:alert(3))"
CONTROLS = (
    "#step-review-original",
    "#step-review-modification",
    "#step-review-difficulty",
    "#step-review-save",
    "#step-review-previous",
    "#step-review-skip",
    "#step-review-next",
)


def _hostile_prmbench_file(folder: Path) -> Path:
    png = Path(__file__).resolve().parents[2] / "demo_data" / "images"
    image = next(iter(sorted(png.glob("*.png"))))
    (folder / "figure.png").write_bytes(image.read_bytes())
    row = {
        "idx": "evil_0",
        "classification": "domain_inconsistency",
        "source": "MMK12",
        "image": "figure.png",
        "question": f"Which solid? {EVIL} {LINK} Volumes $$V = s^3$$, \\(r^2\\), \\[h\\] and $2*3$ cost $5.\nA. 1,2.\nB. 2,3.",
        "ground_truth": "B",
        "original_process": [
            "The cube has identical views.",
            "The cylinder has two identical views.",
            "The cone has one circular view.",
            "So B.",
        ],
        # The cylinder moved to the top; a hostile step was inserted after it.
        "modified_process": [
            "The cylinder has two identical views.",
            f"By physics, forces differ. {EVIL} {LINK}",
            "The cube has identical views.",
            "The cone has one circular view.",
            "So B.",
        ],
        "modified_steps": [2],
        "error_steps": [2],
        "reason": f"Step 2 uses physics. {EVIL}",
    }
    path = folder / "hostile.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One app (local mode: a new name logs in as a new annotator) with a dataset per test."""
    folder = tmp_path_factory.mktemp("step-review")
    db = folder / "review.duckdb"
    subset = folder / "prmbench-12.jsonl"
    subset.write_text("".join(PRMBENCH_FILE.read_text(encoding="utf-8").splitlines(keepends=True)[:12]))
    cli("users", "add", LEAD, "--role", "admin", "--password", LEAD_PASSWORD, db=db)
    store = Store(db)  # the imports `python app.py import` runs, in this process: a python start each is slow
    try:
        # The panel opens its first dataset: "lobby" is nobody's work, so each test starts at sample 1 of its own.
        for name in ("lobby", "review", "keys", "pair", "screen", "features", "tabs"):
            import_file(store, subset, format="prmbench", dataset=name)
        update_settings(store, "pair", {"annotators_per_item": 2})
        update_settings(store, "features", {"features": "uses the figure, <i>long</i> chain"})
        import_file(store, _hostile_prmbench_file(folder), format="prmbench", dataset="hostile")
    finally:
        store.close()
    with running(db, "--no-demo") as app:
        yield app


def _choice(page: Page, field: str, value: str):
    return page.locator(RADIO.format(field=field, value=value))


def click_choice(page: Page, field: str, value: str) -> None:
    """A mouse click on the choice's label, as a person clicks it."""
    page.locator(f"#step-review-{field} label").filter(has=page.locator(f"input[value='{value}']")).click()


def _progress(page: Page):
    return page.locator("#step-review-progress")


def _status(page: Page):
    return page.locator("#step-review-status")


def to_step_review(page: Page) -> None:
    """The app opens on Home (which claims nothing); opening the Step review tab claims a sample."""
    page.get_by_role("tab", name="Step review").click()
    expect(_progress(page)).to_contain_text("Sample")


def open_panel(
    page: Page, url: str, name: str, dataset: str, password: str = "", logged_in: bool = False
) -> None:
    """Log in (unless the page's session still holds), open Step review (it claims a sample of the
    remembered or first dataset); pick `dataset`."""
    if logged_in:
        page.goto(url)
        page.wait_for_selector("#logout-link", timeout=30_000)
    else:
        login(page, url, name, password or f"{name}-password")
    to_step_review(page)
    if page.locator("#step-review-dataset input").input_value() != dataset:
        # Every dataset but "hostile" holds the same samples: only the answer tells that the switch is done.
        pick(page, "step-review-dataset", dataset, answered_on="step-review-status")
        expect(page.locator("#step-review-info")).to_contain_text(
            "evil_0" if dataset == "hostile" else "prm_"
        )


def my_exported_labels(page: Page) -> list[dict[str, str]]:
    """The rows of "My labels (CSV)", downloaded as the annotator would."""
    section = page.locator("#step-review-stats-export")
    if not page.locator("#step-review-export").is_visible():
        section.get_by_text("Statistics and export").click()
    page.locator("#step-review-export-choice input").click()
    page.get_by_role("option", name="My labels (CSV)").click()
    page.locator("#step-review-export").click()
    expect(page.locator("#step-review-stats-status")).to_contain_text("Exported")
    with page.expect_download() as download:
        page.locator("#step-review-export-file a").first.click()
    return list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))


def expect_controls_in_view_apart(page: Page, width: int, height: int) -> None:
    """The three choices, Save and the navigation are inside the window and overlap nothing of each other."""
    boxes = {}
    for control in CONTROLS:
        expect(page.locator(control)).to_be_in_viewport(ratio=1)
        box = page.locator(control).bounding_box()
        assert box and box["x"] >= 0 and box["y"] >= 0, control
        assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, control
        boxes[control] = box
    for (a, box_a), (b, box_b) in combinations(boxes.items(), 2):
        apart = (
            box_a["x"] + box_a["width"] <= box_b["x"] + 0.5
            or box_b["x"] + box_b["width"] <= box_a["x"] + 0.5
            or box_a["y"] + box_a["height"] <= box_b["y"] + 0.5
            or box_b["y"] + box_b["height"] <= box_a["y"] + 0.5
        )
        assert apart, f"{a} overlaps {b}"


def viewport_shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def save_and_expect(page: Page, save, number: int) -> None:
    """Save (by mouse or key): the sample is stored and the next one opens, blank."""
    save()
    expect(_status(page)).to_contain_text(f"Saved sample {number} (")
    expect(_progress(page)).to_contain_text(f"Sample {number + 1} / 12")
    expect(page.locator("#step-review-assess input[type=radio]:checked")).to_have_count(0)


def test_a_new_annotator_labels_by_mouse_and_keyboard_and_a_reload_resumes_with_the_draft(
    server: Server, page: Page
) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_panel(page, server.url, "nia", "review")
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    expect(_progress(page)).to_contain_text("you labelled 0")
    steps = page.locator("#step-review-steps")
    expect(steps.locator("ins").first).to_be_visible()  # the changed words of the modified steps
    expect(steps.locator(".sr-badge-error")).to_have_count(2)
    expect(steps.locator(".katex").first).to_be_visible()  # formulas rendered, not raw $...$
    expect(page.locator("#step-review-keys")).to_contain_text(
        "Ctrl+Enter"
    )  # the keys are listed in the panel

    mouse = [
        ("correct", "reasonable", "easy"),
        ("incorrect", "unreasonable", "medium"),
        ("correct", "unreasonable", "hard"),
    ]
    for number, choices in enumerate(mouse, start=1):
        for field, value in zip(("original", "modification", "difficulty"), choices, strict=True):
            click_choice(page, field, value)
        save_and_expect(page, lambda: page.locator("#step-review-save").click(), number)
    keyboard = [("cre", "s"), ("ium", "Control+Enter"), ("cuh", "s")]  # keys only: choices, then save
    for number, (keys, save_key) in enumerate(keyboard, start=4):
        for key in keys:
            page.keyboard.press(key)
        expect(page.locator("#step-review-sample-progress")).to_contain_text("3/3 assessments")
        save_and_expect(page, lambda key=save_key: page.keyboard.press(key), number)
    expect(_progress(page)).to_contain_text("you labelled 6")

    # A choice on the 7th sample, not saved, survives a reload: the same sample, the choice on it.
    page.keyboard.press("i")
    page.keyboard.press("u")
    expect(page.locator("#step-review-sample-progress")).to_contain_text(
        "2/3 assessments (66%) · not saved yet"
    )
    page.reload()
    to_step_review(page)
    expect(_progress(page)).to_contain_text("Sample 7 / 12")
    expect(page.locator("#step-review-dataset input")).to_have_value(
        "review"
    )  # the dataset is remembered too
    expect(_choice(page, "original", "incorrect")).to_be_checked()
    expect(_choice(page, "modification", "unreasonable")).to_be_checked()
    expect(page.locator("#step-review-assess input[type=radio]:checked")).to_have_count(2)
    expect(_status(page)).to_contain_text("Your unsaved choices on this sample are back")

    # The sticky bar: choices, Save and navigation in view and apart, at the top and deep in the steps.
    expect_controls_in_view_apart(page, 1366, 768)
    viewport_shot(page, "step-review-1366x768")
    page.evaluate("window.scrollTo(0, 700)")
    expect_controls_in_view_apart(page, 1366, 768)
    viewport_shot(page, "step-review-1366x768-scrolled")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.evaluate("window.scrollTo(0, 0)")
    expect_controls_in_view_apart(page, 1920, 1080)
    viewport_shot(page, "step-review-1920x1080")
    page.set_viewport_size({"width": 1366, "height": 768})

    stored = my_exported_labels(page)  # exactly what was stored: six labels, in order, with seconds spent
    assert [(r["label_original"], r["label_modification"], r["label_difficulty"]) for r in stored] == [
        *mouse,
        ("correct", "reasonable", "easy"),
        ("incorrect", "unreasonable", "medium"),
        ("correct", "unreasonable", "hard"),
    ]
    assert all(float(r["seconds_spent"]) > 0 for r in stored) and {r["annotator"] for r in stored} == {"nia"}
    assert dialogs == []


def test_a_draft_survives_a_server_restart(tmp_path: Path, page: Page) -> None:
    db = tmp_path / "restart.duckdb"
    (tmp_path / "three.jsonl").write_text(
        "".join(PRMBENCH_FILE.read_text(encoding="utf-8").splitlines(True)[:3])
    )
    store = Store(db)
    try:
        import_file(store, tmp_path / "three.jsonl", format="prmbench", dataset="three")
    finally:
        store.close()
    port = free_port()
    server = start_server(db, "--no-demo", port=port)
    try:
        open_panel(page, server.url, "rio", "three")
        page.keyboard.press("h")
        expect(page.locator("#step-review-sample-progress")).to_contain_text("1/3 assessments")
    finally:
        server.stop()
    server = start_server(db, "--no-demo", port=port)  # drafts are kept in the database, per annotator
    try:
        open_panel(page, server.url, "rio", "three", logged_in=True)  # and so is the login session
        expect(_progress(page)).to_contain_text("Sample 1 / 3")
        expect(_choice(page, "difficulty", "hard")).to_be_checked()
        expect(_status(page)).to_contain_text("Your unsaved choices on this sample are back")
    finally:
        server.stop()


def test_an_annotator_corrects_navigates_and_is_told_what_is_missing_with_the_keyboard(
    server: Server, page: Page
) -> None:
    open_panel(page, server.url, "kai", "keys")
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("c")
    page.keyboard.press("r")
    expect(page.locator("#step-review-sample-progress")).to_contain_text("2/3 assessments")
    page.keyboard.press("n")  # unsaved choices: stays, and says why
    expect(_status(page)).to_contain_text("has unsaved choices")
    page.keyboard.press("s")  # difficulty missing: nothing stored, the missing field named
    expect(_status(page)).to_contain_text("please choose: Difficulty")
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    page.keyboard.press("e")
    page.keyboard.press("s")
    expect(_progress(page)).to_contain_text("Sample 2 / 12")
    expect(_status(page)).to_contain_text("Saved sample 1 (prm_test_p1_0:confidence)")
    expect(_choice(page, "original", "correct")).not_to_be_checked()  # a fresh sample starts blank

    # Keys typed into the note are text, not shortcuts.
    page.locator("#step-review-note textarea").fill("")
    page.locator("#step-review-note textarea").type("ice cream")
    expect(_choice(page, "original", "incorrect")).not_to_be_checked()
    expect(_choice(page, "original", "correct")).not_to_be_checked()
    page.keyboard.press("Escape")  # out of the note: keys are shortcuts again
    page.keyboard.press("p")  # the note counts as an unsaved change
    expect(_status(page)).to_contain_text("has unsaved choices")
    page.keyboard.press("x")  # skip leaves without saving (the one keymap: x in every panel)
    expect(_progress(page)).to_contain_text("Sample 3 / 12")
    expect(_status(page)).to_contain_text("Skipped sample 2")

    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("p")  # back to my own label on sample 1
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    expect(_choice(page, "original", "correct")).to_be_checked()
    expect(_choice(page, "difficulty", "easy")).to_be_checked()
    expect(_status(page)).to_contain_text("already labelled")
    page.keyboard.press("i")
    page.keyboard.press("h")
    page.keyboard.press("s")  # a correction: a new row, and on to the next sample
    expect(_status(page)).to_contain_text("Saved sample 1")
    expect(_progress(page)).not_to_contain_text("Sample 1 /")

    page.keyboard.press("g")  # jump: g, or / as below
    page.keyboard.type("prm_test_p1_2:confidence")
    page.keyboard.press("Enter")
    expect(_progress(page)).to_contain_text("Sample 2 / 12")
    page.locator("#step-review-jump input, #step-review-jump textarea").first.fill("9999")
    page.locator("#step-review-jump-go").click()
    expect(_status(page)).to_contain_text("Cannot jump to '9999'")
    screenshot(page, "step-review-after-correction")
    stored = my_exported_labels(page)
    assert [(r["label_original"], r["label_difficulty"]) for r in stored] == [
        ("correct", "easy"),
        ("incorrect", "hard"),
    ]


def test_hostile_text_shows_as_text_the_image_enlarges_and_a_moved_step_is_marked(
    server: Server, page: Page
) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_panel(page, server.url, "hal", "hostile")
    expect(_progress(page)).to_contain_text("Sample 1 / 1")
    panel = page.locator("#tab-step_review")
    for where in ("#step-review-question", "#step-review-rationale", "#step-review-steps"):
        expect(
            page.locator(where).get_by_text("<script>window.__stepgate_xss=2;alert(2)</script>").first
        ).to_be_visible()
        expect(page.locator(where)).to_contain_text('<img src=x onerror="window.__stepgate_xss=1;alert(1)">')
    expect(page.locator("#step-review-steps")).to_contain_text(LINK)
    expect(page.locator("#step-review-question")).to_contain_text(LINK)
    expect(panel.locator("img[src='x'], script, a[href^='javascript']")).to_have_count(0)
    question = page.locator("#step-review-question")
    expect(question.locator(".katex")).to_have_count(4)  # $$..$$, \(..\), \[..\] and $..$ all typeset
    expect(question.locator(".katex-display")).to_have_count(2)
    expect(question).to_contain_text("cost $5.")  # a price stays text

    steps = page.locator("#step-review-steps")
    expect(steps.locator(".sr-inserted .sr-badge-error")).to_have_count(1)  # the inserted error step
    expect(steps.locator(".sr-moved")).to_have_count(2)  # the cylinder step: where it was and where it is now
    expect(steps.locator(".sr-moved .sr-badge-moved")).to_have_text(
        ["moved from Step 2", "moved to Step 1 ↑"]
    )
    expect(steps.get_by_text("↓ original Step 2 moved here")).to_be_visible()
    expect(steps.locator(".sr-badge-shift").first).to_have_text(
        "was Step 1"
    )  # the cube: same text, new number
    expect(page.locator("#step-review-difficulty")).to_contain_text("Suggested (1 error step): Easy")

    figure = page.locator("#step-review-image img[data-testid='detailed-image']")
    expect(figure).to_be_visible()
    expect(page.locator("#step-review-image")).to_contain_text("Click to enlarge (Z)")
    small = figure.bounding_box()
    figure.click()  # click to enlarge
    big = page.locator("#step-review-lightbox img")
    expect(big).to_be_visible()
    large = big.bounding_box()
    assert small and large and large["width"] > 1.5 * small["width"]
    screenshot(page, "step-review-image-enlarged")
    page.keyboard.press("Escape")
    expect(big).to_be_hidden()
    page.keyboard.press("z")  # the same by key
    expect(big).to_be_visible()
    big.click()
    expect(big).to_be_hidden()
    screenshot(page, "step-review-hostile-text-and-image")
    assert page.evaluate("window.__stepgate_xss") is None and dialogs == []


def test_two_blind_annotators_share_a_sample_and_statistics_and_exports_follow_the_role(
    server: Server, page: Page
) -> None:
    open_panel(page, server.url, "ann", "pair")
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    expect(page.locator("#step-review-info")).to_contain_text(
        "Annotators you are 1 of 2, blind to each other"
    )
    for field, value in (("original", "correct"), ("modification", "unreasonable"), ("difficulty", "hard")):
        click_choice(page, field, value)
    page.locator("#step-review-save").click()
    expect(_progress(page)).to_contain_text("Sample 2 / 12")
    page.keyboard.press("c")  # a draft on sample 2, left in this browser
    expect(page.locator("#step-review-sample-progress")).to_contain_text("1/3 assessments")
    page.get_by_text("Statistics and export").click()
    page.locator("#step-review-stats").click()
    expect(page.locator("#step-review-stats-status")).to_contain_text("your own labels only")
    expect(page.locator("#step-review-summary")).to_contain_text("ann")
    expect(page.locator("#step-review-dist-modification")).to_contain_text("Unreasonable")
    page.locator("#step-review-export-choice input").click()
    expect(page.get_by_role("option")).to_have_count(
        2
    )  # my labels, CSV and JSONL: nothing with others' labels
    page.keyboard.press("Escape")
    assert [r["label_modification"] for r in my_exported_labels(page)] == ["unreasonable"]
    screenshot(page, "step-review-annotator-statistics")

    # The second annotator, in the same browser: the same sample 1, with nothing of the first one's.
    page.context.clear_cookies()
    open_panel(page, server.url, "bob", "pair")
    expect(_progress(page)).to_contain_text("Sample 1 / 12")
    expect(page.locator("#step-review-info")).to_contain_text("you are 1 of 2")
    expect(page.locator("#step-review-assess input[type=radio]:checked")).to_have_count(0)
    expect(page.locator("#tab-step_review").get_by_text("ann", exact=True)).to_have_count(0)
    page.keyboard.press("/")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    expect(_progress(page)).to_contain_text("Sample 2 / 12")
    expect(page.locator("#step-review-assess input[type=radio]:checked")).to_have_count(
        0
    )  # ann's draft stays hers

    page.context.clear_cookies()
    open_panel(page, server.url, LEAD, "pair", LEAD_PASSWORD)
    page.get_by_text("Statistics and export").click()
    page.locator("#step-review-export-choice input").click()
    expect(page.get_by_role("option")).to_have_count(7)
    page.get_by_role("option", name="Kept samples, PRMBench JSONL (majority Correct + Reasonable)").click()
    page.locator("#step-review-export").click()
    expect(page.locator("#step-review-stats-status")).to_contain_text("Kept samples, PRMBench JSONL")
    page.locator("#step-review-stats").click()
    expect(page.locator("#step-review-stats-status")).to_contain_text("every annotator's labels")
    expect(page.locator("#step-review-summary")).to_contain_text("ann")
    screenshot(page, "step-review-admin-statistics")


def test_opening_the_app_claims_nothing_an_item_is_leased_when_its_panel_opens(
    tmp_path: Path, browser
) -> None:
    db = tmp_path / "claims.duckdb"
    (tmp_path / "three.jsonl").write_text(
        "".join(PRMBENCH_FILE.read_text(encoding="utf-8").splitlines(True)[:3])
    )
    store = Store(db)
    try:
        import_file(store, tmp_path / "three.jsonl", format="prmbench", dataset="three")
    finally:
        store.close()
    with running(db, "--no-demo") as server:
        first = browser.new_page(viewport={"width": 1366, "height": 768})
        login(first, server.url, "uma", "uma-password")  # lands on Home and stays there
        expect(first.locator("#home-work")).to_contain_text("three")
        second = browser.new_page(viewport={"width": 1366, "height": 768})
        open_panel(second, server.url, "vic", "three")
        expect(_progress(second)).to_contain_text("Sample 1 / 3")  # uma's landing held nothing
        to_step_review(first)
        expect(_progress(first)).to_contain_text("Sample 2 / 3")
        first.close()
        second.close()


def test_an_adjudicator_settles_a_disputed_sample_from_the_panel(tmp_path: Path, page: Page) -> None:
    import uuid

    from services import annotate
    from store import users

    db = tmp_path / "dispute.duckdb"
    (tmp_path / "one.jsonl").write_text(PRMBENCH_FILE.read_text(encoding="utf-8").splitlines(True)[0])
    store = Store(db)
    try:
        import_file(store, tmp_path / "one.jsonl", format="prmbench", dataset="one")
        update_settings(store, "one", {"annotators_per_item": 2})
        users.add_user(store, "judge", "adjudicator", "judge-password")
        dataset = annotate.dataset_for(store, "one")
        for name, modification in (("ann", "reasonable"), ("bob", "unreasonable")):
            who = users.add_user(store, name, "annotator", f"{name}-password")
            found = annotate.next_item(store, who, dataset)
            annotate.submit(
                store,
                annotator=who,
                item_id=found.item.item_id,
                version_id=found.item.version_id,
                payload={"original": "correct", "modification": modification, "difficulty": "easy"},
                request_id=uuid.uuid4().hex,
            )
    finally:
        store.close()
    with running(db, "--no-demo") as server:
        login(page, server.url, "judge", "judge-password")
        page.get_by_role("tab", name="Step review").click()
        box = page.locator("#step-review-disputes")
        expect(box).to_be_visible()
        box.get_by_text("Disputed samples (adjudicators)").click()
        expect(page.locator("#step-review-dispute-status")).to_contain_text("1 disputed sample(s) in one")
        judgements = page.locator("#step-review-dispute-judgements")
        expect(judgements).to_contain_text("ann")
        expect(judgements).to_contain_text("unreasonable")
        page.locator("#step-review-dispute-note textarea").fill("matches the rationale")
        page.locator("#step-review-dispute-keep").click()
        expect(page.locator("#step-review-dispute-status")).to_contain_text("Settled: kept")
        expect(page.locator("#step-review-dispute-status")).to_contain_text("No disputed samples in one")
        screenshot(page, "step-review-dispute-settled")
    store = Store(db)
    try:
        assert store.scalar("SELECT status FROM item_state") == "complete"
        assert json.loads(store.scalar("SELECT decision FROM item_state"))["adjudicated"] is True
    finally:
        store.close()


PANE_FIT = """() => {
  const pane = document.getElementById("step-review-right");
  const first = pane.querySelector(".sr-inserted, .sr-changed, .sr-moved, .sr-removed, .sr-error");
  const p = pane.getBoundingClientRect(), f = first.getBoundingClientRect();
  return {page: document.scrollingElement.scrollHeight - window.innerHeight, scrollY: window.scrollY,
          paneBottom: p.bottom, paneTop: p.top, firstTop: f.top, firstBottom: f.bottom,
          scrolls: pane.scrollHeight > pane.clientHeight, paneScroll: pane.scrollTop};
}"""


def test_one_screen_at_1366x768_opens_each_sample_on_its_first_modified_step(
    server: Server, page: Page
) -> None:
    """Sample and chains scroll in their own panes: the choices, Save and Next are in view for every demo
    sample without page scrolling, and each sample opens with its first modified step shown."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_panel(page, server.url, "una", "screen")
    for number in range(1, 7):
        expect(_progress(page)).to_contain_text(f"Sample {number} / 12")
        page.wait_for_timeout(300)  # the pane settles on the first change after math renders
        fit = page.evaluate(PANE_FIT)
        assert fit["scrollY"] == 0, fit  # the sample came without page scrolling (statistics lie below)
        assert fit["paneTop"] - 1 <= fit["firstTop"] and fit["firstBottom"] <= fit["paneBottom"] + 1, fit
        expect_controls_in_view_apart(page, 1366, 768)
        if number == 1:
            viewport_shot(page, "step-review-one-screen-1366x768")
        for key in "cre":
            page.keyboard.press(key)
        save_and_expect(page, lambda: page.keyboard.press("s"), number)
    # Scrolling a long chain scrolls its pane, not the page (and so never the bar away).
    assert page.evaluate(PANE_FIT)["scrolls"]
    page.evaluate("document.getElementById('step-review-right').scrollTop = 0")
    page.locator("#step-review-right").hover()
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(300)
    assert page.evaluate("window.scrollY") == 0 and page.evaluate(PANE_FIT)["paneScroll"] > 0
    expect_controls_in_view_apart(page, 1366, 768)


def test_applicable_features_are_offered_when_the_dataset_names_some_and_saved(
    server: Server, page: Page
) -> None:
    open_panel(page, server.url, "vic", "features")
    original = page.locator("#step-review-original-features")
    expect(original).to_be_visible()
    expect(original.locator("label")).to_have_text(["uses the figure", "<i>long</i> chain"])  # as text
    original.locator("label").filter(has_text="uses the figure").click()
    for key in "cre":
        page.keyboard.press(key)
    save_and_expect(page, lambda: page.keyboard.press("s"), 1)
    stored = my_exported_labels(page)
    assert stored[0]["label_original"] == "correct"
    assert "uses the figure" in json.dumps(stored[0])
    pick(page, "step-review-dataset", "screen", answered_on="step-review-status")
    expect(original).to_be_hidden()  # a dataset without features shows no such control


def test_a_second_tab_on_the_same_sample_warns_and_stores_nothing(server: Server, page: Page) -> None:
    open_panel(page, server.url, "tom", "tabs")
    second = page.context.new_page()  # the same login, another tab: the sample tom holds
    second.set_viewport_size({"width": 1366, "height": 768})
    second.goto(server.url)
    to_step_review(second)
    expect(_progress(second)).to_have_text(_progress(page).inner_text())
    for key in ("c", "r", "e"):
        page.keyboard.press(key)
    page.keyboard.press("s")
    expect(_status(page)).to_contain_text("Saved sample 1 (")
    for key in ("i", "u", "h"):
        second.keyboard.press(key)
    second.keyboard.press("s")
    expect(_status(second)).to_contain_text("already saved a label")
    expect(_progress(second)).to_contain_text("Sample 1 / 12")  # it stays, and says how to correct
    stored = my_exported_labels(page)
    assert [(r["label_original"], r["label_modification"], r["label_difficulty"]) for r in stored] == [
        ("correct", "reasonable", "easy")
    ]
    second.close()
