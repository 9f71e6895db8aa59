"""Start the real app as the README does (`python app.py serve ...`) and wait until it answers."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import requests

__all__ = [
    "ROOT",
    "Server",
    "ServerStarter",
    "current_starter",
    "free_port",
    "limit_file_size",
    "rss_mb",
    "server_env",
    "start_server",
    "use_starter",
]

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory (VmRSS) or its peak (VmHWM) of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_env() -> dict[str, str]:
    """A served app's environment: this process's, offline, without Gradio's analytics, unbuffered."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}


class ServerStarter(Protocol):
    """Another way to start `app.py serve` (tests/app_forks.py forks it from a process that has
    imported the app); `accepts` says whether it can for this environment."""

    def accepts(self, env: dict[str, str]) -> bool: ...

    def start(self, args: list[str], env: dict[str, str], log: Path, file_size_limit: int | None) -> Any: ...


_starters: list[ServerStarter] = []


def use_starter(starter: ServerStarter | None) -> None:
    """Start servers with `starter` from now on (None: as processes of their own again)."""
    _starters[:] = [] if starter is None else [starter]


def current_starter() -> ServerStarter | None:
    return _starters[0] if _starters else None


@dataclass
class Server:
    url: str
    db: Path
    process: subprocess.Popen
    log: Path
    started_in: float  # seconds from spawn until the app answered HTTP

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


def limit_file_size(limit: int) -> None:
    """From now on in this process, every write past `limit` bytes fails, as on a full disk (run in the
    served app before it starts)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def start_server(
    db: Path,
    *extra: str,
    port: int | None = None,
    timeout: float = 120,
    file_size_limit: int | None = None,
    launcher: tuple[str, ...] = ("app.py",),
    cold: bool = False,
) -> Server:
    """`python app.py serve --db DB --port P` on 127.0.0.1; returns once it answers HTTP. `launcher`:
    what python runs instead of app.py (bench/parts.py: the app with its timers in). `cold`: a process
    of its own even where a starter was set (`use_starter`), for what measures or checks a start."""
    port = port or free_port()
    log = db.with_suffix(".server.log")
    env = server_env()
    handle = open(log, "w")  # noqa: SIM115 - stays open for the server's lifetime
    started = time.perf_counter()
    args = ["serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), *extra]
    starter = current_starter() if launcher == ("app.py",) and not cold else None
    if starter is not None and starter.accepts(env):
        handle.close()
        process: Any = starter.start(args, env, log, file_size_limit)
    else:
        process = subprocess.Popen(
            [sys.executable, *launcher, *args],
            cwd=ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            preexec_fn=partial(limit_file_size, file_size_limit) if file_size_limit else None,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode}:\n{log.read_text()}")
        try:
            if requests.get(url + "/gradio_api/info", timeout=2).status_code in (200, 401):
                return Server(url, db, process, log, time.perf_counter() - started)
        except requests.RequestException:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the app did not answer within {timeout} s:\n{log.read_text()}")
