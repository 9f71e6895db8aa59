"""`python app.py gold ...`: mark, import (all or nothing), list, calibration with its plot, alerts."""

from __future__ import annotations

import json
from pathlib import Path

from services.demo import populate_demo
from store import Store, users
from store.datasets import update_settings
from tests.browser_support import app_py, cli
from tests.gold_support import DATASET, GOOD, WRONG, label


def _db(tmp_path: Path) -> tuple[Path, list[str]]:
    db = tmp_path / "g.duckdb"
    with Store(db) as store:
        populate_demo(store)
        for name in ("ann", "bad"):
            users.add_user(store, name, "annotator")
        settled = label(store, "ann", 10, GOOD)
    return db, settled


def test_gold_verbs_mark_list_calibrate_and_alert(tmp_path: Path) -> None:
    db, settled = _db(tmp_path)
    assert "marked 6 item(s) gold" in cli("gold", "mark", DATASET, *settled[:6], db=db).stdout
    rows = tmp_path / "gold.jsonl"
    rows.write_text("".join(json.dumps({"id": ref, "answer": "correct"}) + "\n" for ref in settled[6:]))
    out = cli(
        "gold",
        "import",
        str(rows),
        "--dataset",
        DATASET,
        "--label-column",
        "answer",
        "--field",
        "original",
        db=db,
    ).stdout
    assert "marked 4 item(s) gold" in out
    listed = cli("gold", "list", DATASET, db=db).stdout
    assert (
        listed.count("consensus") == 6 and listed.count("import") == 4 and '{"original": "correct"}' in listed
    )
    with Store(db) as store:
        update_settings(store, DATASET, {"gold_percent": 50, "gold_alert_min_items": 5})
        label(store, "bad", 24, WRONG)
    plot = tmp_path / "calibration.png"
    out = cli("gold", "calibration", DATASET, "--plot", str(plot), db=db).stdout
    assert "10 gold item(s)" in out and "below 70%" in out and plot.stat().st_size > 5000
    assert "bad" in out and "True" in out
    assert cli("gold", "alerts", db=db).stdout.startswith("bad on prmbench-step-review")
    assert "1 item(s) are gold no more" in cli("gold", "unmark", DATASET, settled[0], db=db).stdout


def test_a_bad_gold_file_marks_nothing_and_says_where(tmp_path: Path) -> None:
    db, settled = _db(tmp_path)
    rows = tmp_path / "gold.jsonl"
    rows.write_text(
        json.dumps({"id": settled[0], "label": {"original": "correct"}})
        + "\n"
        + '{"id": "nope", "label": {"x": 1}}\n'
    )
    done = app_py("gold", "import", str(rows), "--dataset", DATASET, "--db", str(db))
    assert done.returncode == 1 and "'nope'" in done.stderr and "nothing was marked" in done.stderr
    assert "item" in cli("gold", "list", DATASET, db=db).stdout
    assert settled[0] not in cli("gold", "list", DATASET, db=db).stdout
