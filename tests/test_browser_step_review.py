"""Step review in the real app and headless Chromium: keyboard work, corrections, safety, stats, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from store import Store
from store.annotations import annotations_frame
from tests.browser_support import cli, login, running, screenshot

pytestmark = pytest.mark.browser

PASSWORD = "step-review-pw-1"
RADIO = "#step-review-{field} input[value='{value}']"


def _choice(page, field: str, value: str):
    return page.locator(RADIO.format(field=field, value=value))


def _progress(page):
    return page.locator("#step-review-progress")


def _status(page):
    return page.locator("#step-review-status")


def _stored_payloads(db: Path) -> list[dict]:
    store = Store(db)
    try:
        return [json.loads(p) for p in annotations_frame(store)["payload"]]
    finally:
        store.close()


def test_an_annotator_labels_corrects_and_navigates_with_the_keyboard(tmp_path: Path, page) -> None:
    db = tmp_path / "review.duckdb"
    cli("users", "add", "ann", "--role", "annotator", "--password", PASSWORD, db=db)
    with running(db, "--team") as server:
        login(page, server.url, "ann", PASSWORD)
        expect(_progress(page)).to_contain_text("Sample 1 / 394")
        steps = page.locator("#step-review-steps")
        expect(steps.locator("ins.sr-ins").first).to_be_visible()  # the changed words of the modified steps
        expect(steps.locator(".sr-badge-error")).to_have_count(2)
        expect(steps.locator(".katex").first).to_be_visible()  # formulas rendered, not raw $...$
        expect(page.locator("#step-review-assess")).to_be_in_viewport()  # the sticky bar is always in view
        screenshot(page, "step-review-first-sample")

        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("c")
        page.keyboard.press("r")
        expect(page.locator("#step-review-sample-progress")).to_contain_text("2/3 assessments")
        page.keyboard.press("n")  # unsaved choices: stays, and says why
        expect(_status(page)).to_contain_text("has unsaved choices")
        page.keyboard.press("s")  # difficulty missing: nothing stored, the missing field named
        expect(_status(page)).to_contain_text("please choose: Difficulty")
        expect(_progress(page)).to_contain_text("Sample 1 / 394")
        page.keyboard.press("e")
        page.keyboard.press("s")
        expect(_progress(page)).to_contain_text("Sample 2 / 394")
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
        page.keyboard.press("k")  # skip leaves without saving
        expect(_progress(page)).to_contain_text("Sample 3 / 394")
        expect(_status(page)).to_contain_text("Skipped sample 2")

        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("p")  # back to my own label on sample 1
        expect(_progress(page)).to_contain_text("Sample 1 / 394")
        expect(_choice(page, "original", "correct")).to_be_checked()
        expect(_choice(page, "difficulty", "easy")).to_be_checked()
        expect(_status(page)).to_contain_text("already labelled")
        page.keyboard.press("i")
        page.keyboard.press("h")
        page.keyboard.press("s")  # a correction: a new row, and on to the next sample
        expect(_status(page)).to_contain_text("Saved sample 1")
        expect(_progress(page)).not_to_contain_text("Sample 1 /")

        page.keyboard.press("/")
        page.keyboard.type("prm_test_p1_2:confidence")
        page.keyboard.press("Enter")
        expect(_progress(page)).to_contain_text("Sample 2 / 394")
        page.locator("#step-review-jump input, #step-review-jump textarea").first.fill("9999")
        page.locator("#step-review-jump-go").click()
        expect(_status(page)).to_contain_text("Cannot jump to '9999'")
        screenshot(page, "step-review-after-correction")
    payloads = _stored_payloads(db)
    assert [(p["original"], p["difficulty"]) for p in payloads] == [("correct", "easy"), ("incorrect", "hard")]


EVIL = '<img src=x onerror="window.__stepgate_xss=1"><script>window.__stepgate_xss=2</script>'


def _hostile_prmbench_file(folder: Path) -> Path:
    png = Path(__file__).resolve().parent.parent / "demo_data" / "images"
    image = next(iter(sorted(png.glob("*.png"))))
    (folder / "figure.png").write_bytes(image.read_bytes())
    row = {
        "idx": "evil_0", "classification": "domain_inconsistency", "source": "MMK12", "image": "figure.png",
        "question": f"Which solid? {EVIL} [click](javascript:alert(1))\nA. 1,2.\nB. 2,3.", "ground_truth": "B",
        "original_process": ["The cube has identical views.", "The cylinder has two identical views.", "So B."],
        "modified_process": ["The cube has identical views.", f"By physics, forces differ. {EVIL}",
                             "The cylinder has two identical views.", "So B."],
        "modified_steps": [2], "error_steps": [2], "reason": f"Step 2 uses physics. {EVIL}",
    }  # fmt: skip
    path = folder / "hostile.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_dataset_html_shows_as_text_and_the_image_and_inserted_step_are_shown(tmp_path: Path, page) -> None:
    db = tmp_path / "hostile.duckdb"
    cli("import", str(_hostile_prmbench_file(tmp_path)), "--format", "prmbench", "--dataset", "hostile", db=db)
    cli("users", "add", "ann", "--role", "annotator", "--password", PASSWORD, db=db)
    with running(db, "--team", "--no-demo") as server:
        login(page, server.url, "ann", PASSWORD)
        expect(_progress(page)).to_contain_text("Sample 1 / 1")
        panel = page.locator("#tab-step_review")
        expect(panel.get_by_text("<script>window.__stepgate_xss=2</script>").first).to_be_visible()
        expect(page.locator("#step-review-image img")).to_be_visible()
        assert panel.locator("img[src='x']").count() == 0 and panel.locator("a[href^='javascript']").count() == 0
        steps = page.locator("#step-review-steps")
        expect(steps.get_by_text("(no original step here)")).to_be_visible()
        expect(steps.locator(".sr-error .sr-badge-error")).to_have_count(1)
        expect(page.locator("#step-review-difficulty")).to_contain_text("1 error step: Easy if clearly shown")
        screenshot(page, "step-review-hostile-text-and-image")
        assert page.evaluate("window.__stepgate_xss") is None


def test_statistics_and_exports_follow_the_role(tmp_path: Path, page) -> None:
    db = tmp_path / "stats.duckdb"
    cli("users", "add", "ann", "--role", "annotator", "--password", PASSWORD, db=db)
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    with running(db, "--team") as server:
        login(page, server.url, "ann", PASSWORD)
        expect(_progress(page)).to_contain_text("Sample 1 / 394")
        for field, value in (("original", "correct"), ("modification", "unreasonable"), ("difficulty", "hard")):
            _choice(page, field, value).click()
        page.locator("#step-review-save").click()
        expect(_progress(page)).to_contain_text("Sample 2 / 394")
        page.get_by_text("Statistics and export").click()
        page.locator("#step-review-stats").click()
        expect(page.locator("#step-review-stats-status")).to_contain_text("your own labels only")
        expect(page.locator("#step-review-summary")).to_contain_text("ann")
        expect(page.locator("#step-review-dist-modification")).to_contain_text("Unreasonable")
        page.locator("#step-review-export-choice input").click()
        options = page.get_by_role("option")
        expect(options).to_have_count(2)  # my labels, CSV and JSONL: nothing with others' labels
        page.get_by_role("option", name="My labels (CSV)").click()
        page.locator("#step-review-export").click()
        expect(page.locator("#step-review-stats-status")).to_contain_text("Exported 1 row of")
        with page.expect_download() as download:
            page.locator("#step-review-export-file a").first.click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        assert "unreasonable" in text and "ann" in text
        screenshot(page, "step-review-annotator-statistics")

        page.context.clear_cookies()
        login(page, server.url, "lead", PASSWORD)
        expect(_progress(page)).to_contain_text("Sample")
        page.get_by_text("Statistics and export").click()
        page.locator("#step-review-export-choice input").click()
        expect(page.get_by_role("option")).to_have_count(7)
        page.get_by_role("option", name="Gated samples, PRMBench JSONL").click()
        page.locator("#step-review-export").click()
        expect(page.locator("#step-review-stats-status")).to_contain_text("Gated samples, PRMBench JSONL")
        page.locator("#step-review-stats").click()
        expect(page.locator("#step-review-stats-status")).to_contain_text("every annotator's labels")
        screenshot(page, "step-review-admin-statistics")
