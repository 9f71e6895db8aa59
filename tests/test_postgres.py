"""PostgreSQL as a team runs it: several replicas starting together, the command line, clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store, StoreOpenError, users
from store.migrations import MIGRATIONS
from tests.browser_support import ROOT
from tests.conftest import PRMBENCH_FILE

_OPEN = (
    "import sys\nfrom store import Store\n"
    "with Store(sys.argv[1], data_dir=sys.argv[2]) as db:\n"
    "    print(db.scalar('SELECT count(*) FROM schema_migrations'))\n"
)


def test_four_replicas_starting_together_apply_each_migration_once(postgres_url: str, tmp_path: Path) -> None:
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN, postgres_url, str(tmp_path / "files")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in replicas]
    assert [p.returncode for p in replicas] == [0, 0, 0, 0], [err for _, err in outputs]
    assert {out.strip() for out, _ in outputs} == {str(len(MIGRATIONS))}
    with Store(postgres_url, data_dir=tmp_path / "files") as db:
        versions = [r[0] for r in db.fetchall("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [v for v, _, _ in MIGRATIONS]


def test_an_unreachable_server_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    with pytest.raises(StoreOpenError) as caught:
        Store("postgresql://ann:s3cret@127.0.0.1:1/stepgate", data_dir=tmp_path / "files")
    assert "cannot connect to postgresql://ann:***@127.0.0.1:1/stepgate" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def _app(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "app.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_the_command_line_works_on_postgresql_by_flag_or_setting(postgres_url: str, tmp_path: Path) -> None:
    files = str(tmp_path / "files")
    out = _app(
        "import", str(PRMBENCH_FILE), "--dataset", "prm", "--db", postgres_url, "--data-dir", files, env={}
    )
    assert "394 new item(s)" in out.stdout
    setting = {"STEPGATE_DB": postgres_url, "STEPGATE_DATA_DIR": files}
    _app("users", "add", "lead", "--role", "admin", "--password", "lead-password", env=setting)
    _app("datasets", "set", "prm", "quorum=2", env=setting)
    assert '"quorum": 2' in _app("datasets", "list", env=setting).stdout
    assert "lead\tadmin\tpassword set" in _app("users", "list", "--db", postgres_url, env={}).stdout
    with Store(postgres_url, data_dir=files) as db:
        assert [u.name for u in users.list_users(db)] == ["lead"]
        assert db.scalar("SELECT count(*) FROM items") == 394
    assert not (ROOT / "postgresql:").exists()  # a URL is never taken for a file path
