"""Faults a team meets: a full disk, a missing folder, a second process. Clear errors, nothing false acknowledged."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from bench.client import ApiError, StepgateClient
from bench.server import start_server
from services.imports import import_file
from store import Store, StoreOpenError, users
from tests.conftest import QWQ_FILE

pytestmark = pytest.mark.slow


def test_a_full_disk_refuses_labels_with_a_message_and_acknowledges_only_what_is_stored(
    tmp_path: Path,
) -> None:
    db = tmp_path / "full.duckdb"
    with Store(db) as store:
        import_file(store, QWQ_FILE, dataset="ee")
        users.add_user(store, "ann", "annotator", "ann-password")
        store.checkpoint()
    # No file the server writes may pass 256 KB: the write-ahead log fills "the disk" after some labels.
    server = start_server(db, "--no-demo", "--team", file_size_limit=256 * 1024)
    acknowledged: dict[str, int] = {}
    refusal = ""
    try:
        client = StepgateClient(server.url, "ann", "ann-password")
        payload = {"earliest_error": 0, "note": "x" * 3000}
        for _ in range(400):
            item = client.run("next_item", "ee")
            if item["item_id"] is None:
                break
            request_id = uuid.uuid4().hex
            try:
                result = client.run(
                    "submit_label", item["item_id"], item["version_id"], payload, request_id, 1.0
                )
            except ApiError as exc:
                refusal = str(exc)
                break
            acknowledged[request_id] = result["annotation_id"]
    finally:
        server.stop(kill=True)
    assert refusal, "the disk never filled up"
    assert "Nothing was saved" in refusal and "database" in refusal
    assert acknowledged
    with Store(db) as store:
        stored = dict(store.fetchall("SELECT request_id, id FROM annotations"))
    assert all(stored.get(rid) == aid for rid, aid in acknowledged.items())


def test_a_missing_or_unwritable_database_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreOpenError, match="does not exist"):
        Store(tmp_path / "missing" / "x.duckdb")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreOpenError):
        Store(blocker / "x.duckdb")
