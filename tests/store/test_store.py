"""The store on a real DuckDB file: schema, migrations, users, the log under concurrency, locks."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from importers.records import ItemRecord
from services.annotate import submit
from services.errors import ServiceError
from services.leasing import leases_of
from store import Store, StoreClosedError, StoreOpenError, datasets, users
from store.annotations import count_annotations
from store.bulk import write_records
from store.items import get_item
from store.migrations import MIGRATIONS, migrate, schema_version
from tests.browser_support import app_py

pytestmark = pytest.mark.engines  # tests on the `store` fixture run on DuckDB and PostgreSQL

T0 = datetime(2026, 1, 1, 12, 0, 0)


def _records(n: int, steps: int = 4) -> list[ItemRecord]:
    return [
        ItemRecord(
            external_id=f"item-{i}",
            question=f"question {i}",
            steps={"original": [f"o{j}" for j in range(steps)], "modified": [f"m{j}" for j in range(steps)]},
        )
        for i in range(n)
    ]


def _dataset(store: Store, n: int, task: str = "step_review", **settings: int) -> datasets.Dataset:
    with store.writing() as tx:
        write_records(tx, "ds", task, _records(n), "test")
    if settings:
        datasets.update_settings(store, "ds", settings)
    found = datasets.get_dataset(store, "ds")
    assert found is not None
    return found


REVIEW = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


def test_fresh_database_has_every_migration(store: Store) -> None:
    with store.writing() as tx:
        assert schema_version(tx) == MIGRATIONS[-1][0]
    names = {r[0] for r in store.fetchall("SELECT table_name FROM information_schema.tables")}
    assert {
        "datasets",
        "items",
        "item_versions",
        "steps",
        "annotations",
        "assignments",
        "jobs",
        "studies",
    } <= names


def test_database_of_the_first_schema_version_opens_and_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("BEGIN TRANSACTION")

    class _Raw:  # the first release's migrate() ran on a plain connection
        def execute(self, sql, params=None):
            return con.execute(sql, params or [])

        def scalar(self, sql, params=None):
            return con.execute(sql, params or []).fetchone()[0]

    assert migrate(_Raw(), upto=1) == [1]  # type: ignore[arg-type]
    con.execute("INSERT INTO annotators (name, role) VALUES ('old-user', 'admin')")
    con.execute("COMMIT")
    con.close()
    with Store(path) as db:
        with db.writing() as tx:
            assert schema_version(tx) == MIGRATIONS[-1][0]
        assert users.get_user(db, "old-user").role == "admin"  # type: ignore[union-attr]
        assert db.scalar("SELECT count(*) FROM studies") == 0
        versions = [r[0] for r in db.fetchall("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m[0] for m in MIGRATIONS]
    # Numbered 1, 2, 3 ... with no gap: a migration added out of order would be skipped by a file that
    # already has a higher one (migrate applies what is above the file's highest version).
    assert [m[0] for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    Store(tmp_path / "a.duckdb").close()
    with Store(tmp_path / "a.duckdb") as db:
        assert db.scalar("SELECT count(*) FROM schema_migrations") == len(MIGRATIONS)


def test_second_process_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "shared.duckdb"
    with Store(path):
        code = f"from store import Store\nStore({str(path)!r})"
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[2]
        )
    assert result.returncode != 0
    assert "StoreLockedError" in result.stderr
    assert "already open in another stepgate process" in result.stderr


def test_second_app_process_refuses_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "served.duckdb"
    with Store(path):
        result = app_py("users", "list", "--db", str(path))  # another process, as a second app would be
    assert result.returncode != 0
    assert "already open in another stepgate process" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreOpenError, match="does not exist"):
        Store(tmp_path / "nope" / "x.duckdb")


def test_use_after_close_raises(tmp_path: Path) -> None:
    db = Store(tmp_path / "c.duckdb")
    db.close()
    with pytest.raises(StoreClosedError):
        db.scalar("SELECT 1")


def test_failed_write_rolls_back_everything(store: Store) -> None:
    with pytest.raises(RuntimeError), store.writing() as tx:
        write_records(tx, "ds", "step_review", _records(3), "test")
        raise RuntimeError("crash in the middle")
    assert store.scalar("SELECT count(*) FROM items") == 0
    assert datasets.get_dataset(store, "ds") is None


def test_passwords_are_scrypt_hashes_and_check(store: Store) -> None:
    users.add_user(store, "ann", "annotator", "correct horse")
    stored = store.scalar("SELECT password_hash FROM annotators WHERE name = 'ann'")
    assert stored.startswith("scrypt$") and "correct horse" not in stored
    assert users.authenticate(store, "ann", "correct horse") is not None
    assert users.authenticate(store, "ann", "wrong horse") is None
    assert users.authenticate(store, "nobody", "correct horse") is None
    # salted: a second user with the same password stores another hash, and each checks only its own
    users.add_user(store, "bea", "annotator", "correct horse")
    other = store.scalar("SELECT password_hash FROM annotators WHERE name = 'bea'")
    assert other != stored and other.split("$")[4] != stored.split("$")[4]
    assert users.authenticate(store, "bea", "correct horse") is not None


@pytest.mark.parametrize("setting", ["add_user", "set_password"])
def test_a_password_is_hashed_before_its_write_so_other_writes_never_wait_for_scrypt(
    store: Store, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    users.add_user(store, "ann")
    hashing, release = threading.Event(), threading.Event()
    scrypt = users.hash_password

    def held(password: str) -> str:
        hashing.set()
        release.wait(20)
        return scrypt(password)

    monkeypatch.setattr(users, "hash_password", held)
    if setting == "add_user":
        setter = threading.Thread(target=users.add_user, args=(store, "bea", "annotator", "correct horse"))
    else:
        setter = threading.Thread(target=users.set_password, args=(store, "ann", "correct horse"))
    setter.start()
    assert hashing.wait(20)
    beside = threading.Thread(target=users.add_user, args=(store, "cat"))  # another write, while scrypt runs
    beside.start()
    beside.join(10)
    written_beside = not beside.is_alive()
    release.set()
    setter.join(20)
    beside.join(20)
    assert written_beside, f"{setting} held the write lock while it hashed the password"
    assert users.get_user(store, "cat") is not None
    assert users.authenticate(store, "bea" if setting == "add_user" else "ann", "correct horse") is not None


@pytest.mark.parametrize(
    ("name", "role", "message"),
    [
        ("", "annotator", "invalid annotator name"),
        ("<script>", "annotator", "invalid annotator name"),
        ("bob", "superuser", "unknown role"),
    ],
)
def test_bad_user_requests_are_refused_with_a_message(
    store: Store, name: str, role: str, message: str
) -> None:
    with pytest.raises(users.UserError, match=message):
        users.add_user(store, name, role)
    assert users.list_users(store) == []


def test_duplicate_user_is_refused(store: Store) -> None:
    users.add_user(store, "bob")
    with pytest.raises(users.UserError, match="already exists"):
        users.add_user(store, "bob", "admin")
    assert users.get_user(store, "bob").role == "annotator"  # type: ignore[union-attr]


def test_retried_submit_is_stored_once(store: Store) -> None:
    _dataset(store, 2)
    ann = users.add_user(store, "ann")
    claim = leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    assert claim is not None
    item = get_item(store, claim.item_id)
    first = submit(
        store,
        annotator=ann,
        item_id=item.item_id,
        version_id=item.version_id,
        payload=REVIEW,
        request_id="req-1",
        now=T0,
    )
    again = submit(
        store,
        annotator=ann,
        item_id=item.item_id,
        version_id=item.version_id,
        payload=REVIEW,
        request_id="req-1",
        now=T0,
    )
    assert (first.duplicate, again.duplicate) == (False, True)
    assert first.annotation_id == again.annotation_id
    assert count_annotations(store) == 1


def test_request_id_reused_by_another_user_is_refused(store: Store) -> None:
    _dataset(store, 1, annotators_per_item=2)
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    item = get_item(store, 1)
    for who in (ann, bob):
        leases_of(store).claim_next(store, who.id, 1, lease_seconds=60, now=T0)
    submit(
        store, annotator=ann, item_id=1, version_id=item.version_id, payload=REVIEW, request_id="same", now=T0
    )
    with pytest.raises(ServiceError, match="already used"):
        submit(
            store,
            annotator=bob,
            item_id=1,
            version_id=item.version_id,
            payload=REVIEW,
            request_id="same",
            now=T0,
        )
    assert count_annotations(store) == 1


def test_request_id_reused_on_another_item_is_refused_and_the_store_still_works(store: Store) -> None:
    _dataset(store, 2)
    ann = users.add_user(store, "ann")
    first = leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    item = get_item(store, first.item_id)  # type: ignore[union-attr]
    submit(
        store,
        annotator=ann,
        item_id=item.item_id,
        version_id=item.version_id,
        payload=REVIEW,
        request_id="x",
        now=T0,
    )
    other = get_item(store, leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0).item_id)  # type: ignore[union-attr]
    with pytest.raises(ServiceError, match="already used"):
        submit(
            store,
            annotator=ann,
            item_id=other.item_id,
            version_id=other.version_id,
            payload=REVIEW,
            request_id="x",
            now=T0,
        )
    ok = submit(
        store,
        annotator=ann,
        item_id=other.item_id,
        version_id=other.version_id,
        payload=REVIEW,
        request_id="y",
        now=T0,
    )
    assert not ok.duplicate and count_annotations(store) == 2


def test_incomplete_label_is_refused_and_nothing_stored(store: Store) -> None:
    _dataset(store, 1)
    ann = users.add_user(store, "ann")
    leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    item = get_item(store, 1)
    with pytest.raises(ServiceError, match="please choose: Difficulty"):
        submit(
            store,
            annotator=ann,
            item_id=1,
            version_id=item.version_id,
            payload={"original": "correct", "modification": "reasonable"},
            request_id="r",
            now=T0,
        )
    assert count_annotations(store) == 0


def test_label_on_an_outdated_version_is_refused(store: Store) -> None:
    _dataset(store, 1)
    ann = users.add_user(store, "ann")
    leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    old = get_item(store, 1)
    changed = _records(1)
    changed[0].question = "edited question"
    with store.writing() as tx:
        write_records(tx, "ds", "step_review", changed, "test")
    with pytest.raises(ServiceError, match="changed"):
        submit(
            store, annotator=ann, item_id=1, version_id=old.version_id, payload=REVIEW, request_id="r", now=T0
        )
    assert count_annotations(store) == 0


@pytest.mark.slow
def test_eight_threads_of_500_submits_with_retries_leave_exactly_4000(store: Store) -> None:
    _dataset(store, 500, annotators_per_item=8)
    people = [users.add_user(store, f"annotator-{k}") for k in range(8)]
    errors: list[BaseException] = []

    def work(person: users.Annotator) -> None:
        try:
            for n in range(500):
                claim = leases_of(store).claim_next(store, person.id, 1, lease_seconds=600, now=T0)
                assert claim is not None
                item = get_item(store, claim.item_id)
                rid = f"{person.name}-{n}"
                for _ in range(
                    2 if n % 7 == 0 else 1
                ):  # every 7th submit is retried, as a flaky client would
                    submit(
                        store,
                        annotator=person,
                        item_id=item.item_id,
                        version_id=item.version_id,
                        payload=REVIEW,
                        request_id=rid,
                        seconds_spent=1.0,
                        now=T0,
                    )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert count_annotations(store) == 4000
    assert (
        store.scalar(
            "SELECT count(*) FROM (SELECT item_id, annotator_id FROM annotations GROUP BY item_id, annotator_id "
            "HAVING count(*) > 1) AS repeated"
        )
        == 0
    )
    assert store.scalar("SELECT count(*) FROM item_state WHERE status = 'complete'") == 500


def test_skip_returns_the_item_to_others_and_comes_back_last(store: Store) -> None:
    _dataset(store, 2)
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    first = leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    assert first is not None and first.item_id == 1
    leases_of(store).release(store, ann.id, 1, 1, T0)
    assert leases_of(store).claim_next(store, bob.id, 1, lease_seconds=60, now=T0).item_id == 1  # type: ignore[union-attr]
    assert leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0).item_id == 2  # type: ignore[union-attr]
    item = get_item(store, 2)
    submit(
        store, annotator=ann, item_id=2, version_id=item.version_id, payload=REVIEW, request_id="a2", now=T0
    )
    # Item 1 is bob's now: ann has nothing left, and her skip is remembered after a restart.
    assert leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0) is None
    leases_of(store).invalidate()
    assert 1 in leases_of(store).pool(store, 1).skipped[ann.id]


def test_resume_returns_the_held_item(store: Store) -> None:
    _dataset(store, 3)
    ann = users.add_user(store, "ann")
    first = leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0)
    again = leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0 + timedelta(seconds=30))
    assert first is not None and again is not None
    assert (again.item_id, again.resumed) == (first.item_id, True)


def test_expired_lease_returns_the_item_to_the_pool(store: Store) -> None:
    _dataset(store, 1)
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    assert leases_of(store).claim_next(store, ann.id, 1, lease_seconds=60, now=T0).item_id == 1  # type: ignore[union-attr]
    assert leases_of(store).claim_next(store, bob.id, 1, lease_seconds=60, now=T0) is None
    later = T0 + timedelta(seconds=61)
    assert leases_of(store).claim_next(store, bob.id, 1, lease_seconds=60, now=later).item_id == 1  # type: ignore[union-attr]
    item = get_item(store, 1)
    submit(
        store, annotator=bob, item_id=1, version_id=item.version_id, payload=REVIEW, request_id="b", now=later
    )
    # Ann's late submit would put the item over its quorum: refused, nothing stored.
    with pytest.raises(ServiceError, match="expired and it went to others"):
        submit(
            store,
            annotator=ann,
            item_id=1,
            version_id=item.version_id,
            payload=REVIEW,
            request_id="a",
            now=later,
        )
    assert count_annotations(store) == 1


@pytest.mark.parametrize(
    ("labels", "status", "keep"),
    [
        ([REVIEW], "complete", True),
        ([{**REVIEW, "original": "incorrect"}], "rejected", False),
        ([REVIEW, {**REVIEW, "modification": "unreasonable"}], "disputed", None),
    ],
)
def test_step_review_keeps_only_correct_originals_with_reasonable_modifications(
    store: Store, labels: list[dict], status: str, keep: bool | None
) -> None:
    _dataset(store, 1, annotators_per_item=len(labels))
    for k, payload in enumerate(labels):
        who = users.add_user(store, f"rater-{k}")
        leases_of(store).claim_next(store, who.id, 1, lease_seconds=60, now=T0)
        item = get_item(store, 1)
        result = submit(
            store,
            annotator=who,
            item_id=1,
            version_id=item.version_id,
            payload=payload,
            request_id=f"r{k}",
            now=T0,
        )
    assert not result.duplicate
    assert store.scalar("SELECT status FROM item_state WHERE item_id = 1") == status
    decision = json.loads(store.scalar("SELECT decision FROM item_state WHERE item_id = 1"))
    assert decision["keep"] == keep


def test_nothing_left_says_how_many_items_others_hold_and_when_the_first_comes_back(store: Store) -> None:
    from services import annotate

    dataset = _dataset(store, 1)
    ann, bob = users.add_user(store, "ann"), users.add_user(store, "bob")
    assert annotate.next_item(store, ann, dataset, T0) is not None  # ann holds the one item (15 min lease)
    assert annotate.next_item(store, bob, dataset, T0) is None
    said = annotate.why_nothing_left(store, bob, dataset, T0 + timedelta(minutes=5))
    assert "1 item is being labelled by others" in said and "about 10 minute(s)" in said and "12:15" in said
    later = T0 + timedelta(minutes=16)  # ann's lease ran out: the item is bob's to take
    assert annotate.next_item(store, bob, dataset, later) is not None
    assert annotate.why_nothing_left(store, ann, dataset, later).startswith("1 item is")


def test_steps_keep_their_rows_when_migration_13_drops_their_primary_key(tmp_path: Path) -> None:
    path = tmp_path / "v12.duckdb"
    with Store(path) as db, db.writing() as tx:
        write_records(tx, "ds", "earliest_error", _records(3), "test")
    steps = "SELECT version_id, role, position, text FROM steps ORDER BY ALL"
    # The file as migration 12 left it: steps keyed by (version, role, position).
    con = duckdb.connect(str(path))
    rows = con.execute(steps).fetchall()
    con.execute("BEGIN TRANSACTION")
    con.execute("DROP TABLE steps")
    con.execute(
        "CREATE TABLE steps (version_id BIGINT NOT NULL, role VARCHAR NOT NULL, position INTEGER NOT NULL, "
        "text VARCHAR NOT NULL, PRIMARY KEY (version_id, role, position))"
    )
    con.executemany("INSERT INTO steps VALUES (?, ?, ?, ?)", rows)
    con.execute("DELETE FROM schema_migrations WHERE version >= 13")
    con.execute("COMMIT")
    con.close()
    with Store(path) as db:
        assert rows and db.fetchall(steps) == rows
        assert (
            db.fetchall("SELECT constraint_type FROM duckdb_constraints() WHERE table_name = 'steps'")
            == [("NOT NULL",)] * 4
        )
        assert db.fetchall("SELECT expressions FROM duckdb_indexes() WHERE table_name = 'steps'") == [
            ("[version_id]",)
        ]
        assert db.scalar("SELECT max(version) FROM schema_migrations") == MIGRATIONS[-1][0]


def test_each_engine_names_what_differs_so_no_caller_asks_which_engine_it_has(store: Store) -> None:
    from store.memory import release_freed_memory_in_background

    engine = store.engine
    release_freed_memory_in_background(store)  # what `serve` calls on either engine
    if engine.name == "duckdb":
        assert engine.exclusive and engine.embedded
        assert engine.file == store.path and store.path is not None and store.path.exists()
        assert store.data_dir == store.path.with_name(store.path.name + ".files")
        assert store.scalar("SELECT current_setting('allocator_background_threads')") is True
    else:  # a server: other replicas may open it, its memory is its own, no file to put a control file by
        assert engine.name == "postgresql"
        assert not engine.exclusive and not engine.embedded
        assert engine.file is None and store.path is None
