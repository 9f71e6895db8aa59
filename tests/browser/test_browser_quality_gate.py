"""The quality gate in headless Chromium at 1366x768: a new annotator edits a step and accepts, another
rejects with a reason, and on a dual-annotated dataset an adjudicator settles the two side by side."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser_support import ROOT, Server, cli, login, running, screenshot, settled

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

DEMO = "mathvista-quality-gate"
DUAL = "gate-dual"
JUDY, JUDY_PASSWORD = "judy", "judy-password-1"
EDITED = "Opposite sides of a parallelogram are equal, so AB = DC."
HOSTILE = "hostile-gate"
HOSTILE_TEXT = [
    "<img src=x onerror=window.__pwned=1>",
    "<script>window.__pwned=2</script>",
    "[x](javascript:alert(1))",
]
HOSTILE_ITEM = {
    "id": "<b>h-1</b>",
    "question": HOSTILE_TEXT[0],
    "options": HOSTILE_TEXT[:2],
    "answer": HOSTILE_TEXT[1],
    "source": HOSTILE_TEXT[2],
    "steps": HOSTILE_TEXT,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("quality-gate")
    db = folder / "gate.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    cli("users", "add", JUDY, "--role", "adjudicator", "--password", JUDY_PASSWORD, db=db)
    demo = str(ROOT / "demo_data" / "crystal_demo.jsonl")
    for name in (DEMO, DUAL):  # the same ten items: one set single-annotated, the other all dual
        cli("import", demo, "--format", "crystal", "--dataset", name, db=db)
    hostile = folder / "hostile.jsonl"
    hostile.write_text(json.dumps(HOSTILE_ITEM) + "\n", encoding="utf-8")
    cli("import", str(hostile), "--format", "crystal", "--dataset", HOSTILE, db=db)
    cli("datasets", "set", HOSTILE, "dual_percent=0", db=db)
    cli("datasets", "set", DEMO, "dual_percent=0", db=db)
    cli("datasets", "set", DUAL, "dual_percent=100", db=db)
    with running(db, "--no-demo") as app:
        app.db = db  # type: ignore[attr-defined]
        yield app


def exported(server: Server, dataset: str) -> dict[str, dict]:
    """The dataset's items as the running app exports them (the command line talks to the app)."""
    out = server.db.with_name(f"{dataset}-items.jsonl")  # type: ignore[attr-defined]
    cli("export", "--format", "items-jsonl", "--out", str(out), "--dataset", dataset, db=server.db)  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {r["external_id"]: r for r in rows}


def open_gate(browser: Browser, url: str, name: str, password: str = "", dataset: str = DEMO) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(20_000)
    login(page, url, name, password or f"{name}-password")
    page.get_by_role("tab", name="Quality gate").click()
    expect(page.locator("#qg-header")).to_contain_text("Item")
    if page.locator("#qg-dataset input").input_value() != dataset:
        page.locator("#qg-dataset input").click()
        page.get_by_role("option", name=dataset, exact=True).click()
        page.keyboard.press("Escape")
    expect(page.locator("#qg-header")).to_contain_text(f" of {dataset}")
    # The tab's opening event and the dataset's can answer in either order: the panel is the dataset's
    # once neither is under way (an edit made before a late answer is replaced by it).
    settled(page)
    return page


