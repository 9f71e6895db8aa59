"""The command line as a user runs it: help, import, users, datasets, export, and its error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from services.leasing import leases_of
from tests.browser_support import ROOT, app_py, cli
from tests.conftest import PRMBENCH_FILE, QWQ_FILE


def test_help_documents_every_verb_and_option() -> None:
    top = app_py("--help").stdout
    for verb in ("serve", "import", "export", "users", "datasets"):
        assert verb in top
    serve = app_py("serve", "--help").stdout
    for option in ("--db", "--host", "--port", "--team", "--no-demo", "--secure-cookies"):
        assert option in serve
    imp = app_py("import", "--help").stdout
    for option in ("--format", "--dataset", "--task", "--mapping", "--skip-bad", "--report", "--db"):
        assert option in imp
    assert "--out" in app_py("export", "--help").stdout


def test_import_users_settings_and_export_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    out = cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db).stdout
    assert "394 new item(s)" in out
    assert (
        "0 new item(s), 0 new version(s), 394 unchanged"
        in cli("import", str(PRMBENCH_FILE), "--dataset", "prm", db=db).stdout
    )
    cli("import", str(QWQ_FILE), "--dataset", "qwq", db=db)
    cli("users", "add", "lead", "--role", "admin", "--password", "lead-password", db=db)
    cli("users", "add", "ann", "--no-password", db=db)
    cli("users", "role", "ann", "adjudicator", db=db)
    listing = cli("users", "list", db=db).stdout
    assert "lead\tadmin\tpassword set" in listing and "ann\tadjudicator\tno password" in listing
    assert "scrypt" not in listing
    cli("datasets", "set", "qwq", "quorum=2", "max_annotators=4", db=db)
    datasets = cli("datasets", "list", db=db).stdout
    assert '"quorum": 2' in datasets and '"max_annotators": 4' in datasets
    target = tmp_path / "items.jsonl"
    assert (
        "wrote 394 row(s)"
        in cli("export", "--format", "items-jsonl", "--out", str(target), "--dataset", "prm", db=db).stdout
    )
    first = json.loads(target.read_text().splitlines()[0])
    assert first["external_id"] == "prm_test_p1_0:confidence" and first["status"] == "open"
    log = tmp_path / "log.parquet"
    cli("export", "--format", "log-parquet", "--out", str(log), db=db)
    assert pd.read_parquet(log).empty


def test_user_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    db = tmp_path / "err.duckdb"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(PRMBENCH_FILE.read_text().splitlines()[0] + "\n{oops\n")
    checks = [
        (("import", str(bad), "--db", str(db)), "bad.jsonl:2"),
        (("import", str(bad), "--mapping", "{nope", "--db", str(db)), "--mapping is not valid JSON"),
        (("users", "add", "x", "--role", "boss", "--db", str(db)), "invalid choice"),
        (("datasets", "set", "missing", "quorum=3", "--db", str(db)), "no dataset named 'missing'"),
        (("datasets", "set", "missing", "quorum", "--db", str(db)), "KEY=VALUE"),
        (
            ("export", "--format", "log-csv", "--out", str(tmp_path / "no" / "x.csv"), "--db", str(db)),
            "does not exist",
        ),
        (("serve", "--team", "--db", str(db), "--port", "1"), "team mode needs at least one annotator"),
    ]
    for args, message in checks:
        result = app_py(*args)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr, args
    assert "0 new" not in cli("datasets", "list", db=db).stdout  # nothing was imported


def test_an_annotator_export_holds_their_own_rows_only(demo_store, tmp_path: Path) -> None:
    import uuid

    import pytest

    from services.annotate import now_utc, submit
    from services.errors import NotAllowed
    from services.exports import export
    from store import users, work

    dataset = work.dataset_for(demo_store, "qwq-earliest-error", "earliest_error")
    for name in ("ann", "bob"):
        who = users.add_user(demo_store, name)
        found = work.next_item(demo_store, leases_of(demo_store), who, dataset, now_utc())
        submit(
            demo_store,
            annotator=who,
            item_id=found.item.item_id,
            version_id=found.item.version_id,
            payload={"earliest_error": 0},
            request_id=uuid.uuid4().hex,
        )
    written = export(demo_store, "log-csv", tmp_path / "mine.csv", annotator="ann")
    table = pd.read_csv(written.path)
    assert written.rows == 1 and set(table["annotator"]) == {"ann"}
    with pytest.raises(NotAllowed, match="only log formats"):
        export(demo_store, "items-jsonl", tmp_path / "all.jsonl", annotator="ann")


def test_the_encoder_option_and_the_study_verb_say_what_is_wrong(tmp_path: Path) -> None:
    assert "--encoder" in app_py("serve", "--help").stdout
    study = app_py("study", "--help").stdout
    for option in ("--dataset", "--edges", "--counts", "--seed", "--threshold", "--decision", "--annotators"):
        assert option in study
    bad = app_py("serve", "--encoder", str(tmp_path), "--db", str(tmp_path / "x.duckdb"), "--no-demo")
    assert bad.returncode != 0 and "not a sentence-transformers model folder" in bad.stderr
    examples = tmp_path / "examples.jsonl"
    examples.write_text(json.dumps({"example": "e1", "predicted": "not a list", "reference": []}) + "\n")
    wrong = app_py("study", str(examples), "--dataset", "s", "--db", str(tmp_path / "y.duckdb"))
    assert wrong.returncode == 1 and "must be lists of steps" in wrong.stderr


def test_a_command_that_needs_no_table_answers_without_loading_pandas(tmp_path: Path) -> None:
    """pandas and pyarrow are most of a command's start-up: `users add` or `jobs list` defer them."""
    db = tmp_path / "lean.duckdb"
    probe = (
        "import sys, app\n"
        "from ui.web.deferred import is_loaded\n"
        "code = app.main(sys.argv[1:])\n"
        "print('loaded:', is_loaded('pandas'), is_loaded('pyarrow'))\n"
        "sys.exit(code)\n"
    )
    for args in (["users", "add", "ann", "--role", "annotator", "--no-password"], ["users", "list"]):
        result = subprocess.run(
            [sys.executable, "-c", probe, *args, "--db", str(db)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "loaded: False False" in result.stdout, (args, result.stdout)
    assert "ann" in cli("users", "list", db=db).stdout
