"""The README's screenshots: the app over a throwaway database with the demo data, on a free port of
127.0.0.1, driven in Debian's headless Chromium at 1366x768; each tab saved as a small PNG in docs/images/.

    python3 scripts/screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from bench.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from bench.server import start_server  # noqa: E402

OUT = ROOT / "docs" / "images"
# (file name, tab, what to wait for after the tab opens)
SHOTS = [
    ("home", "Home", None),
    ("step-review", "Step review", "text=Modified"),
    ("earliest-error", "Earliest error", "text=all steps are correct"),
    ("quality-gate", "Quality gate", "text=C1"),
    ("browse", "Browse", "#br-results:has-text('step')"),
    ("data", "Data", None),
]


def small_png(path: Path) -> None:
    """A screenshot of a page in 64 colours: a tenth of its size, the text as sharp."""
    image = Image.open(path).convert("RGB")
    image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        path, optimize=True
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        server = start_server(Path(folder) / "stepgate.duckdb", timeout=600)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                page = browser.new_page(viewport={"width": 1366, "height": 768})
                page.set_default_timeout(30_000)
                page.goto(server.url)
                # local mode: the first name on a fresh database becomes its admin
                page.get_by_label("username").fill("lead")
                page.get_by_label("password").fill("lead-password")
                page.get_by_role("button", name="Login").click()
                page.wait_for_selector("#logout-link")
                for name, tab, ready in SHOTS:
                    page.get_by_role("tab", name=tab, exact=True).click()
                    if ready:
                        page.locator(ready).first.wait_for()
                    page.wait_for_timeout(1500)
                    path = OUT / f"{name}.png"
                    page.screenshot(path=str(path))
                    small_png(path)
                    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
