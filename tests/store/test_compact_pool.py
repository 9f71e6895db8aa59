"""The scheduler's pool in flat arrays (store/compact.py) answers as the dicts and lists it replaced."""

from __future__ import annotations

import hashlib
import random
from array import array
from datetime import datetime, timedelta

from importers.records import ItemRecord
from services import annotate
from services.annotate import submit
from services.leasing import leases_of
from store import Store, datasets, users
from store.bulk import write_records
from store.compact import OpenTargets, load_open_targets, seeded_order
from store.items import get_item, position

T0 = datetime(2026, 1, 1, 12, 0, 0)
REVIEW = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}


def _dataset(store: Store, n: int, **settings: int) -> datasets.Dataset:
    records = [
        ItemRecord(external_id=f"item-{i}", question=f"q{i}", steps={"original": ["a"], "modified": ["b"]})
        for i in range(n)
    ]
    with store.writing() as tx:
        write_records(tx, "ds", "step_review", records, "test")
    if settings:
        datasets.update_settings(store, "ds", settings)
    found = datasets.get_dataset(store, "ds")
    assert found is not None
    return found


def test_open_targets_answer_every_operation_as_a_dict_does(store: Store) -> None:
    dataset = _dataset(store, 40)
    compact = load_open_targets(store, dataset.id)
    plain = dict(store.fetchall("SELECT item_id, target FROM item_state WHERE dataset_id = ?", [dataset.id]))
    assert isinstance(compact, OpenTargets) and dict(compact) == plain
    rng = random.Random(7)
    for _ in range(3000):
        key = rng.randint(-3, 50)  # loaded ids, ids never loaded, and ids no item has
        op = rng.choice(["set", "pop", "del", "get", "in"])
        if op == "set":
            value = rng.randint(0, 9)
            compact[key] = value
            plain[key] = value
        elif op == "pop":
            assert compact.pop(key, None) == plain.pop(key, None)
        elif op == "del" and key in plain:
            del compact[key]
            del plain[key]
        elif op == "get":
            assert compact.get(key) == plain.get(key)
        assert (key in compact) == (key in plain)
        assert len(compact) == len(plain)
    assert dict(compact.items()) == plain and sorted(compact) == sorted(plain)
    assert all(type(k) is int and type(v) is int for k, v in compact.items())


def test_claims_go_in_id_order_as_python_ints_and_never_past_the_quorum_across_a_reload(store: Store) -> None:
    dataset = _dataset(store, 30, annotators_per_item=2)
    team = [users.add_user(store, f"rater-{k}") for k in range(3)]
    labelled: dict[int, set[int]] = {}
    now = T0
    for round_ in range(30):
        for who in team:
            claim = leases_of(store).claim_next(store, who.id, dataset.id, lease_seconds=60, now=now)
            if claim is None:
                continue
            assert type(claim.item_id) is int  # not a NumPy integer leaking out of the arrays
            assert who.id not in labelled.get(claim.item_id, set())
            item = get_item(store, claim.item_id)
            submit(
                store,
                annotator=who,
                item_id=claim.item_id,
                version_id=item.version_id,
                payload=REVIEW,
                request_id=f"{who.id}-{claim.item_id}",
                now=now,
            )
            labelled.setdefault(claim.item_id, set()).add(who.id)
        if round_ == 5:
            leases_of(store).invalidate(dataset.id)  # reloaded from the log: the same rules hold
        now += timedelta(seconds=1)
    assert len(labelled) == 30 and all(len(raters) == 2 for raters in labelled.values())
    over = store.scalar(
        "SELECT count(*) FROM (SELECT item_id FROM annotations GROUP BY item_id "
        "HAVING count(DISTINCT annotator_id) > 2) AS over_target"  # PostgreSQL wants the alias
    )
    assert over == 0
    assert [position(store, dataset.id, i) for i in sorted(labelled)] == list(range(1, 31))


def test_items_held_by_others_are_counted_from_the_leases_alone(store: Store) -> None:
    dataset = _dataset(store, 3)
    ann, bob, cat, dan = (users.add_user(store, name) for name in ("ann", "bob", "cat", "dan"))
    for who in (ann, bob, cat):
        assert annotate.next_item(store, who, dataset, T0) is not None  # each holds one item
    assert annotate.next_item(store, dan, dataset, T0) is None
    held, first = leases_of(store).held_by_others(store, dataset.id, dan.id, T0 + timedelta(minutes=1))
    assert held == 3 and first == T0 + timedelta(seconds=int(dataset.setting("lease_seconds")))
    assert leases_of(store).held_by_others(store, dataset.id, ann.id, T0)[0] == 2  # not her own
    late = T0 + timedelta(days=1)  # every lease ran out: nothing is held
    assert leases_of(store).held_by_others(store, dataset.id, dan.id, late) == (0, None)
    assert annotate.next_item(store, dan, dataset, late) is not None


def test_the_seeded_gold_order_is_the_order_of_the_sorted_digests() -> None:
    ids = array("q", sorted(random.Random(3).sample(range(1, 10**9), 4000)))
    expected = sorted(ids, key=lambda i: hashlib.sha256(f"order:7:{i}".encode()).digest())
    shuffled = seeded_order(ids, 7)
    assert list(shuffled) == expected and all(type(i) is int for i in shuffled)
    assert list(seeded_order(array("q"), 7)) == []


def _label(store: Store, who: users.Annotator, item_id: int, now: datetime) -> None:
    submit(
        store,
        annotator=who,
        item_id=item_id,
        version_id=get_item(store, item_id).version_id,
        payload=REVIEW,
        request_id=f"{who.id}-{item_id}",
        now=now,
    )


def test_an_annotator_far_ahead_passes_over_their_own_started_items_and_others_get_them_first(
    store: Store,
) -> None:
    """Pool.done_by lets the next item skip what an annotator labelled without checking each item; the
    rules are unchanged: a started item comes before a fresh one, and one whose lease lapsed returns."""
    dataset = _dataset(store, 60, annotators_per_item=2)
    ann, bob, cat = (users.add_user(store, name) for name in ("ann", "bob", "cat"))
    leases = leases_of(store)
    now = T0
    for _ in range(40):  # ann labels 40 items alone: each is started, waiting for a second label
        claim = leases.claim_next(store, ann.id, dataset.id, lease_seconds=60, now=now)
        assert claim is not None
        _label(store, ann, claim.item_id, now)
    pool = leases.pool(store, dataset.id)  # type: ignore[attr-defined]
    assert pool.done_by[ann.id] == {i for i, who in pool.done.items() if ann.id in who}
    assert len(pool.done_by[ann.id]) == 40
    claim = leases.claim_next(store, ann.id, dataset.id, lease_seconds=60, now=now)
    assert claim is not None and claim.item_id not in pool.done_by[ann.id]  # a fresh item, her 41st
    first = min(pool.done_by[ann.id])
    held = leases.claim_next(store, bob.id, dataset.id, lease_seconds=60, now=now)
    assert held is not None and held.item_id == first  # ann's oldest started item goes out first
    # bob walks away: after his lease lapses, cat is given the same item, before any fresh one
    later = now + timedelta(seconds=61)
    again = leases.claim_next(store, cat.id, dataset.id, lease_seconds=60, now=later)
    assert again is not None and again.item_id == first
    _label(store, cat, first, later)  # the item is settled: it leaves the pool and ann's done_by
    assert first not in pool.done_by[ann.id] and first not in pool.started
