"""Agreement studies travel in stepgate's own format: a sequential study with two batches, its raters,
assignments and its own labels (a correction included) go out and come back byte-identical, and its
report gives the same figures in the new database. A bad study line refuses the whole file."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from importers import ImportFormatError
from services import annotate
from services.access import OPERATOR
from services.exports import ItemSelection, export
from services.imports import import_file
from services.leasing import leases_of
from services.reports import build_study_report
from services.studies import Sequential, draw_study, study_status
from store import Store, studies, users, work
from store.datasets import get_dataset
from store.errors import StoreRequestError
from tests.gold_support import GOOD, WRONG, label
from tests.services.test_studies import DATASET, _annotator

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _rate(store: Store, who: users.Annotator, n: int, payloads: list[dict]) -> list[int]:
    """``who`` takes ``n`` study items (the panel's call) and labels them; the item ids."""
    dataset = get_dataset(store, DATASET)
    done = []
    for i in range(n):
        got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
        assert got is not None and got.state == "new"
        annotate.submit(
            store,
            annotator=who,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=payloads[i % len(payloads)],
            request_id=str(uuid.uuid4()),
            seconds_spent=10.0 + i,
            first_label=True,
        )
        done.append(got.item.item_id)
    return done


@pytest.fixture
def study_store(demo_store: Store) -> Store:
    """ann keeps 12 items; lead draws a sequential study (batches of 3, cap 9) rated by bea and cid;
    batch 1 is labelled (bea corrects one label), so batch 2 is drawn, and bea labels one of it."""
    _annotator(demo_store, "ann")
    label(demo_store, "ann", 12, GOOD)
    lead = _annotator(demo_store, "lead", "admin")
    bea, cid = _annotator(demo_store, "bea"), _annotator(demo_store, "cid")
    draw_study(
        demo_store,
        lead,
        dataset=DATASET,
        name="seq",
        n_items=9,
        raters=2,
        stratify_by=None,
        rater_names=["bea", "cid"],
        sequential=Sequential(target=0.1, batch=3),
    )
    first = _rate(demo_store, bea, 3, [GOOD, WRONG])
    _rate(demo_store, cid, 3, [GOOD])
    study = studies.get_study(demo_store, "seq")
    assert study is not None and study.batches == 2
    item = first[1]
    version = demo_store.scalar("SELECT current_version_id FROM items WHERE id = ?", [item])
    annotate.submit(
        demo_store,
        annotator=bea,
        item_id=item,
        version_id=version,
        payload=GOOD,
        request_id="bea-correction",
        seconds_spent=4.0,
    )
    _rate(demo_store, bea, 1, [WRONG])
    assert demo_store.scalar("SELECT count(*) FROM study_labels") == 8
    return demo_store


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _figures(store: Store) -> tuple:
    report, progress = build_study_report(store, "seq", n_boot=50)
    status = study_status(store, OPERATOR, "seq")
    return (
        report.agreement.to_json(),
        {k: v.to_json() if hasattr(v, "to_json") else str(v) for k, v in report.pairwise.items()},
        report.annotators,
        {k: str(v) for k, v in progress.items()},
        status.note,
        status.batches.to_json(),
    )


def test_a_sequential_study_and_its_labels_move_byte_identical_with_the_same_report(
    study_store: Store, tmp_path: Path
) -> None:
    first = tmp_path / "one.jsonl"
    export(study_store, "stepgate-jsonl", first)
    lines = _lines(first)
    (study,) = [x for x in lines if x["kind"] == "study"]
    assert study["name"] == "seq" and study["dataset"] == DATASET and study["own_labels"] is True
    assert study["rule"]["batch"] == 3 and study["rule"]["cap"] == 9 and study["rule"]["stopped_by"] is None
    assert study["rater_names"] == ["bea", "cid"] and study["created_by"] == "lead"
    assert [i["batch"] for i in study["items"]] == [1, 1, 1, 2, 2, 2]
    assert len(study["assignments"]) == 12 and {a["rater"] for a in study["assignments"]} == {"bea", "cid"}
    labels = [x for x in lines if x["kind"] == "study_label"]
    assert len(labels) == 8 and "bea-correction" in [x["request_id"] for x in labels]
    assert lines.index(study) > max(i for i, x in enumerate(lines) if x["kind"] in ("item", "annotation"))
    assert lines[0]["counts"]["studies"] == 1 and lines[0]["counts"]["study_labels"] == 8
    assert {"bea", "cid", "lead"} <= {x["name"] for x in lines if x["kind"] == "annotator"}
    assert "study_id" not in first.read_text() and '"id"' not in first.read_text()
    before = _figures(study_store)

    with Store(tmp_path / "copy.duckdb", data_dir=tmp_path / "copy-data") as copy:
        outcome = import_file(copy, first)
        assert "1 agreement study(ies) with 8 study label(s)" in outcome.summary()
        assert _figures(copy) == before
        moved = studies.get_study(copy, "seq")
        assert moved is not None and moved.batches == 2 and moved.rule is not None
        second = tmp_path / "two.jsonl"
        export(copy, "stepgate-jsonl", second)
    assert second.read_bytes() == first.read_bytes()


def test_without_the_log_the_study_travels_without_its_labels(study_store: Store, tmp_path: Path) -> None:
    out = tmp_path / "nolog.jsonl"
    export(study_store, "stepgate-jsonl", out, with_log=False)
    lines = _lines(out)
    assert [x["name"] for x in lines if x["kind"] == "study"] == ["seq"]
    assert not [x for x in lines if x["kind"] in ("study_label", "annotation")]
    # the people the study names are in the file, though the log is not
    assert {x["name"] for x in lines if x["kind"] == "annotator"} == {"bea", "cid", "lead"}
    with Store(tmp_path / "copy.duckdb") as copy:
        import_file(copy, out)
        moved = studies.get_study(copy, "seq")
        assert moved is not None and moved.n_items == 6
        assert copy.scalar("SELECT count(*) FROM study_labels") == 0
        assert copy.scalar("SELECT count(*) FROM study_assignments") == 12


def test_a_filter_carries_a_study_only_when_all_its_items_are_in_it(
    study_store: Store, tmp_path: Path
) -> None:
    study = studies.get_study(study_store, "seq")
    items = [int(i) for i in studies.study_items(study_store, study.id)["item_id"]]
    part = tmp_path / "part.jsonl"
    export(study_store, "stepgate-jsonl", part, items=ItemSelection(items[:4]))
    assert not [x for x in _lines(part) if x["kind"] in ("study", "study_label")]
    whole = tmp_path / "whole.jsonl"
    export(study_store, "stepgate-jsonl", whole, items=ItemSelection(items))
    lines = _lines(whole)
    assert [x["name"] for x in lines if x["kind"] == "study"] == ["seq"]
    assert len([x for x in lines if x["kind"] == "study_label"]) == 8
    with Store(tmp_path / "copy.duckdb") as copy:
        import_file(copy, whole)
        assert copy.scalar("SELECT count(*) FROM study_labels") == 8


def _counts(store: Store) -> tuple:
    return tuple(
        store.scalar(f"SELECT count(*) FROM {t}")
        for t in ("datasets", "items", "annotations", "studies", "study_items", "study_labels", "annotators")
    )


def test_a_study_name_taken_in_the_target_refuses_the_file_naming_the_line(
    study_store: Store, tmp_path: Path
) -> None:
    out = tmp_path / "prm.jsonl"
    export(
        study_store, "stepgate-jsonl", out, dataset=DATASET, with_log=False
    )  # the log's ids are taken here
    number = next(n for n, x in enumerate(_lines(out), start=1) if x["kind"] == "study")
    before = _counts(study_store)
    with pytest.raises(StoreRequestError, match=rf"line {number}: a study named 'seq' already exists"):
        import_file(study_store, out, dataset="prm-copy")
    assert _counts(study_store) == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.update(dataset="nowhere"), "names dataset 'nowhere', not in the file"),
        (lambda s: s["items"][0].update(external_id="no-such-item"), "names item 'no-such-item'"),
        (lambda s: s["assignments"][0].update(rater="stranger"), "names annotator 'stranger'"),
        (lambda s: s.update(items="all"), "items must be a non-empty list"),
    ],
)
def test_a_bad_study_line_refuses_the_file_naming_it(
    study_store: Store, tmp_path: Path, change, message
) -> None:
    out = tmp_path / "bad.jsonl"
    export(study_store, "stepgate-jsonl", out)
    lines = _lines(out)
    number = next(n for n, x in enumerate(lines, start=1) if x["kind"] == "study")
    change(lines[number - 1])
    out.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))
    with Store(tmp_path / "copy.duckdb") as copy:
        with pytest.raises((StoreRequestError, ImportFormatError), match=rf"line {number}: .*{message}"):
            import_file(copy, out)
        assert _counts(copy) == (0, 0, 0, 0, 0, 0, copy.scalar("SELECT count(*) FROM annotators"))
        assert copy.scalar("SELECT count(*) FROM annotators") <= 1  # only what a new database has


