"""PostgreSQL as a team runs it: several replicas starting together, the command line, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from bench.client import ApiError, StepgateClient
from bench.server import start_server
from importers.records import ItemRecord
from services.annotate import submit
from services.imports import import_file
from services.leasing import leases_of
from store import Store, StoreOpenError, datasets, users
from store.annotations import count_annotations
from store.bulk import write_records
from store.items import get_item
from store.migrations import MIGRATIONS
from tests.browser_support import ROOT, app_py
from tests.conftest import PRMBENCH_FILE

T0 = datetime(2026, 1, 1, 12, 0, 0)
REVIEW = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


def _record(i: int) -> ItemRecord:
    return ItemRecord(
        external_id=f"item-{i}",
        question=f"question {i}",
        steps={"original": ["a", "b"], "modified": ["a", "c"]},
    )


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
    result = app_py(*args, input_env=env)
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


def test_two_replicas_claiming_at_once_never_hand_an_item_past_its_target(
    postgres_url: str, tmp_path: Path
) -> None:
    """Two Store objects on one database are two replicas: each keeps its own memory, and an
    annotator's claim and submit land on different replicas half of the time."""
    replicas = [Store(postgres_url, data_dir=tmp_path / "files") for _ in range(2)]
    first = replicas[0]
    with first.writing() as tx:
        write_records(tx, "shared", "step_review", [_record(i) for i in range(40)], "test")
    datasets.update_settings(first, "shared", {"annotators_per_item": 2})
    people = [users.add_user(first, f"annotator-{k}") for k in range(12)]
    holders: dict[int, set[int]] = {}
    over: list[tuple[int, set[int]]] = []
    errors: list[BaseException] = []
    guard = threading.Lock()

    def work(k: int, person: users.Annotator) -> None:
        try:
            for n in range(100):
                here, there = replicas[(k + n) % 2], replicas[(k + n + 1) % 2]
                claim = leases_of(here).claim_next(here, person.id, 1, lease_seconds=600, now=T0)
                if claim is None:
                    return
                with guard:
                    holders.setdefault(claim.item_id, set()).add(person.id)
                    if len(holders[claim.item_id]) > 2:
                        over.append((claim.item_id, set(holders[claim.item_id])))
                item = get_item(there, claim.item_id)
                submit(
                    there,
                    annotator=person,
                    item_id=item.item_id,
                    version_id=item.version_id,
                    payload=REVIEW,
                    request_id=f"{person.name}-{n}",
                    now=T0,
                )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k, p)) for k, p in enumerate(people)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert over == []  # 0 over-assigned: no item was ever handed to a third annotator
        per_item = dict(
            first.fetchall("SELECT item_id, count(DISTINCT annotator_id) FROM annotations GROUP BY item_id")
        )
        assert len(per_item) == 40 and set(per_item.values()) == {2}
        assert count_annotations(first) == 80
        assert first.scalar("SELECT count(*) FROM item_state WHERE status = 'open'") == 0
    finally:
        for replica in replicas:
            replica.close()


def test_a_role_changed_on_one_replica_reaches_the_other_within_seconds(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        Store(postgres_url, data_dir=tmp_path / "files") as here,
        Store(postgres_url, data_dir=tmp_path / "files") as there,
    ):
        users.add_user(here, "ann", "annotator", "ann-password")
        found = users.get_user(there, "ann")
        assert found is not None and found.role == "annotator"  # now in `there`'s read cache
        users.set_role(here, "ann", "adjudicator")
        deadline = time.monotonic() + 10
        while (users.get_user(there, "ann") or found).role != "adjudicator" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert users.get_user(there, "ann").role == "adjudicator"


