"""The tests' forked servers and commands (tests/app_forks.py) behave as processes of their own."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import requests

from bench.server import server_env, start_server
from tests.app_forks import AppForks, ForkedProcess, installed
from tests.browser_support import cli
from ui.web.control import control_path


def test_a_forked_server_serves_its_own_database_and_dies_by_kill_9(tmp_path: Path) -> None:
    forks = installed()
    assert forks is not None  # tests/conftest.py set the fork process
    assert forks.differences(server_env()) == []  # what earlier tests or libraries left in os.environ
    server = start_server(tmp_path / "forked.duckdb", "--no-demo")
    try:
        assert isinstance(server.process, ForkedProcess)
        assert requests.get(server.url + "/gradio_api/info", timeout=10).status_code == 401
        assert f"serving {tmp_path / 'forked.duckdb'}" in server.log.read_text()
    finally:
        server.stop(kill=True)
    assert server.process.returncode == -signal.SIGKILL  # reaped by this process, as its own child


def test_a_server_ends_by_sigterm_as_python_app_py_does(tmp_path: Path) -> None:
    db = tmp_path / "forked.duckdb"
    server = start_server(db, "--no-demo")
    control = control_path(db)
    assert control.exists()  # written by cmd_serve for the verbs beside a running app
    server.stop()
    assert server.process.returncode == 0
    assert not control.exists()  # cmd_serve's cleanup ran on SIGTERM


@pytest.mark.slow
def test_another_environment_or_a_cold_start_gets_a_process_of_its_own(tmp_path: Path) -> None:
    env = server_env()
    forks = AppForks(env)
    assert forks.accepts({**env, "PYTEST_CURRENT_TEST": "another test"})
    assert forks.accepts({**env, "STEPGATE_DATA_DIR": "/elsewhere"})  # read when the app runs
    assert forks.accepts({**env, "KMP_INIT_AT_FORK": "FALSE"})  # set by torch in the test process
    assert not forks.accepts({**env, "GRADIO_TEMP_DIR": "/elsewhere"})  # Gradio reads it at import
    server = start_server(tmp_path / "cold.duckdb", "--no-demo", cold=True)
    try:
        assert not isinstance(server.process, ForkedProcess)
    finally:
        server.stop()


def test_a_forked_command_answers_as_python_app_py_does(tmp_path: Path) -> None:
    db = tmp_path / "commands.duckdb"
    forks = installed()
    assert forks is not None
    added = forks.run(
        ["users", "add", "ann", "--role", "annotator", "--no-password", "--db", str(db)], server_env(), 60
    )
    assert (added.returncode, added.stdout.strip(), added.stderr) == (
        0,
        "added ann (annotator, no password)",
        "",
    )
    listed = cli("users", "list", db=db)
    assert "ann" in listed.stdout
    refused = forks.run(["users", "add", "ann", "--role", "nobody", "--db", str(db)], server_env(), 60)
    assert refused.returncode == 2 and "invalid choice: 'nobody'" in refused.stderr  # argparse's own exit
