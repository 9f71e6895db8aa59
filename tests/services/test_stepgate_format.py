"""stepgate's own format: the real PRMBench file (and CRYSTAL's images) out and back into a new database.

Export -> import into a new database -> export again is byte-identical, with versions, gating
states and the annotation log present, images embedded or beside the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from importers import ImportFormatError
from importers.records import ItemRecord
from services import annotate
from services.demo import DEMO_DIR
from services.exports import export, manifest_path
from services.imports import import_file
from store import Store
from store.bundles import BundleConflict
from store.datasets import get_dataset, update_settings
from store.items import get_item
from store.users import add_user
from store.versions import add_version
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _label(store: Store, name: str, dataset: str, n: int, payload: dict) -> None:
    user = add_user(store, name, "annotator")
    ds = get_dataset(store, dataset)
    assert ds is not None
    for i in range(n):
        work = annotate.next_item(store, user, ds)
        assert work is not None
        annotate.submit(
            store,
            annotator=user,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload=payload,
            request_id=f"{name}-{i}",
            seconds_spent=12.5 + i,
        )


@pytest.fixture
def full_store(store: Store) -> Store:
    """PRMBench with labels from two annotators and an edited item; CRYSTAL with its images."""
    import_file(store, PRMBENCH_FILE, dataset="prm")
    import_file(store, DEMO_DIR / "crystal_demo.jsonl", dataset="crystal")
    label = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
    _label(store, "ann", "prm", 5, label)
    _label(store, "bea", "prm", 3, {**label, "difficulty": "hard"})
    item_id = store.scalar("SELECT min(id) FROM items")
    old = get_item(store, item_id)
    assert old is not None
    edited = ItemRecord(
        external_id=old.external_id,
        question=old.question + " (edited)",
        steps={k: list(v) for k, v in old.steps.items()},
        error_steps=old.error_steps,
        modified_steps=old.modified_steps,
        error_type=old.error_type,
        rationale=old.rationale,
        meta=old.meta,
    )
    with store.writing() as tx:
        add_version(tx, item_id, edited, "edited")
    return store


def _counts(store: Store) -> tuple:
    return tuple(
        store.scalar(f"SELECT count(*) FROM {t}")
        for t in (
            "datasets",
            "items",
            "item_versions",
            "steps",
            "version_images",
            "annotations",
            "item_state",
        )
    )


@pytest.mark.parametrize("images", ["embedded", "paths"])
def test_export_import_export_is_byte_identical(full_store: Store, tmp_path: Path, images: str) -> None:
    first = tmp_path / "one" / "all.jsonl"
    first.parent.mkdir()
    written = export(full_store, "stepgate-jsonl", first, images=images)
    assert written.rows == 394 + 10

    with Store(tmp_path / "copy.duckdb", data_dir=tmp_path / "copy-data") as copy:
        outcome = import_file(copy, first)
        assert outcome.format == "stepgate" and outcome.annotations == 8
        assert _counts(copy) == _counts(full_store)
        second = tmp_path / "two" / "all.jsonl"
        second.parent.mkdir()
        export(copy, "stepgate-jsonl", second, images=images)
    assert second.read_bytes() == first.read_bytes()


def test_the_file_carries_lineage_states_and_the_log(full_store: Store, tmp_path: Path) -> None:
    out = tmp_path / "prm.jsonl"
    export(full_store, "stepgate-jsonl", out, dataset="prm")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    header = lines[0]
    assert (
        header["kind"] == "header"
        and header["stepgate_format"] == 1
        and header["filter"] == {"dataset": "prm"}
    )
    assert header["counts"]["items"] == 394 and header["counts"]["annotations"] == 8
    items = [x for x in lines if x["kind"] == "item"]
    edited = items[0]
    assert [(v["version"], v["parent_version"], v["reason"]) for v in edited["versions"]] == [
        (1, None, "imported"),
        (2, 1, "edited"),
    ]
    assert edited["versions"][1]["question"].endswith("(edited)")
    annotations = [x for x in lines if x["kind"] == "annotation"]
    assert {a["annotator"] for a in annotations} == {"ann", "bea"}
    assert all(a["seconds_spent"] >= 12.5 and a["created_at"] for a in annotations)
    assert {x["name"] for x in lines if x["kind"] == "annotator"} == {"ann", "bea"}
    manifest = json.loads(manifest_path(out).read_text())
    assert manifest["database"]["items"] == 394 and manifest["filter"] == {"dataset": "prm"}
    assert manifest["stepgate_version"] and manifest["exported_at"]


def test_without_the_log_and_into_a_database_that_has_the_dataset(full_store: Store, tmp_path: Path) -> None:
    out = tmp_path / "nolog.jsonl"
    export(full_store, "stepgate-jsonl", out, dataset="prm", with_log=False)
    assert '"kind": "annotation"' not in out.read_text()
    with pytest.raises(BundleConflict, match="already exists"):
        import_file(full_store, out)
    outcome = import_file(full_store, out, dataset="prm-copy")
    assert outcome.added == 394 and outcome.new_versions == 1


def test_its_own_log_back_into_the_same_database_is_refused_with_why(
    full_store: Store, tmp_path: Path
) -> None:
    out = tmp_path / "withlog.jsonl"
    export(full_store, "stepgate-jsonl", out, dataset="prm")
    before = full_store.scalar("SELECT count(*) FROM annotations")
    datasets = full_store.scalar("SELECT count(*) FROM datasets")
    with pytest.raises(BundleConflict, match=r"label\(s\) of the file's annotation log are in this database"):
        import_file(full_store, out, dataset="prm-again")
    assert full_store.scalar("SELECT count(*) FROM annotations") == before > 0
    assert full_store.scalar("SELECT count(*) FROM datasets") == datasets


def test_items_jsonl_says_to_use_the_stepgate_format(full_store: Store, tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    export(full_store, "items-jsonl", out)
    with Store(tmp_path / "other.duckdb") as other, pytest.raises(ImportFormatError, match="stepgate-jsonl"):
        import_file(other, out)


def test_a_tampered_image_refuses_the_whole_file(full_store: Store, tmp_path: Path) -> None:
    out = tmp_path / "crystal.jsonl"
    export(full_store, "stepgate-jsonl", out, dataset="crystal")
    lines = out.read_text().splitlines()
    image = next(i for i, x in enumerate(lines) if '"kind": "image"' in x)
    obj = json.loads(lines[image])
    obj["sha256"] = "0" * 64
    lines[image] = json.dumps(obj)
    out.write_text("\n".join(lines) + "\n")
    with Store(tmp_path / "other.duckdb") as other:
        with pytest.raises(ImportFormatError, match="do not match"):
            import_file(other, out)
        assert other.scalar("SELECT count(*) FROM items") == 0


def test_gold_marks_travel_in_the_bundle_and_come_back(full_store: Store, tmp_path: Path) -> None:
    from services import gold as gold_service
    from store import gold as gold_store

    lead = add_user(full_store, "lead", "admin")
    settled = full_store.df(
        "SELECT i.external_id FROM item_state s JOIN items i ON i.id = s.item_id "
        "JOIN datasets d ON d.id = s.dataset_id WHERE d.name = 'prm' AND s.status <> 'open' ORDER BY i.id"
    )["external_id"].tolist()
    assert len(settled) >= 2
    gold_service.mark_items(full_store, lead, "prm", settled[:2])
    manual = {"original": "incorrect"}
    gold_service.mark_items(full_store, lead, "prm", settled[2:3], label=manual)
    update_settings(full_store, "prm", {"gold_percent": 100})
    _label(full_store, "cy", "prm", 8, {"original": "incorrect", "modification": "reasonable"})
    before = gold_store.gold_answers(full_store, get_dataset(full_store, "prm").id)
    assert len(before) > 0  # cy answered gold items after they were marked

    first = tmp_path / "one.jsonl"
    export(full_store, "stepgate-jsonl", first)
    lines = [json.loads(x) for x in first.read_text().splitlines()]
    marked = {x["external_id"]: x["gold"] for x in lines if x["kind"] == "item" and "gold" in x}
    assert set(marked) == set(settled[:3])
    assert marked[settled[2]]["label"] == manual and marked[settled[2]]["source"] == "manual"
    assert {g["marked_by"] for g in marked.values()} == {"lead"}
    assert lines[0]["counts"]["gold"] == 3

    with Store(tmp_path / "copy.duckdb") as copy:
        import_file(copy, first)
        ds = get_dataset(copy, "prm")
        back = {g.external_id: g for g in gold_store.gold_items(copy, ds.id)}
        assert set(back) == set(settled[:3])
        assert back[settled[2]].label == manual and back[settled[0]].marked_by == "lead"
        after = gold_store.gold_answers(copy, ds.id)
        # the same labels are answers (not votes) in the copy
        assert sorted(after["external_id"]) == sorted(before["external_id"])
        assert len(gold_store.gold_answer_ids(copy, ds.id)) == len(before)
        second = tmp_path / "two.jsonl"
        export(copy, "stepgate-jsonl", second)
    assert second.read_bytes() == first.read_bytes()


def test_a_bundle_with_a_bad_gold_mark_is_refused_whole(full_store: Store, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    export(full_store, "stepgate-jsonl", path, dataset="prm")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    item = next(x for x in lines if x["kind"] == "item")
    item["gold"] = {
        "label": {"original": "correct"},
        "source": "rumour",
        "version": 1,
        "marked_at": "2026-01-01T00:00:00",
    }
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with Store(tmp_path / "copy.duckdb") as copy:
        with pytest.raises(ImportFormatError, match="gold source"):
            import_file(copy, path)
        assert copy.scalar("SELECT count(*) FROM items") == 0
