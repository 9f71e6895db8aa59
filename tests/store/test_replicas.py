"""Several app replicas over one database: sessions, login throttling, the job queue and leases are
rows every replica reads (issue 17). Two Store objects on one PostgreSQL database are two replicas;
on DuckDB (one process owns the file) the same functions keep the single process's behaviour."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from importers.records import ItemRecord
from services import annotate
from services import jobs as job_service
from services.annotate import now_utc
from services.leasing import leases_of
from store import Store, users
from store import jobs as queue
from store.bulk import write_records
from ui.context import AppContext
from ui.web.sessions import Sessions
from ui.web.throttle import LoginThrottle

pytestmark = pytest.mark.engines


def _replica(store: Store, request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """Another replica on the same database (PostgreSQL); DuckDB has only the one process."""
    if store.engine.exclusive:
        return store
    return Store(request.getfixturevalue("postgres_url"), data_dir=tmp_path / "files")


@pytest.fixture
def two(store: Store, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    other = _replica(store, request, tmp_path)
    yield store, other
    if other is not store:
        other.close()


def _sessions(a_store: Store, b_store: Store) -> tuple[Sessions, Sessions]:
    """Each replica's Sessions; on DuckDB the one process has one (its memory is the truth there)."""
    a = Sessions(AppContext(store=a_store))
    return a, (a if b_store is a_store else Sessions(AppContext(store=b_store)))


def test_a_session_opened_on_one_replica_works_and_ends_on_the_other(two: tuple[Store, Store]) -> None:
    a_store, b_store = two
    users.add_user(a_store, "ann", "annotator", "ann-password")
    a, b = _sessions(a_store, b_store)
    token = a.open("ann")
    stored = a_store.fetchall("SELECT token_hash FROM login_sessions")
    assert stored == [(hashlib.sha256(token.encode()).hexdigest(),)]  # the hash, never the token
    assert token not in str(a_store.fetchall("SELECT * FROM login_sessions"))
    assert b.user(token).name == "ann" and a.user(token).name == "ann"
    assert a.active() == b.active() == 1
    assert b.close(token) == "ann"  # logout on B
    assert b.user(token) is None  # at once on B
    deadline = time.monotonic() + 5
    while a.user(token) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert a.user(token) is None  # and within the recheck age (2 s) on A
    assert a.active() == 0


def test_a_session_hash_belongs_to_one_login_on_every_replica(two: tuple[Store, Store]) -> None:
    a, b = _sessions(*two)
    session_hash = uuid.uuid4().hex
    assert a.claim(session_hash, "ann") and a.claim(session_hash, "ann")
    assert not b.claim(session_hash, "bob")  # another replica refuses the hijack
    assert b.claim(session_hash, "ann")
    assert b.claim(uuid.uuid4().hex, "bob")


def test_a_password_change_on_one_replica_ends_sessions_on_the_other(two: tuple[Store, Store]) -> None:
    a_store, b_store = two
    users.add_user(a_store, "ann", "annotator", "ann-password")
    a, b = _sessions(a_store, b_store)
    token = a.open("ann")
    assert b.user(token) is not None
    time.sleep(0.01)  # sessions_valid_after is later than the login
    users.set_password(a_store, "ann", "a-new-password")
    assert a.user(token) is None
    deadline = time.monotonic() + 5
    while b.user(token) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert b.user(token) is None


def test_failed_logins_spread_over_replicas_count_together(two: tuple[Store, Store]) -> None:
    throttles = [LoginThrottle(s, 4, 10, 900) for s in two]
    for k in range(4):  # 4 guesses at ann, alternating replicas: none is admitted as right
        wait, attempt = throttles[k % 2].admit("Ann", "10.0.0.1")
        assert wait == 0 and attempt is not None
    for throttle in throttles:
        wait, attempt = throttle.admit("ann", "10.0.0.2")
        assert attempt is None and 0 < wait <= 900
    wait, attempt = throttles[1].admit("bob", "10.0.0.1")  # another name from the address goes on
    assert attempt is not None
    throttles[1].succeeded("bob", attempt)  # a right password takes its own attempt back
    assert throttles[0].admit("bob", "10.0.0.3")[1] is not None


def _record(i: int) -> ItemRecord:
    return ItemRecord(
        external_id=f"item-{i}",
        question=f"question {i}",
        steps={"original": ["a", "b"], "modified": ["a", "c"]},
    )


