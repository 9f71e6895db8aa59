"""The app started as the README says, opened in headless Chromium: login and every tab."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.browser_support import cli, login, running, screenshot
from ui.panels import PANELS

pytestmark = pytest.mark.browser


def test_team_mode_login_shows_every_tab_and_the_user(tmp_path: Path, page) -> None:
    db = tmp_path / "team.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    with running(db, "--team") as server:
        # Unauthenticated requests are refused in team mode.
        assert requests.get(server.url + "/gradio_api/info", timeout=5).status_code == 401
        page.goto(server.url)
        page.get_by_label("username").fill("lead")
        page.get_by_label("password").fill("wrong-password")
        page.get_by_role("button", name="Login").click()
        page.get_by_text("Wrong name or password").wait_for()
        login(page, server.url, "lead", "lead-password-1")
        page.get_by_text("Signed in as").wait_for()
        assert "role: admin" in page.locator("#whoami").inner_text()
        for title, _, _ in PANELS:  # an admin sees every tab
            page.get_by_role("tab", name=title).click()
        assert "CC BY-SA 4.0" in page.locator("#credits").inner_text()
        screenshot(page, "shell-team-mode")
    assert "demo:" in server.log.read_text()


# Counts, per caller, the animation frames the page asks for (installed before Gradio's own scripts).
COUNT_FRAMES = """(() => {
  const ask = window.requestAnimationFrame.bind(window);
  window.framesAsked = {};
  window.requestAnimationFrame = (callback) => {
    const caller = (new Error().stack || "").split(String.fromCharCode(10)).slice(2, 7).join(" < ") || "?";
    window.framesAsked[caller.trim()] = (window.framesAsked[caller.trim()] || 0) + 1;
    return ask(callback);
  };
})()"""


def test_local_mode_creates_the_annotator_on_first_login(tmp_path: Path, page) -> None:
    db = tmp_path / "local.duckdb"
    page.add_init_script(COUNT_FRAMES)
    with running(db, "--no-demo") as server:
        login(page, server.url, "first-person", "my-password")
        page.get_by_text("Signed in as").wait_for()
        assert "role: admin" in page.locator("#whoami").inner_text()
        # An open page left alone comes to rest (a notice's fade takes a few seconds): Gradio's loading
        # screen left its timer asking for a frame 60 times a second for as long as the page stayed open
        # (ui/web/assets.py mends it).
        asked: dict[str, int] = {}
        for _ in range(15):
            before = page.evaluate("() => ({...window.framesAsked})")
            page.wait_for_timeout(1000)
            after = page.evaluate("() => ({...window.framesAsked})")
            asked = {
                caller: n - before.get(caller, 0) for caller, n in after.items() if n > before.get(caller, 0)
            }
            if not asked:
                break
        assert asked == {}, f"still drawing 15 s after login: {asked}"
    result = cli("users", "list", db=db)
    assert "first-person\tadmin\tpassword set" in result.stdout
