"""Labels over PostgreSQL without one global lock: a label's transaction takes the write lock SHARED and
holds its rules by the item's own lock, its state row and the request id's unique constraint; rare writes
take it EXCLUSIVE (store/engines.py, `_WRITE_LOCK`). Several Store objects on one database are several
replicas; their threads submit at the same moment, on the same items and on different ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from importers.records import ItemRecord
from services import annotate
from services.errors import AlreadyLabelled, Conflict, NotAllowed
from services.leasing import leases_of
from store import Store, datasets, users
from store.bulk import write_records
from store.integrity import labelled_past_target, repeated_labels
from store.items import get_item

T0 = datetime(2026, 1, 1, 12, 0, 0)
REVIEW = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
ITEMS = 24


def _record(i: int) -> ItemRecord:
    return ItemRecord(
        external_id=f"item-{i}",
        question=f"question {i}",
        steps={"original": ["a", "b"], "modified": ["a", "c"]},
    )


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[list[Store]]:
    """Three replicas on one database with a step-review dataset of ITEMS items, two annotators each."""
    stores = [Store(postgres_url, data_dir=tmp_path / "files") for _ in range(3)]
    with stores[0].writing() as tx:
        write_records(tx, "shared", "step_review", [_record(i) for i in range(ITEMS)], "test")
    datasets.update_settings(stores[0], "shared", {"annotators_per_item": 2})
    yield stores
    for store in stores:
        store.close()


def _at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released together; each one's result or the exception it raised."""
    start = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(k: int) -> None:
        start.wait(30)
        try:
            out[k] = calls[k]()
        except Exception as exc:
            out[k] = exc

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def _submit(
    store: Store, person: users.Annotator, item_id: int, request_id: str, now: datetime, **kw: Any
) -> Any:
    item = get_item(store, item_id)
    return annotate.submit(
        store,
        annotator=person,
        item_id=item_id,
        version_id=item.version_id,
        payload=REVIEW,
        request_id=request_id,
        now=now,
        **kw,
    )


def test_the_same_request_id_sent_at_once_to_three_replicas_is_stored_once(replicas: list[Store]) -> None:
    calls: list[Callable[[], Any]] = []
    for item_id in range(1, ITEMS + 1):  # one lease per annotator and dataset: two new annotators an item
        for k, person in enumerate(users.add_user(replicas[0], f"ann-{item_id}-{k}") for k in range(2)):
            leases_of(replicas[k]).claim_item(replicas[k], person.id, item_id, 1, lease_seconds=600, now=T0)
            # the same submit three times at once (a retry racing its first send), one per replica
            calls += [
                lambda s=s, p=person, i=item_id: _submit(s, p, i, f"{p.name}-{i}", T0) for s in replicas
            ]
    receipts = _at_once(calls)
    assert [r for r in receipts if isinstance(r, Exception)] == []
    by_request: dict[str, set[int]] = {}
    for k in range(0, len(receipts), 3):
        ids = {r.annotation_id for r in receipts[k : k + 3]}
        assert len(ids) == 1  # all three answered with the one stored row
        assert sorted(r.duplicate for r in receipts[k : k + 3]) == [False, True, True]
        by_request[str(k)] = ids
    db = replicas[0]
    assert db.scalar("SELECT count(*) FROM annotations") == 2 * ITEMS
    assert repeated_labels(db) == 0 and labelled_past_target(db) == 0
    assert db.scalar("SELECT count(*) FROM item_state WHERE status = 'open'") == 0


def test_one_annotator_saving_one_item_from_three_tabs_at_once_is_stored_once(replicas: list[Store]) -> None:
    calls: list[Callable[[], Any]] = []
    for item_id in range(1, ITEMS + 1):
        person = users.add_user(replicas[0], f"ann-{item_id}")
        leases_of(replicas[0]).claim_item(replicas[0], person.id, item_id, 1, lease_seconds=600, now=T0)
        calls += [
            lambda s=s, p=person, i=item_id, t=t: _submit(s, p, i, f"tab{t}-{i}", T0, first_label=True)
            for t, s in enumerate(replicas)
        ]
    results = _at_once(calls)
    for k in range(0, len(results), 3):
        three = results[k : k + 3]
        assert sum(isinstance(r, annotate.Receipt) for r in three) == 1, three  # one tab's save stored
        assert all(isinstance(r, annotate.Receipt | AlreadyLabelled) for r in three), three
    db = replicas[0]
    assert db.scalar("SELECT count(*) FROM annotations") == ITEMS
    assert repeated_labels(db) == 0


