"""In Chromium: an admin marks gold items and reads an annotator's calibration plot and alert."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from services import gold as gold_service
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store
from store.datasets import update_settings
from tests.browser_support import cli, login, running, screenshot, upload
from tests.gold_support import DATASET, GOOD, WRONG, label

pytestmark = pytest.mark.browser

PASSWORD = "gold-password-1"
# Each wait of the admin's test: its events queue behind the page's own loads, and a loaded CI machine
# has stalled that long (the gold marks missed 30 s twice there, in two different places).
SLOW_MACHINE = 120_000


def _calibrated_db(tmp_path: Path) -> tuple[Path, list[str]]:
    db = tmp_path / "gold.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    for name in ("ann", "bad"):
        cli("users", "add", name, "--role", "annotator", "--password", PASSWORD, db=db)
    with Store(db) as store:
        populate_demo(store)
        settled = label(store, "ann", 12, GOOD)
        gold_service.mark_items(store, OPERATOR, DATASET, settled[:8])
        update_settings(store, DATASET, {"gold_percent": 50, "gold_alert_min_items": 5})
        label(store, "bad", 20, WRONG)
    return db, settled[8:]


def test_admin_marks_gold_and_sees_an_annotators_calibration_plot(tmp_path: Path, page) -> None:
    db, more = _calibrated_db(tmp_path)
    with Store(db) as store:  # two items nobody labelled yet, for a file's gold column
        fresh = [
            r
            for (r,) in store.fetchall(
                "SELECT i.external_id FROM items i JOIN item_state s ON s.item_id = i.id JOIN datasets d "
                "ON d.id = i.dataset_id WHERE d.name = ? AND s.status = 'open' ORDER BY i.id LIMIT 2",
                [DATASET],
            )
        ]
    column = tmp_path / "gold-column.csv"
    column.write_text("item,gold\n" + "".join(f'{r},"{{""original"": ""correct""}}"\n' for r in fresh))
    with running(db, "--no-demo") as server:
        login(page, server.url, "lead", PASSWORD)
        alert = page.locator("#home-hello").get_by_text(
            "Gold check: bad on prmbench-step-review", exact=False
        )
        alert.wait_for(timeout=SLOW_MACHINE)  # the alert reaches the admin where the app opens
        page.get_by_role("tab", name="QC dashboard").click()
        # the tab's opening event chooses the dataset: a mark sent before it has none
        expect(page.locator("#qc-dataset input")).to_have_value(DATASET, timeout=SLOW_MACHINE)
        page.locator("#qc-gold").get_by_text("Gold items and calibration").first.click()
        page.locator("#gold-items textarea, #gold-items input").first.fill(", ".join(more))
        page.locator("#gold-mark").click()
        page.locator("#gold-mark-status").get_by_text("marked 4 item(s) gold").wait_for(timeout=SLOW_MACHINE)
        # and two more from a file's gold column
        upload(page, "gold-file", column)
        for elem_id, column in (("gold-id-column", "item"), ("gold-label-column", "gold")):
            box = page.locator(f"#{elem_id} textarea, #{elem_id} input").first
            box.fill(column)
            expect(box).to_have_value(column)  # on the page before the click
        # the event is accepted (a file it names is this login's own upload), then its answer shows
        with page.expect_response(lambda r: "/gradio_api/queue/join" in r.url) as joined:
            page.locator("#gold-mark-file").click()
        assert joined.value.ok, joined.value.text()
        expect(page.locator("#gold-mark-status")).to_contain_text(
            "marked 2 item(s) gold", timeout=SLOW_MACHINE
        )

        page.locator("#gold-show").click()
        status = page.locator("#gold-status")
        status.get_by_text("14 gold item(s)").wait_for(timeout=SLOW_MACHINE)
        assert "bad on prmbench-step-review" in status.inner_text() and "0% right" in status.inner_text()
        assert "at least 5 of them" in status.inner_text()  # the rule says how many answers it takes
        table = page.locator("#gold-table").inner_text()
        assert "bad" in table and "below" in table
        assert "median s/gold item" in table and "5.000" in table  # time per item (5 s a label)
        assert len(page.locator("#gold-list").inner_text().split("consensus")) > 12
        assert all(r in page.locator("#gold-list").inner_text() for r in fresh)

        page.locator("#gold-annotator input").click()
        page.get_by_role("option", name="bad", exact=True).click()
        image = page.locator("#gold-plot img")
        image.wait_for(state="visible", timeout=SLOW_MACHINE)
        assert image.evaluate("img => img.naturalWidth") > 500
        screenshot(page, "gold-calibration")
    out = cli("gold", "alerts", db=db).stdout
    assert out.startswith("bad on prmbench-step-review")


def test_an_annotator_sees_their_own_gold_accuracy_only_where_the_dataset_allows_it(
    tmp_path: Path, page
) -> None:
    db, _ = _calibrated_db(tmp_path)
    with running(db, "--no-demo") as server:
        login(page, server.url, "bad", PASSWORD)
        hello = page.locator("#home-hello")
        hello.get_by_text("Hello").first.wait_for(timeout=30_000)
        assert "Checked items" not in hello.inner_text()  # gold_feedback is off by default
        cli("datasets", "set", DATASET, "gold_feedback=1", db=db)
        page.reload()
        page.wait_for_selector("#logout-link", timeout=30_000)
        hello.get_by_text("Checked items").wait_for(timeout=30_000)
        text = hello.inner_text()
        assert "right" in text and "95% interval" in text and "not counted yet" in text
        assert "Gold check" not in text  # the admins' alert is not for annotators
