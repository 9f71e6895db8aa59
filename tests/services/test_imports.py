"""Importing the real public files into a real database: counts, fields, idempotence, versions, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import ImportFormatError
from services.demo import DEMO_DATASETS, populate_demo
from services.imports import ImportRejected, import_file
from store import Store
from store.datasets import get_dataset
from store.items import get_item
from tests.conftest import PRMBENCH_FILE, QWQ_FILE

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _item(store: Store, dataset: str, external_id: str):
    d = get_dataset(store, dataset)
    assert d is not None
    item_id = store.scalar(
        "SELECT id FROM items WHERE dataset_id = ? AND external_id = ?", [d.id, external_id]
    )
    return get_item(store, item_id)


def test_prmbench_file_imports_every_item_with_zero_based_steps(store: Store) -> None:
    outcome = import_file(store, PRMBENCH_FILE, dataset="prm")
    assert (outcome.format, outcome.task, outcome.added) == ("prmbench", "step_review", 394)
    item = _item(store, "prm", "prm_test_p1_0:confidence")
    assert item.error_steps == [4, 5]  # the file says [5, 6], 1-based
    assert item.modified_steps == [4, 5]
    assert item.steps["modified"][4] == "This simplifies to $2p=0.58$. So $p=0.58$."
    assert item.steps["original"][4] == "This simplifies to $2p=0.58$. So $p=0.29$."
    assert item.error_type == "confidence"
    assert "confident hallucinations" in (item.rationale or "")


def test_prmbench_steps_past_the_end_are_kept_with_a_warning_in_the_report(store: Store) -> None:
    outcome = import_file(store, PRMBENCH_FILE, dataset="prm")
    assert outcome.warnings and outcome.report_path is not None
    report = outcome.report_path.read_text()
    assert "warning" in report and "prm" in outcome.summary()


def test_qwq_export_imports_solutions_and_verdicts(store: Store) -> None:
    outcome = import_file(store, QWQ_FILE, dataset="qwq")
    lines = sum(1 for line in QWQ_FILE.open() if line.strip())
    assert (outcome.format, outcome.task, outcome.added) == ("qwq", "earliest_error", lines)
    first = json.loads(QWQ_FILE.open().readline())
    item = _item(store, "qwq", first["data_id"])
    assert item.question.startswith("Three pencils and a jumbo eraser")
    assert item.steps["solution"][0].startswith("Step 1.")
    assert len(item.steps["solution"]) == len(first["custom"]["modified_process"])
    assert item.reference_answer == "29"
    assert item.final_answer_correct is True  # the human verdict "true"


def test_processbench_labels_stay_zero_based(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "pb.jsonl"
    rows = [
        {
            "id": "gsm-0",
            "generator": "m",
            "problem": "1+1?",
            "steps": ["a", "b", "c"],
            "final_answer_correct": False,
            "label": 1,
        },
        {
            "id": "gsm-1",
            "generator": "m",
            "problem": "2+2?",
            "steps": ["a", "b"],
            "final_answer_correct": True,
            "label": -1,
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    outcome = import_file(store, path, dataset="pb")
    assert (outcome.format, outcome.added) == ("processbench", 2)
    assert _item(store, "pb", "gsm-0").earliest_error == 1
    assert _item(store, "pb", "gsm-1").earliest_error == -1


def test_reimporting_the_same_file_adds_nothing(store: Store) -> None:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    again = import_file(store, PRMBENCH_FILE, dataset="prm")
    assert (again.added, again.new_versions, again.unchanged) == (0, 0, 394)
    assert store.scalar("SELECT count(*) FROM item_versions") == 394


def test_a_changed_item_becomes_a_new_version_with_its_parent(store: Store, tmp_path: Path) -> None:
    lines = PRMBENCH_FILE.read_text().splitlines()[:5]
    first = tmp_path / "v1.jsonl"
    first.write_text("\n".join(lines) + "\n")
    import_file(store, first, dataset="prm")
    row = json.loads(lines[0])
    row["reason"] = "a corrected rationale"
    second = tmp_path / "v2.jsonl"
    second.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    outcome = import_file(store, second, dataset="prm")
    assert (outcome.added, outcome.new_versions, outcome.unchanged) == (0, 1, 4)
    item = _item(store, "prm", f"{row['idx']}:{row['classification']}")
    assert (item.version, item.rationale) == (2, "a corrected rationale")
    parent, reason = store.fetchone(
        "SELECT parent_id, reason FROM item_versions WHERE id = ?", [item.version_id]
    )
    assert reason == "reimported"
    assert store.scalar("SELECT version FROM item_versions WHERE id = ?", [parent]) == 1


def _with_bad_lines(tmp_path: Path) -> Path:
    good = PRMBENCH_FILE.read_text().splitlines()[:3]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([good[0], "{not json", good[1], '{"idx": "x"}', good[2]]) + "\n")
    return path


def test_a_file_with_bad_lines_imports_nothing_and_says_which(store: Store, tmp_path: Path) -> None:
    path = _with_bad_lines(tmp_path)
    with pytest.raises(ImportRejected) as caught:
        import_file(store, path, format="prmbench", dataset="mixed")
    assert [p.line for p in caught.value.problems] == [2, 4]
    assert "mixed.jsonl:2" in str(caught.value)
    assert store.scalar("SELECT count(*) FROM items") == 0
    assert get_dataset(store, "mixed") is None


def test_skip_bad_imports_the_good_lines_and_writes_a_report(store: Store, tmp_path: Path) -> None:
    path = _with_bad_lines(tmp_path)
    report = tmp_path / "skipped.tsv"
    outcome = import_file(store, path, format="prmbench", dataset="mixed", skip_bad=True, report_path=report)
    assert outcome.added == 3
    text = report.read_text()
    assert "skipped\tmixed.jsonl\t2\t" in text and "skipped\tmixed.jsonl\t4\t" in text
    assert "2 bad line(s) skipped" in outcome.summary()


def test_unknown_format_and_missing_file_are_clear_errors(store: Store, tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match=r"nope\.jsonl"):
        import_file(store, tmp_path / "nope.jsonl")
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"a": 1}\n')
    with pytest.raises(ImportFormatError):
        import_file(store, plain)


def test_a_dataset_keeps_its_task(store: Store, tmp_path: Path) -> None:
    import_file(store, PRMBENCH_FILE, dataset="shared-name")
    with pytest.raises(ValueError, match="holds step_review items"):
        import_file(store, QWQ_FILE, dataset="shared-name")


def test_demo_population_imports_three_datasets_with_images(store: Store) -> None:
    outcomes = populate_demo(store)
    assert [o.dataset for o in outcomes] == [name for _, name, _ in DEMO_DATASETS]
    assert all(o.added > 0 for o in outcomes)
    gate = get_dataset(store, "mathvista-quality-gate")
    item = get_item(store, store.scalar("SELECT min(id) FROM items WHERE dataset_id = ?", [gate.id]))
    assert item.image_paths and Path(item.image_paths[0]).exists()
    assert item.steps["candidate"]
    assert populate_demo(store) == []  # first run only
