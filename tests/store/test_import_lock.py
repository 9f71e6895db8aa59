"""A large import reads, checks and hashes its file without the write lock: annotators' submits go
on meanwhile, and the file is still imported whole or not at all."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path

import pytest

import services.imports as importing
from services import annotate
from services.imports import ImportRejected, import_file
from store import Store
from store.datasets import get_dataset
from store.users import add_user


def _lines(n: int, bad_at: int | None = None) -> str:
    rows = []
    for i in range(n):
        steps = [f"step {k} of item {i}: some text to read and hash" for k in range(8)]
        obj = {"id": f"big-{i}", "problem": f"Problem {i}", "steps": steps, "label": -1}
        rows.append("{not json" if i == bad_at else json.dumps(obj))
    return "\n".join(rows) + "\n"


def _labelled_dataset(store: Store, tmp_path: Path) -> tuple[object, object]:
    small = tmp_path / "small.jsonl"
    small.write_text(_lines(5))
    import_file(store, small, format="processbench", dataset="small")
    ds = get_dataset(store, "small")
    assert ds is not None
    return add_user(store, "ann", "annotator"), ds


def _import_in_background(store: Store, path: Path, dataset: str) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run() -> None:
        try:
            result["outcome"] = import_file(store, path, format="processbench", dataset=dataset)
        except Exception as exc:  # the test reads it
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def _wait_for_first_staged_chunk(folder: Path, thread: threading.Thread) -> None:
    """The import has read and staged its first chunk (a file in its staging folder) and reads on."""
    deadline = time.monotonic() + 120
    while not any(folder.glob("stepgate-import-*/*.arrow")):
        assert thread.is_alive(), "the import ended before a chunk was staged"
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_a_submit_during_a_large_import_is_not_held_up_by_it(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user, ds = _labelled_dataset(store, tmp_path)
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    monkeypatch.setattr(importing, "_CHUNK", 500)  # many chunks: the file is still being read
    big = tmp_path / "big.jsonl"
    big.write_text(_lines(40_000))
    thread, result = _import_in_background(store, big, "big")
    try:
        _wait_for_first_staged_chunk(staging, thread)
        work = annotate.next_item(store, user, ds)
        assert work is not None
        annotate.submit(
            store,
            annotator=user,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload={"earliest_error": -1},
            request_id="during-import",
            seconds_spent=3.0,
        )
        submitted_while_importing = thread.is_alive()
    finally:
        thread.join()
    assert "error" not in result
    assert submitted_while_importing, "the submit waited for the whole import"
    assert result["outcome"].added == 40_000
    assert store.scalar("SELECT count(*) FROM annotations WHERE request_id = 'during-import'") == 1
    assert store.scalar("SELECT count(*) FROM steps") == 40_005 * 8
    assert not list(staging.glob("stepgate-import-*")), "the staged chunks are removed"


def test_a_late_bad_line_stores_nothing_and_takes_no_write_lock(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _labelled_dataset(store, tmp_path)
    monkeypatch.setattr(importing, "_CHUNK", 500)
    path = tmp_path / "late.jsonl"
    path.write_text(_lines(5_000, bad_at=4_990))
    before = store.scalar("SELECT count(*) FROM items")
    holding = threading.Event()
    release = threading.Event()

    def hold_the_write_lock() -> None:
        with store.writing():
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=hold_the_write_lock)
    holder.start()
    try:
        holding.wait(10)
        # The whole file is read and refused while another write holds the lock: nothing waited for it.
        with pytest.raises(ImportRejected, match=r"late\.jsonl:4991"):
            import_file(store, path, format="processbench", dataset="late")
    finally:
        release.set()
        holder.join()
    assert get_dataset(store, "late") is None
    assert store.scalar("SELECT count(*) FROM items") == before
    assert store.scalar("SELECT count(*) FROM steps") == before * 8
