"""Click to next item rendered, in Chromium: what an annotator feels after pressing Save.

    python bench/browser.py              # 40 saves per panel
    python bench/browser.py --saves 100
    python bench/browser.py --reviewed   # QC dashboard, Scores, Browse and Jobs opened first

Starts the real app on 127.0.0.1 over a fresh database (the demo's PRMBench, QwQ, CRYSTAL and step-pair
files, and a perturbation check made from the CRYSTAL images), logs in in headless Chromium as an
annotator (with --reviewed: as an admin, in the whole app) and, for each of the five annotation panels
in turn, per save, times from the click on Save (with "next sample after saving") to the moment the
next item's text is in the page, measured in the page itself (performance.now and a MutationObserver),
so Playwright's own round trips are not counted. Beside it, the same measure on a trivial Gradio app
(one button, one Markdown) in the same run: the floor any Gradio panel pays.
Prints a Markdown table; the ratio to the floor is what compares across machines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.server import ROOT, free_port, start_server

# Debian's headless shell (package chromium-headless-shell) when it is there: the same Blink without the
# whole browser around it, as Playwright itself runs headless Chromium. The 103 browser tests, two workers,
# one after the other: 507 s of wall time and 937 s of CPU, against 594 s and 1,112 s in the whole browser.
_HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = os.environ.get("STEPGATE_CHROMIUM") or (
    _HEADLESS_SHELL if os.path.exists(_HEADLESS_SHELL) else "/usr/bin/chromium"
)
# What Playwright (1.65) passes Chromium as --disable-features itself, read off the browser's command line.
_PLAYWRIGHT_DISABLED = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
]
# Headless Debian Chromium on a machine without network: no background connections, no sandbox as root.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # New headless is the whole browser: each window (a Playwright context) also started the address
    # bar's WebUI popups in a renderer of their own, ~1 s of CPU per context for nothing on screen.
    # Chromium keeps only the last --disable-features, so Playwright's own list is repeated here.
    "--disable-features="
    + ",".join(
        [
            *_PLAYWRIGHT_DISABLED,
            "WebUIOmniboxPopup",
            "WebUIOmniboxAimPopup",
            "WebUIOmniboxFullPopup",
        ]
    ),
]
PASSWORD = "bench-password-1"

# In the page: click `button`, resolve with the milliseconds until `watched`'s text changes.
# The Markdown's own text (.prose), not the loading timer Gradio shows beside it while a request runs.
TIME_CLICK = """async ([button, watched]) => {
  const target = document.querySelector(watched);
  const text = () => { const prose = target.querySelector(".prose"); return prose ? prose.textContent : ""; };
  const before = text();
  const changed = new Promise((resolve) => {
    const seen = new MutationObserver(() => {
      if (text() !== before) { seen.disconnect(); resolve(performance.now()); }
    });
    seen.observe(target, { childList: true, subtree: true, characterData: true });
  });
  const start = performance.now();
  document.querySelector(button).click();
  return (await Promise.race([changed, new Promise((r) => setTimeout(() => r(NaN), 10000))])) - start;
}"""


def _copies(folder: Path, demo: str, copies: int = 10) -> Path:
    """A demo file's records `copies` times over under new ids (images beside, as imported)."""
    source = ROOT / "demo_data" / demo
    shutil.copytree(source.parent / "images", folder / "images", dirs_exist_ok=True)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    out = folder / demo
    with out.open("w", encoding="utf-8") as fh:
        for copy in range(copies):
            for row in rows:
                fh.write(json.dumps({**row, "id": f"{row['id']}-{copy}"}) + "\n")
    return out


def _prepare(folder: Path, saves: int) -> Path:
    from services import jobs, perturbation
    from services.access import OPERATOR
    from services.compose import compose
    from services.imports import import_file
    from store import Store
    from store.datasets import update_settings
    from store.users import add_user

    db = folder / "browser-bench.duckdb"
    # As app.py does: without the job runners registered, every variant's job failed here and the served
    # app's worker made them 30 s later, while the first panels were being timed.
    compose()
    store = Store(db)
    try:
        add_user(store, "bench", "annotator", PASSWORD)  # who labels: an annotator's page (ui/web/pages.py)
        add_user(store, "lead", "admin", PASSWORD)  # --reviewed: a lead who also labels, in the whole app
        import_file(store, ROOT / "demo_data" / "prmbench_demo.jsonl", format="prmbench", dataset="review")
        import_file(store, ROOT / "demo_data" / "qwq_solutions_demo.jsonl", format="qwq", dataset="errors")
        import_file(store, _copies(folder, "crystal_demo.jsonl"), format="crystal", dataset="gate")
        update_settings(store, "gate", {"dual_percent": 0})
        import_file(store, _copies(folder, "step_pairs_demo.jsonl"), format="steppairs", dataset="pairs")
        # One image variant per CRYSTAL item, made as the app's worker makes them.
        perturbation.create_check_dataset(store, OPERATOR, "gate", "figures", "image", limit=saves + 5)
        made = jobs.run_pending(store)
        assert made.done == saves + 5 and not made.retrying, made
    finally:
        store.close()
    return db


def _login(page, url: str, name: str) -> None:
    page.goto(url)
    page.get_by_label("username").fill(name)
    page.get_by_label("password").fill(PASSWORD)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#logout-link", timeout=60_000)


# Between the last choice and Save, as between a person's clicks: the choices' own events (each keeps a
# draft on the server) have answered, so the save is timed alone. 60 ms, as three panels had, let a save
# start while its choice's event was still running and timed both.
PACE_MS = 400


def _timed(page, saves: int, label, button: str, watched: str) -> list[float]:
    """`saves` times: give a label (`label(page)`), let its own events settle, time `button` to `watched`."""
    times = []
    for _ in range(saves):
        label(page)
        page.wait_for_timeout(PACE_MS)
        times.append(page.evaluate(TIME_CLICK, [button, watched]))
    return times


