"""A benchmark format writes the items of its own task only: refused for another task's dataset, and
over "all datasets" it takes the datasets of its task and names the ones it left out.

Before, `--format processbench` of a step-review dataset wrote rows with empty steps and no label, and
`--format prmbench` of an earliest-error dataset wrote empty processes: files that did not fit.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import pytest

from services import annotate
from services.errors import InvalidInput
from services.exports import export, formats_for_task, manifest_path
from store import Store
from store.datasets import get_dataset
from store.users import add_user
from tasks import EARLIEST_ERROR, QUALITY_GATE, STEP_REVIEW, task_of_format
from tests.browser_support import app_py, cli
from tests.security.support import call_event, config, event_of, login, team_server
from ui.context import TEAM, AppContext
from ui.kit.downloads import private_dir
from ui.panels import data

STEP_REVIEW_SET = "prmbench-step-review"  # the demo's datasets, one per task
EARLIEST_ERROR_SET = "qwq-earliest-error"
GATE_SET = "mathvista-quality-gate"


def test_each_benchmark_format_belongs_to_one_task_and_the_others_fit_every_task() -> None:
    assert task_of_format("prmbench") == STEP_REVIEW
    assert task_of_format("processbench") == task_of_format("processbench-all") == EARLIEST_ERROR
    assert task_of_format("crystal") == QUALITY_GATE
    for fmt in ("items-jsonl", "stepgate-jsonl", "log-csv", "log-parquet", "log-jsonl", "report-md"):
        assert task_of_format(fmt) is None
    fits = formats_for_task(STEP_REVIEW)
    assert "prmbench" in fits and "items-jsonl" in fits and "processbench" not in fits


@pytest.mark.parametrize(
    ("fmt", "dataset", "its_task"),
    [
        ("processbench", STEP_REVIEW_SET, "Step review"),
        ("processbench-all", GATE_SET, "Quality gate"),
        ("prmbench", EARLIEST_ERROR_SET, "Earliest error"),
        ("crystal", STEP_REVIEW_SET, "Step review"),
    ],
)
def test_a_format_of_another_task_is_refused_naming_the_task_and_the_formats_that_fit(
    demo_store: Store, tmp_path: Path, fmt: str, dataset: str, its_task: str
) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(InvalidInput) as refused:
        export(demo_store, fmt, out, dataset=dataset)
    message = str(refused.value)
    assert f"holds {its_task} items" in message and repr(dataset) in message
    assert "items-jsonl" in message and fmt not in message.split("formats that fit it are")[1]
    assert not out.exists() and not manifest_path(out).exists()


def test_all_datasets_takes_the_formats_task_only_and_names_the_rest(
    demo_store: Store, tmp_path: Path
) -> None:
    ann = add_user(demo_store, "ann", "annotator")
    step_review = get_dataset(demo_store, STEP_REVIEW_SET)
    for n in range(2):  # two samples kept: prmbench writes the kept ones
        work = annotate.next_item(demo_store, ann, step_review)
        assert work is not None
        annotate.submit(
            demo_store,
            annotator=ann,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload={"original": "correct", "modification": "reasonable", "difficulty": "easy"},
            request_id=f"kept-{n}",
            seconds_spent=3.0,
        )
    out = tmp_path / "prm.jsonl"
    written = export(demo_store, "prmbench", out, dataset=None)
    assert written.left_out == (EARLIEST_ERROR_SET, GATE_SET)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert written.rows == len(lines) == 2
    assert all(line["original_process"] for line in lines)  # no empty process from another task
    manifest = json.loads(manifest_path(out).read_text(encoding="utf-8"))
    assert manifest["left_out"]["datasets"] == [EARLIEST_ERROR_SET, GATE_SET]


def test_a_format_with_no_dataset_of_its_task_writes_nothing(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "none.jsonl"
    with pytest.raises(InvalidInput, match="no such dataset"):
        export(store, "processbench", out)
    assert not out.exists()


def test_the_command_line_refuses_and_says_what_it_left_out(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    cli("import", "demo_data/prmbench_demo.jsonl", "--dataset", "prm", db=db)
    cli("import", "demo_data/qwq_solutions_demo.jsonl", "--format", "qwq", "--dataset", "qwq", db=db)
    args = ["export", "--format", "processbench", "--dataset", "prm", "--out", str(tmp_path / "x")]
    refused = app_py(*args, "--db", str(db))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "'prm' holds Step review items" in refused.stderr and "prmbench" in refused.stderr
    assert not (tmp_path / "x").exists()
    done = cli("export", "--format", "processbench-all", "--out", str(tmp_path / "pb.jsonl"), db=db)
    assert "left out (not datasets of processbench-all's task): prm" in done.stdout


def test_the_data_panel_refuses_it_in_its_own_words(demo_store: Store) -> None:
    add_user(demo_store, "lead", "admin", "lead-password-1")
    ctx = AppContext(store=demo_store, mode=TEAM)
    status, file = data.on_export(ctx, "prmbench", EARLIEST_ERROR_SET, gr.Request(username="lead"))
    assert status.startswith("**Nothing exported.**") and "holds Earliest error items" in status
    assert "--" not in status and file["visible"] is False
    assert list(private_dir(ctx).iterdir()) == []


def test_the_data_panel_names_what_all_datasets_left_out_over_http(tmp_path: Path) -> None:
    with team_server(tmp_path / "team.duckdb", demo=True) as server:
        http = login(server.url, "lead")
        fn, _ = event_of(config(http, server.url), "data-export-run")
        status, reply = call_event(http, server.url, fn, ["crystal", ""])
        assert status == 200 and '"success":true' in reply, reply[-600:]
        assert "left out, not of this format's task: prmbench-step-review, qwq-earliest-error" in reply