@pytest.mark.parametrize(
    ("key", "message"),
    [("study", "a study label names study 'other'"), ("external_id", "a study label names item 'other'")],
)
def test_a_bad_study_label_line_is_refused(
    study_store: Store, tmp_path: Path, key: str, message: str
) -> None:
    out = tmp_path / "bad.jsonl"
    export(study_store, "stepgate-jsonl", out)
    lines = _lines(out)
    number = next(n for n, x in enumerate(lines, start=1) if x["kind"] == "study_label")
    lines[number - 1][key] = "other"
    out.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))
    with Store(tmp_path / "copy.duckdb") as copy:
        with pytest.raises(StoreRequestError, match=rf"line {number}: {message}"):
            import_file(copy, out)
        assert copy.scalar("SELECT count(*) FROM items") == 0


def test_a_study_drawn_before_own_labels_moves_and_still_reads_the_log(
    demo_store: Store, tmp_path: Path
) -> None:
    """A study of before migration 10 (own_labels false, no rule, raters or assignments, drawn from the
    command line: no creator) moves too; in the copy its report reads the moved annotation log."""
    from store.datasets import update_settings

    update_settings(demo_store, DATASET, {"annotators_per_item": 2})
    for name in ("ann", "bea"):
        _annotator(demo_store, name)
        label(demo_store, name, 4, GOOD)
    users.remove_user(demo_store, "bea")  # a removed annotator's labels move with them
    with demo_store.writing() as tx:
        tx.execute("INSERT INTO studies (dataset_id, name, raters, seed) VALUES (1, 'old', 2, 0)")
        tx.execute(
            "INSERT INTO study_items (study_id, item_id, stratum) SELECT 1, item_id, 'all' FROM "
            "(SELECT DISTINCT item_id FROM annotations) t"
        )
    first = tmp_path / "one.jsonl"
    export(demo_store, "stepgate-jsonl", first)
    (study,) = [x for x in _lines(first) if x["kind"] == "study"]
    assert study["own_labels"] is False and study["rule"] is None and study["created_by"] is None
    before = build_study_report(demo_store, "old", n_boot=50)[0].agreement.to_json()
    with Store(tmp_path / "copy.duckdb", data_dir=tmp_path / "copy-data") as copy:
        import_file(copy, first)
        report, progress = build_study_report(copy, "old", n_boot=50)
        assert report.agreement.to_json() == before and progress["items_done"] == 4
        assert copy.scalar("SELECT count(*) FROM annotators WHERE removed_at IS NOT NULL") == 1
        second = tmp_path / "two.jsonl"
        export(copy, "stepgate-jsonl", second)
    assert second.read_bytes() == first.read_bytes()
