"""`python app.py ...` for the tests, forked from a process that has imported the app once.

Starting `python app.py serve` costs 7-10 s of CPU on CI's two busy cores, nearly all of it importing
Gradio, FastAPI and the app, and a command such as `users add` ~0.7 s; the suite starts ~80 servers
and runs ~150 commands. A fork process per pytest worker does those imports once, as `app.main`
would before serving (the deferred imports set up, the memory settings applied, nothing built, no
thread started), and forks each server or command from there: the child runs what `python app.py`
runs (`app.run_script`) with the request's arguments, working directory, environment, output files and
file size limit, so the app parses its arguments, builds its Blocks, opens its database and serves or
answers exactly as the README's command does.

Each fork is a real process of its own (kill -9 kills it) and a child of the pytest worker: the fork
process forks twice and the worker is a subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so the fork is
reparented to it and the worker waits for it and reads its exit status as for any child.

Not used where a start itself is measured or checked (`start_server(cold=True)`, and the command-line
tests that run `subprocess` themselves), for any other launcher, or when the request's environment
differs from the fork process's own in more than `_VARYING`: then a process of its own, as without this
module.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from bench.server import current_starter, limit_file_size

__all__ = ["AppForks", "ForkedProcess", "installed", "serve_forks"]

ROOT = Path(__file__).resolve().parent.parent
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
# What may differ from the fork process's environment (prefixes), each read when the app runs, not at
# import: pytest's name of the current test; the app's own variables (app.build_parser, commands); the
# AWS credentials tests/s3_support.py sets for a module (boto reads them when a client is made); and
# what libraries set in the test process itself as they load (torch: KMP_INIT_AT_FORK,
# TORCHINDUCTOR_CACHE_DIR; KMP_DUPLICATE_LIB_OK; Gradio's HF_HUB_DISABLE_TELEMETRY when a test builds
# Blocks with analytics off), which the app's own imports and Blocks set alike; and the mode a test
# gives tests/fake_generator.py, read by that command when the app runs it.
_VARYING = (
    "PYTEST_CURRENT_TEST",
    "STEPGATE_",
    "AWS_",
    "KMP_",
    "TORCHINDUCTOR_",
    "HF_HUB_DISABLE_TELEMETRY",
    "FAKE_GENERATOR_",
)


def installed() -> AppForks | None:
    """The forks `bench.server.use_starter` was given (tests/conftest.py), for the commands of
    tests/browser_support.cli too; None where servers start as processes of their own."""
    starter = current_starter()
    return starter if isinstance(starter, AppForks) else None


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


class AppForks:
    """The pytest worker's side: starts the fork process on first use and asks it for forks."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = dict(env)
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:  # pragma: no cover - Linux only
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")

    def accepts(self, env: dict[str, str]) -> bool:
        """True when the app can be forked with this environment (else: a process of its own)."""
        return not self.differences(env)

    def differences(self, env: dict[str, str]) -> list[str]:
        """The variables whose difference from the fork process's environment keeps the app from being forked."""
        mine, theirs = _comparable(self._env), _comparable(env)
        return sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))

    def start(
        self, args: list[str], env: dict[str, str], log: Path, file_size_limit: int | None
    ) -> ForkedProcess:
        """`python app.py serve ...` (args from "serve"), its output and errors into `log`."""
        return self._fork(
            {"args": args, "env": env, "out": str(log), "err": str(log), "limit": file_size_limit}
        )

    def run(self, args: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        """`python app.py ARGS` to its end, as `subprocess.run(..., capture_output=True, text=True)`
        gives it (its output and errors pass through two files)."""
        with tempfile.TemporaryDirectory(prefix="stepgate-command-") as folder:
            out, err = Path(folder) / "out", Path(folder) / "err"
            process = self._fork({"args": args, "env": env, "out": str(out), "err": str(err), "limit": None})
            try:
                code = process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
            return subprocess.CompletedProcess(["app.py", *args], code, out.read_text(), err.read_text())

    def _fork(self, request: dict[str, Any]) -> ForkedProcess:
        request["cwd"] = str(ROOT)
        with self._lock:
            process = self._process
            if process is None or process.poll() is not None:
                process = self._process = subprocess.Popen(
                    [sys.executable, "-c", "from tests.app_forks import serve_forks; serve_forks()"],
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
            raise RuntimeError(f"the fork process exited with {process.wait()} before forking")
        return ForkedProcess(json.loads(answer)["pid"])

    def close(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                assert self._process.stdin is not None
                self._process.stdin.close()  # its loop ends at the end of its input
                self._process.wait(timeout=30)
            self._process = None


def _comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith(_VARYING)}


def serve_forks() -> None:
    """The fork process: import what `app.main` imports before serving, then fork the app per line."""
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
        pid = _fork_app(json.loads(line), app)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


def _fork_app(request: dict[str, Any], app: Any) -> int:
    """Fork twice: the server's parent exits at once, so the server is reparented to the subreaper."""
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read_end)
        server = os.fork()
        if server == 0:
            os.close(write_end)
            _run_app(request, app)  # never returns
        os.write(write_end, str(server).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        pid = int(pipe.read())
    os.waitpid(middle, 0)
    return pid


def _run_app(request: dict[str, Any], app: Any) -> None:
    """In the fork: the request's output, limits, directory and environment, then what `python app.py`
    runs; an exception goes up through the fork process's frames and ends the interpreter with it."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - not the fork process's buffer of requests
        for fd, path in ((1, request["out"]), (2, request["err"])):
            file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(file, fd)
            os.close(file)
        if request["limit"]:
            limit_file_size(request["limit"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["app.py", *request["args"]]
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    try:
        app.run_script()  # a server leaves by os._exit itself (app.exit_now); a command by SystemExit
    except SystemExit as stop:
        # Without the interpreter's teardown, as a server leaves: collecting the fork process's heap
        # (Gradio and all it imported) took ~0.5 s of a command's ~0.6 s. Everything the command
        # opened it has closed on the way out (its `finally` blocks ran with the SystemExit).
        code = stop.code
        if code is not None and not isinstance(code, int):  # sys.exit("message"), as Python shows it
            print(code, file=sys.stderr)
            code = 1
        app.exit_now(code or 0)