def test_lapsed_leases_racing_for_the_last_place_never_fill_an_item_past_its_target(
    replicas: list[Store],
) -> None:
    """A and B held the item and let their leases lapse; C took it then. A lapsed lease may still
    answer while the item has room, so A and B both see one place left (C's): counted under the item's
    lock, one of them gets it, the other is told its lease went to others."""
    later, then = T0 + timedelta(seconds=120), T0 + timedelta(seconds=130)
    calls: list[Callable[[], Any]] = []
    for item_id in range(1, ITEMS + 1):
        a, b, c = (users.add_user(replicas[0], f"ann-{item_id}-{n}") for n in "abc")
        for person in (a, b):
            leases_of(replicas[0]).claim_item(replicas[0], person.id, item_id, 1, lease_seconds=60, now=T0)
        assert leases_of(replicas[1]).claim_item(
            replicas[1], c.id, item_id, 1, lease_seconds=600, now=later
        ) == ("leased")
        calls += [
            lambda i=item_id, p=a: _submit(replicas[0], p, i, f"a-{i}", then),
            lambda i=item_id, p=b: _submit(replicas[1], p, i, f"b-{i}", then),
            lambda i=item_id, p=c: _submit(replicas[2], p, i, f"c-{i}", then),
        ]
    results = _at_once(calls)
    for k in range(0, len(results), 3):
        pair, last = results[k : k + 2], results[k + 2]
        assert isinstance(last, annotate.Receipt), last  # C's live lease always labels
        assert sum(isinstance(r, annotate.Receipt) for r in pair) == 1, pair  # one lapsed lease, never two
        assert all(isinstance(r, annotate.Receipt | Conflict) for r in pair), pair
    db = replicas[0]
    per_item = dict(
        db.fetchall("SELECT item_id, count(DISTINCT annotator_id) FROM annotations GROUP BY item_id")
    )
    assert set(per_item.values()) == {2} and len(per_item) == ITEMS
    assert labelled_past_target(db) == 0 and repeated_labels(db) == 0


def test_labels_run_side_by_side_and_a_rare_write_waits_for_them(replicas: list[Store]) -> None:
    """A label's transaction takes the write lock shared: a label on another replica, or from another
    thread of the same one, is not held up by it; an exclusive write (a settings change) waits for it."""
    first, second, _ = replicas
    people = [users.add_user(first, f"ann-{k}") for k in range(2)]
    for k, person in enumerate(people):
        leases_of(first).claim_item(first, person.id, k + 2, 1, lease_seconds=600, now=T0)
    waited: list[float] = []

    def rare() -> None:
        started = time.monotonic()
        datasets.update_settings(second, "shared", {"annotators_per_item": 3})
        waited.append(time.monotonic() - started)

    with first.writing(shared=True) as tx:  # a label in flight on replica 0, holding item 1's row
        assert tx.shared
        tx.execute("SELECT 1 FROM item_state WHERE item_id = 1 FOR UPDATE")
        began = time.monotonic()
        done = _at_once(
            [
                lambda: _submit(second, people[0], 2, "on-another-replica", T0),
                lambda: _submit(first, people[1], 3, "in-another-thread", T0),
            ]
        )
        assert [type(r) for r in done] == [annotate.Receipt, annotate.Receipt], done
        assert time.monotonic() - began < 20
        writer = threading.Thread(target=rare)
        writer.start()
        time.sleep(1.0)
        assert waited == []  # the settings change waits for the label in flight
    writer.join(30)
    assert waited and waited[0] >= 0.9
    assert first.scalar("SELECT count(*) FROM annotations") == 2


def test_a_label_whose_decision_has_follow_ups_runs_again_exclusively(replicas: list[Store]) -> None:
    """An exclusive write nested in a label's shared one stops it: it is rolled back, nothing stored,
    and run again exclusively by annotate.submit (what a quality-gate reject or accept does)."""
    db = replicas[0]
    person = users.add_user(db, "ann")
    leases_of(db).claim_item(db, person.id, 1, 1, lease_seconds=600, now=T0)
    from store.errors import StoreExclusiveNeeded

    with pytest.raises(StoreExclusiveNeeded), db.writing(shared=True) as tx:
        tx.execute("UPDATE item_state SET target = 7 WHERE item_id = 1")
        with db.writing():
            pass
    assert db.scalar("SELECT target FROM item_state WHERE item_id = 1") == 2
    # an exclusive transaction goes on where it is asked again
    with db.writing() as tx:
        tx.require_exclusive()
        assert not tx.shared
    with pytest.raises(NotAllowed):  # and a refusal is still a refusal, shared or not
        _submit(db, person, 2, "nope", T0)
