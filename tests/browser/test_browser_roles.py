"""Every tab as each role sees it, at a laptop and a large screen: what each role may see, and a
layout where nothing spills sideways and the controls an annotator needs are on screen, unhidden.
Screenshots of every tab, role and size are kept in test-artifacts/."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from services import access, annotate
from services.demo import populate_demo
from services.leasing import leases_of
from store import Store, users, work
from store.datasets import update_settings
from tests.browser_support import Server, login, running, screenshot
from ui.panels import PANELS, tab_elem_id

pytestmark = pytest.mark.browser

PASSWORD = "role-password-1"
SIZES = {"laptop": (1366, 768), "large": (1920, 1080)}
# The controls an annotator needs without scrolling, by tab.
ANNOTATION_CONTROLS = {
    "Earliest error": ["#ee-choice", "#ee-save", "#ee-next", "#ee-skip"],
    "Step review": [
        "#step-review-original",
        "#step-review-modification",
        "#step-review-difficulty",
        "#step-review-save",
        "#step-review-next",
        "#step-review-skip",
    ],
    "Quality gate": ["#qg-steps", "#qg-criteria", "#qg-accept", "#qg-reject", "#qg-next", "#qg-skip"],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One team-mode app for both screen sizes: the walk only looks."""
    with running(_database(tmp_path_factory.mktemp("roles")), "--team") as served:
        yield served


def _database(tmp_path: Path) -> Path:
    db = tmp_path / "roles.duckdb"
    with Store(db) as store:
        populate_demo(store)
        for name, role in (
            ("ann", "annotator"),
            ("bea", "annotator"),
            ("judy", "adjudicator"),
            ("lead", "admin"),
        ):
            users.add_user(store, name, role, PASSWORD)
        update_settings(
            store, "prmbench-step-review", {"annotators_per_item": 2}
        )  # both label the same items
        dataset = work.dataset_for(store, "prmbench-step-review", "step_review")
        for name in ("ann", "bea"):
            who = users.get_user(store, name)
            for n in range(12):
                found = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
                payload = {
                    "original": "correct" if n % 4 else "incorrect",
                    "modification": "reasonable",
                    "difficulty": ("easy", "medium", "hard")[n % 3],
                }
                annotate.submit(
                    store,
                    annotator=who,
                    item_id=found.item.item_id,
                    version_id=found.item.version_id,
                    payload=payload,
                    request_id=uuid.uuid4().hex,
                    seconds_spent=10.0 + n,
                )
    return db


def _boxes_overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


# Each selector's first element's box, or null when it is not on the page.
BOXES = """(selectors) => selectors.map((selector) => {
  const element = document.querySelector(selector);
  if (!element) return null;
  const box = element.getBoundingClientRect();
  return box.width || box.height ? {x: box.x, y: box.y, width: box.width, height: box.height} : null;
})"""


def _settled_boxes(page, selectors: list[str]) -> dict:
    """The controls' boxes once the panel has stopped moving (the same twice, 200 ms apart): a panel
    still placing the item it just received is not yet the layout an annotator works in."""
    if not selectors:
        return {}
    boxes = page.evaluate(BOXES, selectors)
    for _ in range(50):
        page.wait_for_timeout(200)
        again = page.evaluate(BOXES, selectors)
        if again == boxes:
            break
        boxes = again
    return dict(zip(selectors, boxes, strict=True))


def _check_layout(page, title: str, size: str) -> None:
    boxes = _settled_boxes(page, ANNOTATION_CONTROLS.get(title, []))
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1, (
        f"{title} at {size}: content spills sideways ({width} px)"
    )
    for selector, box in boxes.items():
        assert box is not None, f"{title} at {size}: {selector} is not shown"
        assert box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"], (
            f"{title} at {size}: {selector} is off screen"
        )
    for a in boxes:
        for b in boxes:
            if a < b:
                assert not _boxes_overlap(boxes[a], boxes[b]), f"{title} at {size}: {a} overlaps {b}"


def test_every_tab_for_every_role_fits_the_screen_and_shows_what_the_role_may_see(
    server: Server, browser
) -> None:
    """Each role signs in once and walks every tab at each size in turn (the window resized, as a
    person moving to a larger screen would)."""
    for name, role in (("ann", "annotator"), ("judy", "adjudicator"), ("lead", "admin")):
        first, *others = SIZES
        context = browser.new_context(viewport=_viewport(first))
        page = context.new_page()
        page.set_default_timeout(30_000)
        login(page, server.url, name, PASSWORD)
        page.get_by_text("Signed in as").wait_for()
        user = users.Annotator(0, name, role, True)
        shown = [(t, m) for t, m, audience in PANELS if access.may_open_panel(user, audience)]
        hidden = [t for t, _, audience in PANELS if not access.may_open_panel(user, audience)]
        expect(page.get_by_role("tab", name=shown[-1][0])).to_be_visible()
        for title in hidden:  # a role sees only the tabs it can use
            expect(page.get_by_role("tab", name=title, exact=True)).to_have_count(0)
        if role == "annotator":
            assert [t for t, _ in shown] == [
                "Home",
                "Step review",
                "Earliest error",
                "Quality gate",
                "Perturbation check",
                "Step-match study",
                "Browse",
            ]
        for size in (first, *others):
            page.set_viewport_size(_viewport(size))
            _walk(page, role, size, shown)
        context.close()


def _viewport(size: str) -> dict[str, int]:
    return dict(zip(("width", "height"), SIZES[size], strict=True))


def _walk(page, role: str, size: str, shown: list) -> None:
    """Every tab the role sees, at the page's present size: its layout checked, its screen kept."""
    for title, module in shown:
        page.get_by_role("tab", name=title).click()
        page.locator(f"#{tab_elem_id(module)}").wait_for()
        if title == "QC dashboard":
            text = page.locator("#tab-dashboard").inner_text()
            if role == "annotator":
                assert "adjudicators and admins" in text
            else:
                page.get_by_text("24 labels by 2 annotators").first.wait_for()
        if title == "Data":
            text = page.locator("#tab-data").inner_text()
            assert ("Only admins" in text) == (role != "admin")
        if role == "annotator" and title in ANNOTATION_CONTROLS:
            page.locator(ANNOTATION_CONTROLS[title][0]).first.wait_for()
            page.evaluate("window.scrollTo(0, 0)")
        _check_layout(page, title, size)
        # the screen, as the layout checks it: a full page costs ~4x, for 60 shots
        screenshot(page, f"role-{role}-{size}-{title.lower().replace(' ', '-')}", full_page=False)
