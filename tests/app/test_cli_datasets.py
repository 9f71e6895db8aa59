"""`python app.py datasets archive|restore|remove NAME` as an operator runs it (issue 29)."""

from __future__ import annotations

from pathlib import Path

from tests.browser_support import app_py, cli
from tests.conftest import PRMBENCH_FILE, QWQ_FILE


def test_operator_archives_restores_and_removes_a_wrong_import(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db)
    cli("import", str(QWQ_FILE), "--dataset", "wrong", db=db)
    assert "archived wrong" in cli("datasets", "archive", "wrong", db=db).stdout
    listed = cli("datasets", "list", db=db).stdout.splitlines()
    assert any(line.startswith("wrong\t") and "\tarchived\t" in line for line in listed)
    assert not any(line.startswith("prm\t") and "archived" in line for line in listed)
    assert "restored wrong" in cli("datasets", "restore", "wrong", db=db).stdout
    refused = app_py("datasets", "remove", "wrong", "--db", str(db))
    assert refused.returncode == 1
    assert "Removing 'wrong' deletes for good: 174 items, 174 versions" in refused.stdout
    assert "nothing removed: give --export PATH" in refused.stdout
    assert "wrong\t" in cli("datasets", "list", db=db).stdout  # still there
    out = tmp_path / "wrong.jsonl"
    done = cli("datasets", "remove", "wrong", "--export", str(out), db=db).stdout
    assert f"removed wrong (exported to {out} first)" in done
    assert out.stat().st_size > 0
    listed = cli("datasets", "list", db=db).stdout
    assert "wrong\t" not in listed and "prm\t" in listed