def test_a_lease_is_resumed_on_the_replica_the_annotator_comes_back_to(two: tuple[Store, Store]) -> None:
    a_store, b_store = two
    with a_store.writing() as tx:
        write_records(tx, "shared", "step_review", [_record(i) for i in range(20)], "test")
    ann = users.add_user(a_store, "ann", "annotator")
    bob = users.add_user(a_store, "bob", "annotator")
    dataset_a = annotate.dataset_for(a_store, "shared")
    dataset_b = annotate.dataset_for(b_store, "shared")
    # B has already handed out work (its memory is warm), then ann's lease comes from A
    assert annotate.next_item(b_store, bob, dataset_b) is not None
    first = annotate.next_item(a_store, ann, dataset_a)
    assert first is not None
    again = annotate.next_item(b_store, ann, dataset_b)
    assert again is not None and again.item.item_id == first.item.item_id
    back = annotate.next_item(a_store, ann, dataset_a)
    assert back is not None and back.item.item_id == first.item.item_id
    assert a_store.scalar(
        "SELECT count(*) FROM assignments WHERE annotator_id = ? AND status = 'leased'", [ann.id]
    ) == (0 if a_store.engine.exclusive else 1)


@pytest.mark.engines("postgresql")  # one process owns a DuckDB file: no other replica's claims to hold up
def test_a_claim_holds_the_row_it_takes_and_lets_go_of_those_it_passed_over(
    two: tuple[Store, Store], request: pytest.FixtureRequest
) -> None:
    """A claim holding every item row it looked at until its commit made other replicas' claims wait on
    them in turn (tests/perf/test_replicas_load.py at 3.4-3.7 labels a second in about one run of two)."""
    a_store, b_store = two
    with a_store.writing() as tx:
        write_records(tx, "shared", "step_review", [_record(i) for i in range(2)], "test")
    bob = users.add_user(a_store, "bob", "annotator")
    ann = users.add_user(a_store, "ann", "annotator")
    taken = annotate.next_item(b_store, bob, annotate.dataset_for(b_store, "shared"))
    assert taken is not None  # replica B filled the first item's one place with bob's lease
    filled = taken.item.item_id
    dataset_a = annotate.dataset_for(a_store, "shared")
    with a_store.writing() as tx:  # replica A's claim, its transaction still open
        claim = leases_of(tx).claim_next(tx, ann.id, dataset_a.id, lease_seconds=600, now=now_utc())
        assert claim is not None and claim.item_id != filled  # A looked at the full item, took the other
        with psycopg.connect(request.getfixturevalue("postgres_url"), autocommit=False) as other:
            free = other.execute(
                "SELECT item_id FROM item_state WHERE item_id IN (%s, %s) FOR UPDATE SKIP LOCKED",
                [filled, claim.item_id],
            ).fetchall()
            other.rollback()
    assert free == [(filled,)]  # the row passed over is free to another replica; the one taken is held


def test_a_live_workers_job_is_never_taken_and_a_stopped_ones_is(two: tuple[Store, Store]) -> None:
    a_store, b_store = two
    with a_store.writing() as tx:
        write_records(tx, "jobs", "step_review", [_record(1)], "test")
        item_id = int(tx.scalar("SELECT id FROM items"))
        version_id = int(tx.scalar("SELECT current_version_id FROM items"))
        job = queue.enqueue(
            tx,
            kind="regenerate",
            item_id=item_id,
            version_id=version_id,
            reason="test",
            payload={},
            now=now_utc(),
        )
    now = now_utc()
    claimed = queue.claim(a_store, "replica-a@host:1", now)
    assert claimed is not None and claimed.id == job.id and claimed.heartbeat_at is not None
    assert queue.claim(b_store, "replica-b@host:2", now) is None  # never one job to two workers
    # B starting its worker: on PostgreSQL A may be alive, so its fresh job stays A's
    released = queue.release_abandoned(b_store, now + timedelta(seconds=30), 60, at_start=True)
    if b_store.engine.exclusive:  # one process owns a DuckDB file: what runs at start was left
        assert released == 1
        return
    assert released == 0 and queue.get_job(b_store, job.id).claimed_by == "replica-a@host:1"
    assert queue.beat(a_store, job.id, "replica-a@host:1", now + timedelta(seconds=50))
    assert queue.release_abandoned(b_store, now + timedelta(seconds=100), 60) == 0  # the heartbeat counts
    assert queue.release_abandoned(b_store, now + timedelta(seconds=111), 60) == 1  # A stopped beating
    requeued = queue.get_job(b_store, job.id)
    assert requeued.status == "queued" and "no heartbeat for 60 s" in (requeued.error or "")
    assert not queue.beat(a_store, job.id, "replica-a@host:1", now)  # A, back, knows it lost it
    assert queue.claim(b_store, "replica-b@host:2", now + timedelta(seconds=112)).attempts == 2


def test_worker_names_are_unique_per_process() -> None:
    import os
    import socket

    assert job_service.worker_name() == f"app@{socket.gethostname()}:{os.getpid()}"
    assert job_service.worker_name("command").startswith("command@")
