"""scripts/test.sh's second pass runs the modules its first pass named (tests/conftest.py,
pytest_deselected): a module holding a load test left out of that list would run in neither pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_first_pass_names_exactly_the_modules_holding_serial_tests(tmp_path: Path) -> None:
    listed = tmp_path / "serial-modules"
    listed.write_text("tests/perf/test_load.py\n")  # what an earlier call of the pass named is kept
    modules = ["tests/security/test_login.py", "tests/test_docs.py", "tests/perf/test_replicas_load.py"]
    pytest = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "--co", "-q"]
    run = subprocess.run(
        [*pytest, "-m", "not serial", *modules],
        cwd=ROOT,
        env={**os.environ, "STEPGATE_SERIAL_MODULES": str(listed)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert listed.read_text().split() == [
        "tests/perf/test_load.py",
        "tests/perf/test_replicas_load.py",
        "tests/security/test_login.py",
    ]
    assert not list(tmp_path.glob("serial-modules.*")), "a half-written list was left behind"