def on_screen(page: Page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    assert box["y"] >= 0 and box["y"] + box["height"] <= 768, f"{selector} is off screen: {box}"
    assert box["x"] + box["width"] <= 1366, f"{selector} spills sideways: {box}"


def check_criteria(page: Page, keys: str) -> None:
    """Criteria by the keyboard (1-4), from the panel's body so no field has the focus."""
    page.locator("#qg-header").click()
    for key in keys:
        page.keyboard.press(key)


def edit_first_step(page: Page, step_index: int, text: str) -> None:
    page.locator("#qg-header").click()
    page.keyboard.press("e")  # the figure's text area, one step per line
    area = page.locator("#qg-steps-text textarea")
    expect(area).not_to_have_value("")
    lines = area.input_value().split("\n")
    lines[step_index] = text
    area.fill("\n".join(lines))
    page.locator("#qg-use-text").click()
    expect(page.locator("#qg-steps")).to_contain_text(text)


def test_a_new_annotator_edits_a_step_and_accepts_on_one_screen(server: Server, browser: Browser) -> None:
    page = open_gate(browser, server.url, "ann")
    expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-1")
    expect(page.locator("#qg-image img")).to_be_visible()
    expect(page.locator("#qg-question")).to_contain_text("ABCD is a parallelogram")
    expect(page.locator("#qg-choices")).to_contain_text("A. 3")
    expect(page.locator("#qg-answer")).to_contain_text("Answer: 6")
    for selector in (
        "#qg-image",
        "#qg-steps",
        "#qg-criteria",
        "#qg-accept",
        "#qg-reject",
        "#qg-next",
        "#qg-slider",
    ):
        screenshot(page, "quality-gate-1366x768")
        on_screen(page, selector)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1367
    edit_first_step(page, 1, EDITED)

    def both_criteria_kept(response) -> bool:
        return "/gradio_api/" in response.url and bool(
            re.search(r'\["c1",\s*"c2"\]', response.request.post_data or "")
        )

    with page.expect_response(both_criteria_kept):  # the draft with both reached the server
        check_criteria(page, "12")
    page.reload()  # unsaved work is kept on the server and comes back
    page.wait_for_selector("#logout-link", timeout=30_000)
    page.get_by_role("tab", name="Quality gate").click()
    expect(page.locator("#qg-header")).to_contain_text("with your unsaved changes")
    expect(page.locator("#qg-steps")).to_contain_text(EDITED)
    expect(page.locator('#qg-criteria input[type="checkbox"]:checked')).to_have_count(2)
    check_criteria(page, "34")
    expect(page.locator('#qg-criteria input[type="checkbox"]:checked')).to_have_count(4)
    page.keyboard.press("a")
    expect(page.locator("#qg-status")).to_contain_text("Saved: accepted. Next item")
    expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-2")
    page.locator("#qg-header").click()
    page.keyboard.press("l")
    expect(page.locator("#qg-lineage")).to_contain_text("edited")
    expect(page.locator("#qg-lineage")).to_contain_text("ann")
    first = exported(server, DEMO)["mv-geometry-1"]
    assert (first["status"], first["version"], first["version_reason"]) == ("accepted", 2, "edited")
    assert first["steps"]["candidate"][1] == EDITED
    page.context.close()


def test_another_annotator_rejects_with_the_failed_criteria_and_a_reason(
    server: Server, browser: Browser
) -> None:
    page = open_gate(browser, server.url, "bea")
    header = page.locator("#qg-header").inner_text()
    check_criteria(page, "124")
    page.locator("#qg-reject").click()
    expect(page.locator("#qg-status")).to_contain_text("give a reason")
    page.locator("#qg-reason input, #qg-reason textarea").first.fill(
        "The figure does not show the cut corners."
    )
    page.locator("#qg-reject").click()
    expect(page.locator("#qg-status")).to_contain_text("Saved: rejected")
    expect(page.locator("#qg-status")).to_contain_text("C3 Visual grounding failed")
    expect(page.locator("#qg-header")).not_to_have_text(header)
    page.context.close()


def test_an_adjudicator_settles_two_blind_annotators_side_by_side(server: Server, browser: Browser) -> None:
    for name, verdict in (("cy", "accept"), ("dee", "reject")):
        page = open_gate(browser, server.url, name, dataset=DUAL)
        expect(page.locator("#qg-header")).to_contain_text("Item mv-geometry-1")
        if verdict == "accept":
            edit_first_step(page, 0, "The figure shows parallelogram ABCD with AB = 3y − 8 and DC = 10.")
            check_criteria(page, "1234")
            page.keyboard.press("a")
            expect(page.locator("#qg-status")).to_contain_text("Saved: accepted")
        else:
            check_criteria(page, "123")
            page.locator("#qg-reason input, #qg-reason textarea").first.fill("y is 6 but x is never asked")
            page.locator("#qg-reject").click()
            expect(page.locator("#qg-status")).to_contain_text("Saved: rejected")
        # The reply says "saved" and nothing of the other annotator; disputes are not an annotator's.
        expect(page.locator("#qg-status")).not_to_contain_text("disputed")
        expect(page.locator("#qg-disputes")).to_have_count(0)
        page.context.close()
    judge = open_gate(browser, server.url, JUDY, JUDY_PASSWORD, dataset=DUAL)
    judge.locator("#qg-disputes").get_by_text("Disputed items (adjudicators)").click()
    expect(judge.locator("#qg-dispute-status")).to_contain_text("1 disputed item")
    side = judge.locator("#qg-dispute-judgements")
    expect(side.locator(".qg-judgement")).to_have_count(2)
    expect(side).to_contain_text("cy: accept")
    expect(side).to_contain_text("dee: reject")
    screenshot(judge, "quality-gate-adjudication")
    for n in range(4):
        judge.locator("#qg-dispute-criteria input[type=checkbox]").nth(n).check()
    judge.locator("#qg-dispute-stands").get_by_text("cy", exact=True).click()
    judge.locator("#qg-dispute-accept").click()
    expect(judge.locator("#qg-dispute-status")).to_contain_text("Settled: accepted")
    settled = exported(server, DUAL)["mv-geometry-1"]
    assert (settled["status"], settled["version"], settled["version_reason"]) == ("accepted", 2, "edited")
    assert json.loads(settled["decision"])["adjudicated"] is True
    judge.context.close()


def test_dataset_text_stays_text_everywhere_in_the_panel(server: Server, browser: Browser) -> None:
    page = open_gate(browser, server.url, "eve", dataset=HOSTILE)
    expect(page.locator("#qg-steps")).to_contain_text("<script>window.__pwned=2</script>")
    expect(page.locator("#qg-question")).to_contain_text("<img src=x")
    for where in ("#qg-header", "#qg-question", "#qg-choices", "#qg-answer", "#qg-steps"):
        assert (
            page.locator(f"{where} img, {where} script, {where} b, {where} a[href^=javascript]").count() == 0
        )
    page.locator("#qg-header").click()
    page.keyboard.press("e")
    expect(page.locator("#qg-steps-text textarea")).to_have_value("\n".join(HOSTILE_TEXT))
    assert page.evaluate("window.__pwned === undefined")
    page.context.close()
