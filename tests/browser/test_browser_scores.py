"""The Scores tab in Chromium: predictions loaded and uploaded, the score table, a failure case opened in Browse."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from services import scores
from services.demo import populate_demo
from store import Store, users
from tests.browser_support import cli, login, running, screenshot, upload
from tests.services.test_predictions import DATASET, settle, write_jsonl

pytestmark = pytest.mark.browser

PASSWORD = "scores-password-1"


def _db(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    db = tmp_path / "scores.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    store = Store(db)
    try:
        populate_demo(store)
        gold = settle(store)
        admin = users.get_user(store, "lead")
        perfect = [{"id": e, "earliest_error": g} for e, g in gold.items()]
        scores.import_predictions(
            store, admin, write_jsonl(tmp_path / "p.jsonl", perfect), model="perfect", dataset=DATASET
        )
    finally:
        store.close()
    return db, gold


def test_load_predictions_see_the_scores_and_open_a_failure_case(tmp_path: Path, page) -> None:
    db, gold = _db(tmp_path)
    false_alarms = [e for e, g in gold.items() if g == -1]
    alarm = write_jsonl(tmp_path / "alarm-model.jsonl", [{"id": e, "earliest_error": 0} for e in gold])
    with running(db) as server:
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="Scores").click()
        expect(page.locator("#sc-status")).to_contain_text("predictions", timeout=30_000)  # the first dataset
        page.locator("#sc-dataset input").click()
        page.get_by_role("option", name=DATASET, exact=True).click()
        page.keyboard.press("Escape")
        expect(page.locator("#sc-status")).to_contain_text(f"1 model(s) scored on {len(gold)} kept item(s)")
        models = page.locator("#sc-models")
        expect(models).to_contain_text("perfect", timeout=30_000)
        expect(models).to_contain_text("100.0")
        expect(page.locator("#sc-plot img")).to_be_visible()

        # An admin uploads a second model; the table shows both side by side.
        upload(page, "sc-upload", alarm)
        page.locator("#sc-upload-model textarea, #sc-upload-model input").first.fill("alarm")
        page.locator("#sc-import").click()
        expect(page.locator("#sc-import-status")).to_contain_text(
            f"alarm on {DATASET}: {len(gold)} predictions stored"
        )
        expect(models).to_contain_text("alarm")
        expect(models).to_contain_text("perfect")
        failures = page.locator("#sc-failures")
        expect(failures).to_contain_text("false alarm")
        expect(failures.locator("a.sc-open")).to_have_count(len(false_alarms))
        screenshot(page, "scores")

        # A failure case opens in Browse, next to the gold.
        first = failures.locator("tbody tr").first
        external = first.locator("td").first.inner_text()
        assert external in false_alarms
        first.locator("a.sc-open").click()
        page.wait_for_url("**tab=browse**")
        page.wait_for_selector("#panels")
        page.get_by_role("tab", name="Browse").click()
        expect(page.locator("#br-item")).to_contain_text(external, timeout=30_000)


def test_download_a_preset_table(tmp_path: Path, page) -> None:
    db, gold = _db(tmp_path)
    with running(db) as server:
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="Scores").click()
        expect(page.locator("#sc-status")).to_contain_text("predictions", timeout=30_000)
        page.locator("#sc-dataset input").click()
        page.get_by_role("option", name=DATASET, exact=True).click()
        page.keyboard.press("Escape")
        expect(page.locator("#sc-status")).to_contain_text("model(s) scored")
        page.locator("#sc-preset-format").get_by_text("LaTeX").click()
        page.locator("#sc-preset-make").click()
        expect(page.locator("#sc-preset-table")).to_contain_text("# Samples", timeout=30_000)
        expect(page.locator("#sc-preset-table")).to_contain_text("% 3/3 agreement")
        link = page.locator("#sc-preset-download a.stepgate-download")
        expect(link).to_contain_text("processbench_table2-qwq-earliest-error.tex")
        with page.expect_download() as info:
            link.click()
        text = Path(info.value.path()).read_text(encoding="utf-8")
        assert r"\begin{tabular}" in text and r"\# Samples" in text
        samples = next(line for line in text.splitlines() if line.startswith(r"\# Samples"))
        counts = [int(c.strip(" \\")) for c in samples.split("&")[1:]]
        assert sum(counts) == len(gold)  # every kept item in one column of Table 2
        screenshot(page, "scores-preset")


def test_mpbench_table_with_its_averaging_in_the_scores_tab(tmp_path: Path, page) -> None:
    from tests.qc.test_mpbench_scores import DATASET as MPBENCH
    from tests.qc.test_mpbench_scores import SHARP, _jsonl, mpbench_store

    db = tmp_path / "mpbench.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", PASSWORD, db=db)
    with Store(db) as store:
        admin = mpbench_store(store, tmp_path)
        scores.import_predictions(
            store, admin, _jsonl(tmp_path / "s.jsonl", SHARP), model="sharp", dataset=MPBENCH
        )
    with running(db) as server:
        login(page, server.url, "lead", PASSWORD)
        page.get_by_role("tab", name="Scores").click()
        expect(page.locator("#sc-status")).to_contain_text("kept item(s)", timeout=30_000)
        table = page.locator("#sc-mpbench")
        # Overall = ((50.0 + 85.7)/2 + 50.0 + 100.0)/3 = 72.6; delta = 72.6 - 31.8 = +40.8 (by hand)
        expect(table).to_contain_text("sharp", timeout=30_000)
        expect(table).to_contain_text("72.6")
        expect(table).to_contain_text("+40.8")
        domains = page.locator("#sc-mpbench-domains")
        expect(domains).to_contain_text("science")
        expect(domains).to_contain_text("+59.1")  # AA on science: 100.0 - 40.9
        expect(page.locator("#sc-prmbench-v")).to_contain_text("Overall")  # PRMBench-V's table beside it
        screenshot(page, "scores-mpbench")
