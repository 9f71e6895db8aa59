"""The command line works while the app serves the same database: it hands the command to the app.

One process owns a DuckDB file; before, `import`, `users`, `datasets` and `export` refused with
"already open in another stepgate process" and a team had to stop annotation to add an annotator.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from bench.client import StepgateClient
from tests.browser_support import ROOT, cli, running

pytestmark = pytest.mark.browser  # starts the real app


def _app(*args: str, db: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "app.py"), *args, "--db", str(db)],
        cwd=cwd,
        env={**os.environ, "STEPGATE_PASSWORD": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_users_import_datasets_and_export_run_while_the_app_serves(tmp_path: Path) -> None:
    db = tmp_path / "live.duckdb"
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
    source = tmp_path / "pb.jsonl"
    rows = [
        {
            "id": f"p-{k}",
            "generator": "m",
            "problem": f"What is {k}+{k}?",
            "steps": [f"{k}+{k}={2 * k}", "Done."],
            "final_answer_correct": True,
            "label": -1,
        }
        for k in range(5)
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with running(db, "--no-demo", "--team") as server:
        control = db.with_name(db.name + ".files") / "control.json"
        assert stat.S_IMODE(control.stat().st_mode) == 0o600  # the token is the owner's only
        added = _app(
            "users", "add", "zed", "--role", "annotator", "--password", "zed-password-1", db=db, cwd=tmp_path
        )
        assert added.returncode == 0 and "added zed (annotator)" in added.stdout, added.stderr
        StepgateClient(server.url, "zed", "zed-password-1")  # the app knows zed at once
        again = _app("users", "add", "zed", "--password", "zed-password-1", db=db, cwd=tmp_path)
        assert again.returncode == 1 and "error:" in again.stderr and "zed" in again.stderr
        imported = _app("import", "pb.jsonl", "--dataset", "live-pb", db=db, cwd=tmp_path)  # a relative path
        assert imported.returncode == 0 and "5 new item(s)" in imported.stdout, imported.stderr
        listed = _app("datasets", "list", db=db, cwd=tmp_path)
        assert "live-pb\tearliest_error\t5 items" in listed.stdout
        changed = _app("datasets", "set", "live-pb", "quorum=2", db=db, cwd=tmp_path)
        assert changed.returncode == 0 and '"quorum": 2' in changed.stdout
        (tmp_path / "out").mkdir(exist_ok=True)
        exported = _app("export", "--format", "items-jsonl", "--out", "out/items.jsonl", db=db, cwd=tmp_path)
        assert exported.returncode == 0, exported.stderr
        assert len((tmp_path / "out" / "items.jsonl").read_text(encoding="utf-8").splitlines()) == 5
        # Without the token, or with a wrong one, the route runs nothing.
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            reply = requests.post(
                f"{server.url}/stepgate/control",
                json={"argv": ["users", "list"]},
                headers=headers,
                timeout=10,
            )
            assert reply.status_code == 403
    assert not control.exists()  # gone with the app
    offline = _app("users", "list", db=db, cwd=tmp_path)  # and the command opens the file itself again
    assert offline.returncode == 0 and "zed\tannotator" in offline.stdout