def _keys(*keys: str):
    return lambda page: [page.keyboard.press(key) for key in keys]


def open_reviewers_tabs(page) -> None:
    """What a lead does between rounds of labelling: each tab opened once and left, in the same page. A
    tab-open event's progress stays with the page and is applied again at every later event."""
    for tab, shown in (
        ("QC dashboard", "#qc-agreement"),
        ("Scores", "#sc-status"),
        ("Browse", "#br-results"),
        ("Jobs", "#jobs-table"),
    ):
        page.get_by_role("tab", name=tab).click()
        page.wait_for_selector(shown, state="visible", timeout=60_000)
        page.wait_for_timeout(1500)  # its figures and tables arrive


def step_review(page, saves: int) -> list[float]:
    page.get_by_role("tab", name="Step review").click()
    page.wait_for_selector("#step-review-info p", timeout=30_000)
    return _timed(page, saves, _keys("c", "r", "e"), "#step-review-save", "#step-review-info")


def earliest_error(page, saves: int) -> list[float]:
    page.get_by_role("tab", name="Earliest error").click()
    page.wait_for_selector("#ee-steps .ee-step", timeout=30_000)

    def label(page) -> None:
        page.locator("#ee-choice input[type='radio']").nth(1).check()

    return _timed(page, saves, label, "#ee-save", "#ee-question")


def quality_gate(page, saves: int) -> list[float]:
    page.get_by_role("tab", name="Quality gate").click()
    page.wait_for_selector("#qg-header p", timeout=30_000)
    if page.locator("#qg-dataset input").input_value() != "gate":
        page.locator("#qg-dataset input").click()
        page.get_by_role("option", name="gate", exact=True).click()
        page.keyboard.press("Escape")
    page.wait_for_function("document.querySelector('#qg-header').textContent.includes('of gate')")

    def label(page) -> None:
        page.locator("#qg-header").click()  # the keys act while focus is outside the step table
        _keys(*"1234")(page)

    return _timed(page, saves, label, "#qg-accept", "#qg-header")


def perturbation_check(page, saves: int) -> list[float]:
    page.get_by_role("tab", name="Perturbation check").click()
    page.wait_for_selector("#pc-header p", timeout=30_000)

    def label(page) -> None:  # every check holds
        page.wait_for_selector("#pc-checklist input[type='checkbox']", timeout=30_000)
        for box in page.locator("#pc-checklist input[type='checkbox']").all():
            box.check()

    return _timed(page, saves, label, "#pc-save", "#pc-header")


def step_match(page, saves: int) -> list[float]:
    page.get_by_role("tab", name="Step-match study").click()
    page.wait_for_selector("#sm-header p", timeout=30_000)
    return _timed(page, saves, _keys("m"), "#sm-save", "#sm-header")


def trivial_gradio(browser, saves: int) -> list[float]:
    """The floor: a Gradio app whose handler returns a new Markdown at once."""
    import gradio as gr

    with gr.Blocks() as demo:
        shown = gr.Markdown("item 0", elem_id="floor-text")
        count = gr.State(0)
        go = gr.Button("Save", elem_id="floor-save")
        go.click(lambda n: (f"item {n + 1}", n + 1), [count], [shown, count])
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#floor-save", timeout=30_000)
        times = []
        for _ in range(saves):
            page.wait_for_timeout(60)
            times.append(page.evaluate(TIME_CLICK, ["#floor-save", "#floor-text"]))
        page.close()
        return times
    finally:
        demo.close()


def _percentiles(times: list[float]) -> tuple[float, float]:
    values = [t for t in times if np.isfinite(t)]
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def _row(name: str, times: list[float], floor: tuple[float, float]) -> str:
    p50, p95 = _percentiles(times)
    missed = sum(1 for t in times if not np.isfinite(t))
    done = f"{len(times) - missed}{f' ({missed} timed out)' if missed else ''}"
    return f"| {name} | {done} | {p50:.0f} | {p95:.0f} | {p50 / floor[0]:.1f}x | {p95 / floor[1]:.1f}x |"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--saves", type=int, default=40, help="saves timed per panel (default 40)")
    parser.add_argument(
        "--reviewed",
        action="store_true",
        help="open QC dashboard, Scores, Browse and Jobs in the page before the saves",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(_prepare(Path(tmp), args.saves), "--no-demo", "--team")
        results: dict[str, list[float]] = {}
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                # The floor before and after the panels: a shared machine's load moves while they run.
                floor = trivial_gradio(browser, args.saves // 2)
                page = browser.new_page(viewport={"width": 1366, "height": 768})
                _login(page, server.url, "lead" if args.reviewed else "bench")
                if args.reviewed:
                    open_reviewers_tabs(page)
                results["Step review: Save -> next sample rendered"] = step_review(page, args.saves)
                results["Earliest error: Save -> next item rendered"] = earliest_error(page, args.saves)
                results["Quality gate: Accept -> next item rendered"] = quality_gate(page, args.saves)
                results["Perturbation check: Save -> next variant rendered"] = perturbation_check(
                    page, args.saves
                )
                results["Step-match study: Save -> next pair rendered"] = step_match(page, args.saves)
                floor += trivial_gradio(browser, args.saves - args.saves // 2)
                browser.close()
        finally:
            server.stop()
    floor_at = _percentiles(floor)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"| click to render in Chromium, 1366x768 (load average {load}) | saves | p50 ms | p95 ms | p50 / floor | p95 / floor |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    print(_row("floor: trivial Gradio handler (one Markdown), before and after", floor, floor_at))
    for name, times in results.items():
        print(_row(name, times, floor_at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
