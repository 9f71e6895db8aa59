"""Start the real app as the README does and drive it in Debian's headless Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import expect

from bench.browser import CHROMIUM, CHROMIUM_ARGS
from bench.server import ROOT, Server, free_port, start_server
from tests.app_forks import installed

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "ROOT",
    "Server",
    "answered",
    "app_py",
    "cli",
    "free_port",
    "login",
    "logout",
    "pick",
    "running",
    "screenshot",
    "settled",
    "start_server",
    "upload",
]
ARTIFACTS = ROOT / "test-artifacts"


def app_py(
    *args: str, input_env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python app.py ARGS` as a user runs it, to its end whatever its exit code, as
    `subprocess.run(..., capture_output=True, text=True)` gives it; forked where tests/app_forks.py may
    (a command's own start is checked by tests/perf/test_lean_start.py and test_cli's pandas test)."""
    env = {**os.environ, **(input_env or {})}
    forks = installed()
    if forks is not None and forks.accepts(env):
        return forks.run(list(args), env, timeout=timeout)
    return subprocess.run(
        [sys.executable, "app.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def cli(*args: str, db: Path, input_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python app.py ARGS --db DB` (app_py); fails the test on a non-zero exit."""
    result = app_py(*args, "--db", str(db), input_env=input_env)
    assert result.returncode == 0, result.stderr
    return result


@contextmanager
def running(db: Path, *extra: str) -> Iterator[Server]:
    server = start_server(db, *extra)
    try:
        yield server
    finally:
        server.stop()


def login(page, url: str, name: str, password: str | None = None) -> None:
    """stepgate's login form (ui/web/login.py): fill it and wait for the app's tabs.

    Without a password, the name's own (f"{name}-password"): in local mode a new name is created with
    it (a password has 8 characters or more), and a name made with `users add --no-password` takes any.
    """
    page.goto(url)
    page.get_by_label("username").fill(name)
    page.get_by_label("password").fill(password if password is not None else f"{name}-password")
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#panels", timeout=30_000)
    # The header and the role's tabs arrive in one load event: once the header shows, the tabs are set.
    page.wait_for_selector("#logout-link", timeout=30_000)


def logout(page) -> None:
    """The header's "log out" button (a POST from the page), then wait for the login form."""
    page.locator("#logout-link").click()
    page.wait_for_selector("#login-form", timeout=30_000)


def upload(page, elem_id: str, path: Path | str) -> None:
    """Put a file in a File component and wait until Gradio has it: a button pressed while the upload
    is under way sends no file. The finished row is `.file-preview` (it writes the name's stem and its
    extension in two spans, so the stem is what to look for); the row shown during the upload names the
    whole file and is not it."""
    page.locator(f"#{elem_id} input[type=file]").set_input_files(str(path))
    expect(page.locator(f"#{elem_id} .file-preview")).to_contain_text(Path(path).stem, timeout=30_000)


def answered(response) -> bool:
    """A panel event's answer: the whole reply of an unqueued event, the stream's of a queued one."""
    return "/gradio_api/run/" in response.url or "/gradio_api/queue/data" in response.url


def pick(page, elem_id: str, option: str, *, answered_on: str | None = None) -> None:
    """Choose `option` in the dropdown `#elem_id`, as a person does: open it, click the option.

    `answered_on`: the element that shows a queued event in progress (a panel's status line). The
    dropdown shows the option at once, long before the panel answers; a click made in between lands on
    what the answer then replaces (a new item opens blank). So wait for the reply to be applied: a quick
    event's (ui/kit/annotation.quick_events) once the page's busy mark counts it settled (ui/js/busy.js),
    a queued one's once that element's progress is gone."""
    page.locator(f"#{elem_id} input").click()
    if answered_on is None:
        page.get_by_role("option", name=option, exact=True).click()
        return
    applied = page.evaluate("window.stepgateBusy.settled")
    with page.expect_response(answered) as reply:
        page.get_by_role("option", name=option, exact=True).click()
    if "/gradio_api/run/" in reply.value.url:
        page.wait_for_function("n => window.stepgateBusy.settled > n", arg=applied)
    expect(page.locator(f"#{answered_on} [data-testid=status-tracker]:not(.hide)")).to_have_count(0)
    expect(page.locator(f"#{elem_id} input")).to_have_value(option)


def settled(page) -> None:
    """Wait until no quick event of the page is under way (ui/js/busy.js counts them): what they answer
    is on the page, and a click now lands on it rather than on what a late answer would replace."""
    page.wait_for_function("window.stepgateBusy && window.stepgateBusy.running === 0")


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Kept in test-artifacts/ for a reviewer; `full_page=False`: the screen only (~4x cheaper)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
