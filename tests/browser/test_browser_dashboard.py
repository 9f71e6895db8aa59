"""The QC dashboard in Chromium: coefficients with intervals, plots, the report download, studies, refusal."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from services import annotate
from services.demo import populate_demo
from services.leasing import leases_of
from services.studies import draw_study
from store import Store, users, work
from store.datasets import get_dataset, update_settings
from tests.browser_support import cli, login, running, screenshot

pytestmark = pytest.mark.browser

DATASET = "prmbench-step-review"
PASSWORD = "dash-password-1"
INTERVAL = re.compile(r"-?\d\.\d{3}\s+\[-?\d\.\d{3}, -?\d\.\d{3}\]")


def _label(store: Store, names: tuple[str, ...], n_items: int) -> None:
    """Each annotator labels the next n items the panel hands them, skewed on purpose: almost every
    original chain is "correct" (the kappa paradox)."""
    dataset = get_dataset(store, DATASET)
    for k, name in enumerate(names):
        who = users.get_user(store, name)
        for n in range(n_items):
            got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
            original = "incorrect" if n in ((3, 17) if k == 0 else (3, 22)) else "correct"
            payload = {
                "original": original,
                "modification": ("reasonable", "unreasonable")[(n + k * (n % 5 == 0)) % 2],
                "difficulty": ("easy", "medium", "hard")[(n + k * (n % 4 == 0)) % 3],
            }
            annotate.submit(
                store,
                annotator=who,
                item_id=got.item.item_id,
                version_id=got.item.version_id,
                payload=payload,
                request_id=str(uuid.uuid4()),
                seconds_spent=8.0 + 3 * n + 20 * k,
            )


def _labelled_db(tmp_path: Path) -> Path:
    """Users first (the CLI); 30 items gated by two annotators each; a 20-item study rated by two
    others (its own labels); closed before the server opens it."""
    db = tmp_path / "dash.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    for name in ("ann", "bea", "cid", "dan"):
        cli("users", "add", name, "--role", "annotator", "--password", PASSWORD, db=db)
    store = Store(db)
    try:
        populate_demo(store)
        update_settings(store, DATASET, {"annotators_per_item": 2})
        _label(store, ("ann", "bea"), 30)
        draw_study(
            store,
            users.get_user(store, "lead"),
            dataset=DATASET,
            name="pilot",
            n_items=20,
            raters=2,
            seed=5,
            kept_only=False,
            rater_names=["cid", "dan"],
        )
        _label(store, ("cid", "dan"), 20)  # their study items come first
    finally:
        store.close()
    return db


def _open_dashboard(page) -> None:
    page.get_by_role("tab", name="QC dashboard").click()


def test_admin_sees_coefficients_plots_and_downloads_the_report(tmp_path: Path, page) -> None:
    db = _labelled_db(tmp_path)
    with running(db) as server:
        login(page, server.url, "lead", PASSWORD)
        _open_dashboard(page)
        table = page.locator("#qc-agreement")
        table.get_by_text("Observed agreement", exact=True).first.wait_for()
        page.wait_for_function(
            "() => /\\d\\.\\d{3}\\s+\\[/.test(document.querySelector('#qc-agreement').innerText)",
            timeout=30_000,
        )
        text = table.inner_text()
        assert {"original", "modification", "difficulty"} <= set(re.findall(r"[a-z]+", text))
        assert len(INTERVAL.findall(text)) >= 12  # every coefficient of every field has its interval
        warning = page.locator("#qc-warning")
        assert warning.is_visible() and "Kappa misleads" in warning.inner_text()
        for plot in ("#qc-heatmap", "#qc-by-type-plot", "#qc-time-plot"):
            image = page.locator(f"{plot} img")
            image.wait_for(state="visible")
            assert image.evaluate("img => img.naturalWidth") > 300
        assert "ann" in page.locator("#qc-quality").inner_text()
        # beside the figures: which interval each coefficient has, and how often it holds (qc.coverage)
        status = page.locator("#qc-status").inner_text()
        assert "Wilson for agreement shares" in status and "85.4%" in status and "one point" in status
        screenshot(page, "dashboard-admin")

        with page.expect_download() as download:
            page.locator("#qc-download-md a").click()
        report = Path(download.value.path()).read_text(encoding="utf-8")
        assert report.startswith("# QC report: dataset prmbench-step-review")
        assert INTERVAL.search(report) and "Kappa misleads" in report and "85.4%" in report

        assert (
            page.locator("#qc-study-pick input").input_value() == "pilot"
        )  # the newest study is preselected
        page.locator("#qc-study-show").click()
        page.locator("#qc-study-summary").get_by_text("20 of 20 items").wait_for()
        assert "complete" in page.locator("#qc-study-summary").inner_text()
        assert len(INTERVAL.findall(page.locator("#qc-study-agreement").inner_text())) >= 12
        screenshot(page, "dashboard-study-report")

        page.locator("#qc-study-name textarea, #qc-study-name input").first.fill("second look")
        page.locator("#qc-study-n input").fill("12")
        page.locator("#qc-study-kept input").uncheck()  # a pilot over every item
        page.locator("#qc-study-draw").click()
        page.locator("#qc-study-status").get_by_text("12 items").wait_for()
        assert "second look" in page.locator("#qc-studies-table").inner_text()
        screenshot(page, "dashboard-study-drawn")
    listed = cli("datasets", "list", db=db).stdout
    assert DATASET in listed


def test_an_annotator_has_no_dashboard_tab_and_no_figures(tmp_path: Path, page) -> None:
    db = _labelled_db(tmp_path)
    with running(db) as server:
        login(page, server.url, "ann", PASSWORD)
        expect(page.get_by_role("tab", name="Home")).to_be_visible()
        expect(page.get_by_role("tab", name="QC dashboard", exact=True)).to_have_count(0)
        assert not page.locator("#qc-content").is_visible()
        assert page.locator("#qc-heatmap img, #qc-by-type-plot img, #qc-time-plot img").count() == 0
        assert "Observed agreement" not in page.locator("body").inner_text()
        screenshot(page, "dashboard-annotator")
