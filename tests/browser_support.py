"""Start the real app as the README does and drive it in Debian's headless Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("STEPGATE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
ARTIFACTS = ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    url: str
    db: Path
    process: subprocess.Popen
    log: Path

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            if kill:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def cli(*args: str, db: Path, input_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `python app.py ...` as a user would; fails the test on a non-zero exit."""
    env = {**os.environ, **(input_env or {})}
    result = subprocess.run([sys.executable, "app.py", *args, "--db", str(db)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result


def start_server(db: Path, *extra: str, port: int | None = None, timeout: float = 120) -> Server:
    """`python app.py serve --db DB --port P` on 127.0.0.1; returns once it answers HTTP."""
    port = port or free_port()
    log = db.with_suffix(".server.log")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}
    handle = open(log, "w")  # noqa: SIM115 - stays open for the server's lifetime
    process = subprocess.Popen(
        [sys.executable, "app.py", "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), *extra],
        cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode}:\n{log.read_text()}")
        try:
            if requests.get(url + "/gradio_api/info", timeout=2).status_code in (200, 401):
                return Server(url, db, process, log)
        except requests.RequestException:
            pass
        time.sleep(0.25)
    process.kill()
    raise RuntimeError(f"the app did not answer within {timeout} s:\n{log.read_text()}")


@contextmanager
def running(db: Path, *extra: str) -> Iterator[Server]:
    server = start_server(db, *extra)
    try:
        yield server
    finally:
        server.stop()


def login(page, url: str, name: str, password: str = "") -> None:
    """Gradio's login form: fill it and wait for the app's tabs."""
    page.goto(url)
    page.get_by_label("username").fill(name)
    page.get_by_label("password").fill(password)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#panels", timeout=30_000)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
