"""A large JSONL file is read in two parts at once (the second in another process): what is stored,
and every line number said, is what reading it in one go gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import services.imports as importing
from importers import ImportFormatError
from services.imports import ImportRejected, import_file
from store import Store


def _line(i: int, **changes: object) -> str:
    obj = {"id": f"p-{i}", "problem": f"Problem {i} \u00e9", "steps": [f"s{i}a", f"s{i}b", "c"], "label": 1}
    obj.update(changes)
    return json.dumps(obj)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _stored(store: Store) -> list[tuple]:
    return store.fetchall(
        "SELECT i.external_id, v.version, v.content_hash, v.question, v.meta, "
        "(SELECT array_agg(text ORDER BY position) FROM steps s WHERE s.version_id = v.id) "
        "FROM items i JOIN item_versions v ON v.id = i.current_version_id ORDER BY i.id"
    )


@pytest.fixture(params=["forked", "new interpreter"])
def in_two_parts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file is read in two parts: by a forked copy of the process, or (as in a server, which
    runs other threads) by `python -m services.import_part`."""
    monkeypatch.setattr(importing, "_SPLIT_BYTES", 1)
    monkeypatch.setattr(importing, "_FORK_SPLIT_BYTES", 1)
    monkeypatch.setattr(importing, "_CHUNK", 50)
    if request.param == "new interpreter":
        monkeypatch.setattr(importing, "_can_fork", lambda: False)


def _whole(tmp_path: Path, path: Path, **kwargs: object) -> tuple[Store, object]:
    """The same file imported in one go, into a store of its own."""
    whole = Store(tmp_path / "whole.duckdb")
    return whole, import_file(whole, path, format="processbench", dataset="d", **kwargs)  # type: ignore[arg-type]


@pytest.mark.usefixtures("in_two_parts")
def test_two_parts_store_what_one_go_stores(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [_line(i) for i in range(400)]
    lines[300:300] = ["", "   "]  # blank lines in the second part still count for line numbers
    lines[350] = _line(9999, label=-1, final_answer_correct=False)  # a warning in the second part
    path = _write(tmp_path / "two.jsonl", lines)
    parts: list = []
    finish = importing._finish_part
    monkeypatch.setattr(importing, "_finish_part", lambda *a: parts.append(finish(*a)) or parts[-1])
    outcome = import_file(store, path, format="processbench", dataset="d")
    assert parts[0]["records"] > 100, "the second part was read by the other process"
    assert outcome.added == 400
    assert [str(w) for w in outcome.warnings] == [f"two.jsonl:351: {outcome.warnings[0].reason}"]
    monkeypatch.setattr(importing, "_SPLIT_BYTES", 1 << 60)
    monkeypatch.setattr(importing, "_FORK_SPLIT_BYTES", 1 << 60)
    whole, in_one_go = _whole(tmp_path, path)
    try:
        assert [str(w) for w in in_one_go.warnings] == [str(w) for w in outcome.warnings]  # type: ignore[attr-defined]
        assert _stored(store) == _stored(whole)
    finally:
        whole.close()
    again = import_file(store, path, format="processbench", dataset="d")
    assert (again.added, again.new_versions, again.unchanged) == (0, 0, 400)


@pytest.mark.usefixtures("in_two_parts")
def test_a_bad_line_in_the_second_part_is_said_with_its_line_and_stores_nothing(
    store: Store, tmp_path: Path
) -> None:
    lines = [_line(i) for i in range(400)]
    lines[390] = '{"id": "p-390", "steps": ["a"], "label": 0}'  # no problem text
    lines[391] = "{broken"
    path = _write(tmp_path / "late.jsonl", lines)
    with pytest.raises(ImportRejected) as refused:
        import_file(store, path, format="processbench", dataset="d")
    assert [p.line for p in refused.value.problems] == [391, 392]
    assert refused.value.good == 398
    assert store.scalar("SELECT count(*) FROM items") == 0
    outcome = import_file(store, path, format="processbench", dataset="d", skip_bad=True)
    assert (outcome.added, [p.line for p in outcome.skipped]) == (398, [391, 392])
    assert store.scalar("SELECT count(*) FROM items") == 398


@pytest.mark.usefixtures("in_two_parts")
@pytest.mark.parametrize(
    ("at", "again", "said"),
    [
        (395, 3, "dup.jsonl:396: id: duplicate id 'p-3', first seen on line 4"),  # in both parts
        (398, 380, "dup.jsonl:399: id: duplicate id 'p-380', first seen on line 381"),  # in the second
    ],
)
def test_a_duplicate_id_is_said_on_its_later_line(
    store: Store, tmp_path: Path, at: int, again: int, said: str
) -> None:
    lines = [_line(i) for i in range(400)]
    lines[at] = _line(again)
    path = _write(tmp_path / "dup.jsonl", lines)
    with pytest.raises(ImportRejected, match=re.escape(said)):
        import_file(store, path, format="processbench", dataset="d")
    assert store.scalar("SELECT count(*) FROM items") == 0
    outcome = import_file(store, path, format="processbench", dataset="d", skip_bad=True)
    assert outcome.added == 399 and [p.line for p in outcome.skipped] == [at + 1]


@pytest.mark.usefixtures("in_two_parts")
def test_a_part_of_blank_lines_is_no_part_and_a_file_of_them_is_empty(store: Store, tmp_path: Path) -> None:
    path = _write(tmp_path / "blank.jsonl", [" " * 60] * 200 + [_line(i) for i in range(3)])
    outcome = import_file(store, path, format="processbench", dataset="d")
    assert outcome.added == 3
    empty = _write(tmp_path / "empty.jsonl", [" " * 60] * 200)
    with pytest.raises(ImportFormatError, match=r"empty\.jsonl: the file is empty"):
        import_file(store, empty, format="processbench", dataset="e")


@pytest.mark.parametrize("held", [16 << 20, 0], ids=["chunks in memory", "chunks on disk"])
def test_a_spill_gives_back_its_chunks_in_order_from_memory_or_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    import store.staging as staging
    from importers import parse_file

    monkeypatch.setattr(staging, "_HELD_BYTES", held)
    records = parse_file(_write(tmp_path / "s.jsonl", [_line(i) for i in range(30)]), "processbench").records
    chunks = [staging.stage_records(records[i : i + 10]) for i in range(0, 30, 10)]
    with staging.Spill() as spill:
        for chunk in chunks:
            spill.add(chunk)
        on_disk = sorted(p.name for p in spill.folder.iterdir())
        back = list(spill)
    assert (on_disk == []) == bool(held), on_disk  # a small file's chunks never touch the disk
    assert len(back) == 3 and spill.records == 30
    for got, staged in zip(back, chunks, strict=True):
        assert got.versions.equals(staged.versions) and got.steps.equals(staged.steps)
