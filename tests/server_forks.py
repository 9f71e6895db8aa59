"""Served apps for the tests, forked from a process that has imported the app once.

Starting `python app.py serve` costs 7-10 s of CPU on CI's two busy cores, nearly all of it importing
Gradio, FastAPI and the app; the suite starts ~80 servers. A forking process per pytest worker does
those imports once, as `app.main` would before serving (the deferred imports set up, the memory
settings applied, nothing built, no thread started), and forks each server from there: the child
runs `app.main(["serve", ...])` itself, with the request's working directory, environment, log file and
file size limit, so the app builds its Blocks, opens its database and serves exactly as the README's
command does.

Each server is a real process of its own (kill -9 kills it) and a child of the pytest worker: the
fork process forks twice and the worker is a subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so the server
is reparented to it and the worker waits for it and reads its exit status as for any child.

Not used where a start itself is measured or checked (`start_server(cold=True)`), for any other
launcher, or when the request's environment differs from the fork process's own in anything but the
current test's name: then the server is started as a process of its own, as without this module.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

__all__ = ["ForkedProcess", "ServerForks", "serve_forks"]

ROOT = Path(__file__).resolve().parent.parent
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_VARYING = ("PYTEST_CURRENT_TEST",)  # set by pytest per test; nothing reads it at import


class ForkedProcess:
    """A forked server, as the tests use a `subprocess.Popen`: pid, poll, wait, terminate, kill."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def _reaped(self, flags: int) -> bool:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, flags)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode is not None

    def poll(self) -> int | None:
        self._reaped(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._reaped(os.WNOHANG):
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"server {self.pid}", timeout or 0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ServerForks:
    """The pytest worker's side: starts the fork process on first use and asks it for servers."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = dict(env)
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:  # pragma: no cover - Linux only
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")

    def accepts(self, env: dict[str, str]) -> bool:
        """True when a server with this environment can be forked (else: a process of its own)."""
        return _comparable(env) == _comparable(self._env)

    def start(
        self, args: list[str], env: dict[str, str], log: Path, file_size_limit: int | None
    ) -> ForkedProcess:
        request = {"args": args, "env": env, "log": str(log), "cwd": str(ROOT), "limit": file_size_limit}
        with self._lock:
            process = self._process
            if process is None or process.poll() is not None:
                process = self._process = subprocess.Popen(
                    [sys.executable, "-c", "from tests.server_forks import serve_forks; serve_forks()"],
                    cwd=ROOT,
                    env=self._env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the fork process exited with {process.wait()} before forking a server")
        return ForkedProcess(json.loads(answer)["pid"])

    def close(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                assert self._process.stdin is not None
                self._process.stdin.close()  # its loop ends at the end of its input
                self._process.wait(timeout=30)
            self._process = None


def _comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in _VARYING}


def serve_forks() -> None:
    """The fork process: import what `app.main` imports before serving, then fork a server per line."""
    sys.path.insert(0, str(ROOT))
    from ui.web.deferred import NOT_IN_A_SERVER, defer_imports
    from ui.web.memory import apply_memory_settings

    defer_imports(refused=NOT_IN_A_SERVER)  # as app.main does for `serve`, before anything imports pandas
    apply_memory_settings()  # as cmd_serve does first: before Gradio and DuckDB load
    import app
    import commands  # noqa: F401 - what cmd_serve imports, loaded once here
    import services.compose
    import services.demo
    import services.jobs  # noqa: F401
    import ui.app
    import ui.web.server  # noqa: F401

    if threading.active_count() != 1:  # a fork keeps only the forking thread: none may hold a lock
        raise RuntimeError(f"threads started at import: {threading.enumerate()}")
    for line in sys.stdin:
        pid = _fork_server(json.loads(line), app.run_script)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


def _fork_server(request: dict[str, Any], run_script: Any) -> int:
    """Fork twice: the server's parent exits at once, so the server is reparented to the subreaper."""
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read_end)
        server = os.fork()
        if server == 0:
            os.close(write_end)
            _run_server(request, run_script)  # never returns
        os.write(write_end, str(server).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        pid = int(pipe.read())
    os.waitpid(middle, 0)
    return pid


def _run_server(request: dict[str, Any], run_script: Any) -> None:
    """In the server: the request's output, limits, directory and environment, then what `python app.py`
    runs; an exception goes up through the fork process's frames and ends the interpreter with it."""
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        if request["limit"]:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (request["limit"], request["limit"]))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["app.py", *request["args"]]
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    run_script()  # never returns: it exits as `python app.py serve ...` does