def _label_on_two_replicas(
    postgres_url: str, tmp_path: Path, kill_after: int | None = None
) -> dict[str, int]:
    """Two `app.py serve` processes on one database, four annotators logged in to each, until every
    item is settled. With kill_after, replica 0 is killed with -9 after that many acknowledged labels
    and its annotators log in to replica 1 and go on. Returns the acknowledged request ids."""
    files = str(tmp_path / "files")
    source = tmp_path / "pb.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {"id": f"pb-{i}", "generator": "t", "problem": f"P{i}", "steps": ["a", "b"], "label": -1}
            )
            + "\n"
            for i in range(20)
        )
    )
    with Store(postgres_url, data_dir=files) as db:
        import_file(db, source, format="processbench", dataset="pb")
        for k in range(8):
            users.add_user(db, f"ann{k}", "annotator", f"ann{k}-password")
    # start_server's own --db only names the log file: the later --db is the one the app takes.
    servers = [
        start_server(
            tmp_path / f"replica{r}.duckdb", "--db", postgres_url, "--data-dir", files, "--no-demo", "--team"
        )
        for r in range(2)
    ]
    acknowledged: dict[str, int] = {}
    errors: list[str] = []
    guard = threading.Lock()
    killed = threading.Event()

    def work(client: StepgateClient) -> None:
        while True:
            item = client.run("next_item", "pb")
            if item["item_id"] is None:
                return
            rid = uuid.uuid4().hex
            result = client.run(
                "submit_label", item["item_id"], item["version_id"], {"earliest_error": -1}, rid, 1.0
            )
            with guard:
                acknowledged[rid] = result["annotation_id"]
                if kill_after is not None and len(acknowledged) >= kill_after and not killed.is_set():
                    killed.set()
                    servers[0].stop(kill=True)

    def annotate(k: int) -> None:
        for server in (servers[k % 2], servers[1]):
            try:
                client = StepgateClient(server.url, f"ann{k}", f"ann{k}-password", timeout=60)
                try:
                    work(client)
                    return
                finally:
                    client.close()
            except (ApiError, OSError, ValueError) as exc:
                if server is servers[1] or not killed.is_set():
                    errors.append(f"ann{k}: {exc}"[:300])
                    return

    try:
        threads = [threading.Thread(target=annotate, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
    finally:
        for server in servers:
            server.stop()
    assert errors == []
    assert killed.is_set() == (kill_after is not None)
    with Store(postgres_url, data_dir=files) as db:
        stored = dict(db.fetchall("SELECT request_id, id FROM annotations"))
        per_item = dict(
            db.fetchall("SELECT item_id, count(DISTINCT annotator_id) FROM annotations GROUP BY item_id")
        )
        states = dict(db.fetchall("SELECT status, count(*) FROM item_state GROUP BY status"))
        twice = db.scalar(
            "SELECT count(*) FROM (SELECT item_id, annotator_id FROM annotations GROUP BY item_id, annotator_id "
            "HAVING count(*) > 1) AS repeated"
        )
    assert {rid: stored.get(rid) for rid in acknowledged} == acknowledged  # nothing acknowledged is lost
    assert set(per_item.values()) == {3} and len(per_item) == 20  # ProcessBench's 3, never a 4th
    assert states == {"consensus": 20} and twice == 0
    return {rid: stored[rid] for rid in stored if rid not in acknowledged}


def test_two_app_replicas_over_http_label_every_item_to_its_quorum_and_no_further(
    postgres_url: str, tmp_path: Path
) -> None:
    assert _label_on_two_replicas(postgres_url, tmp_path) == {}  # nothing stored unacknowledged


def test_a_replica_killed_with_minus_9_loses_nothing_acknowledged(postgres_url: str, tmp_path: Path) -> None:
    unacknowledged = _label_on_two_replicas(postgres_url, tmp_path, kill_after=15)
    assert len(unacknowledged) <= 4  # at most the killed replica's four submits in flight


def _analyzed(db: Store, table: str) -> int:
    return int(db.scalar("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = ?", [table]))


def test_a_large_import_refreshes_the_planners_statistics(postgres_url: str, tmp_path: Path) -> None:
    """Else the planner reads a fresh import's tables as nearly empty until autovacuum comes by, and
    plans the next export's reads with nested loops."""
    source = tmp_path / "pb.jsonl"
    rows = [
        {"id": f"pb-{i}", "generator": "t", "problem": f"P{i}", "steps": ["a", "b"], "label": -1}
        for i in range(1200)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with Store(postgres_url, data_dir=tmp_path / "files") as db:
        before = {t: _analyzed(db, t) for t in ("items", "steps", "item_state")}
        import_file(db, source, format="processbench", dataset="pb")
        deadline = time.monotonic() + 10  # the statistics views may lag the ANALYZE by a moment
        while not all(_analyzed(db, t) == before[t] + 1 for t in before) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert all(_analyzed(db, t) == before[t] + 1 for t in before)
        assert int(db.scalar("SELECT reltuples FROM pg_class WHERE relname = 'steps'")) == 2400
        small = tmp_path / "small.jsonl"
        small.write_text("".join(json.dumps({**row, "id": f"s-{row['id']}"}) + "\n" for row in rows[:10]))
        import_file(db, small, format="processbench", dataset="pb")  # a few items: no ANALYZE
        assert _analyzed(db, "items") == before["items"] + 1
