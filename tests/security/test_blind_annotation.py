"""A hostile annotator with a script learns nothing of the others' labels from the annotation API.

The strong form of blindness: the same actions on two items whose other labels differ give the same
replies (ids and item content aside). Labels land only on items handed to the annotator; every field
is bounded. Each test talks to the real app in team mode over HTTP, as a script would.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.client import ApiError, StepgateClient
from bench.server import Server, start_server
from importers.records import ItemRecord
from services import annotate
from store import Store, users
from store.annotations import count_annotations
from store.bulk import write_records

pytestmark = pytest.mark.browser  # starts the real app

DATASET = "blind-ee"
IDENTITY = ("item_id", "version_id", "external_id", "question", "steps", "position", "annotation_id")


def _items(n: int) -> list[ItemRecord]:
    return [
        ItemRecord(
            external_id=f"e-{k}",
            question=f"Question {k}: what is {k} + {k}?",
            steps={"solution": [f"{k} + {k} = {2 * k}.", "Check it.", f"So the answer is {2 * k}."]},
            final_answer_correct=True,
        )
        for k in range(n)
    ]


def _label(store: Store, who: str, ref: str, label: int) -> None:
    user = users.get_user(store, who)
    assert user is not None
    dataset = annotate.dataset_for(store, DATASET)
    found = annotate.jump_to(store, user, dataset, ref)
    annotate.submit(
        store,
        annotator=user,
        item_id=found.item.item_id,
        version_id=found.item.version_id,
        payload={"earliest_error": label},
        request_id=uuid.uuid4().hex,
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """Items e-0 and e-1: ann and bob agree on e-0 (step 1, step 1) and disagree on e-1 (step 2, step 3)."""
    db = tmp_path / "blind.duckdb"
    with Store(db) as store:
        for name in ("ann", "bob", "eve", "mal"):
            users.add_user(store, name, "annotator", f"{name}-password")
        users.add_user(store, "lead", "admin", "lead-password")
        with store.writing() as tx:
            write_records(tx, DATASET, "earliest_error", _items(4), "test")
        for who, ref, label in (("ann", "e-0", 0), ("bob", "e-0", 0), ("ann", "e-1", 1), ("bob", "e-1", 2)):
            _label(store, who, ref, label)
    server = start_server(db, "--team", "--no-demo")
    try:
        yield server
    finally:
        server.stop()


def _stored_after_stop(server: Server) -> int:
    """Stop the app (it owns the file) and count the log's rows."""
    server.stop()
    with Store(server.db) as store:
        return count_annotations(store)


def _blind(reply: dict) -> dict:
    """A reply with what names the item left out: what remains may not differ between items."""
    return {k: v for k, v in reply.items() if k not in IDENTITY}


def _trail(client: StepgateClient, got: dict) -> list[dict]:
    """Label the held item as the others agreed on e-0, then correct it twice, as a script reading off
    the item's state would try; every reply with what names the item left out."""
    item = (got["item_id"], got["version_id"])
    trail = [_blind(got)]
    for label in (0, 1, 0):
        trail.append(
            _blind(client.run("submit_label", *item, {"earliest_error": label}, uuid.uuid4().hex, 2.0))
        )
    trail.append(_blind(client.run("next_item", DATASET)))
    return trail


def test_the_same_actions_on_items_with_different_other_labels_give_the_same_replies(server: Server) -> None:
    eve, mal = (
        StepgateClient(server.url, "eve", "eve-password"),
        StepgateClient(server.url, "mal", "mal-password"),
    )
    # eve is given e-0 (her label settles it: step 1 three times); mal e-1 (step 2, step 3: it stays open).
    held = {"eve": eve.run("next_item", DATASET), "mal": mal.run("next_item", DATASET)}
    assert [held[w]["external_id"] for w in ("eve", "mal")] == ["e-0", "e-1"]
    on_settled, on_open = _trail(eve, held["eve"]), _trail(mal, held["mal"])
    assert on_settled == on_open
    assert on_settled[1] == {"duplicate": False, "saved": True}
    assert set(on_settled[0]["progress"]) == {"total", "mine"}  # nothing that moves with the others' labels
    server.stop()
    with Store(server.db) as store:  # the premise: the two items did end in different states
        states = dict(
            store.fetchall(
                "SELECT i.external_id, s.status FROM item_state s JOIN items i ON i.id = s.item_id"
            )
        )
    assert (states["e-0"], states["e-1"]) == ("consensus", "open")


def test_a_label_on_an_item_never_handed_out_is_refused_and_nothing_is_stored(server: Server) -> None:
    mal = StepgateClient(server.url, "mal", "mal-password")
    held = mal.run("next_item", DATASET)
    other = held["item_id"] + 1
    with pytest.raises(ApiError, match="was not given to you"):
        mal.run("submit_label", other, held["version_id"] + 1, {"earliest_error": 0}, uuid.uuid4().hex, 1.0)
    with pytest.raises(ApiError, match="do not hold item"):
        mal.run("skip_item", DATASET, other)
    assert mal.run("next_item", DATASET)["item_id"] == held["item_id"]  # still mal's, nothing moved
    assert _stored_after_stop(server) == 4  # the four labels of the setup, none of mal's


BAD_LABELS = [
    ({"earliest_error": 0, "note": "x" * 5000}, 1.0, "at most 4,000"),
    ({"earliest_error": 0, "padding": "x" * 70_000}, 1.0, "bytes; at most"),
    ({"earliest_error": 0}, -5, "seconds_spent"),
    ({"earliest_error": 0}, 1e308, "seconds_spent"),
    ({"earliest_error": True}, 1.0, "not a step number"),
    ({"earliest_error": 99}, 1.0, "does not exist"),
    (["not", "an", "object"], 1.0, "object of fields"),
]


def test_every_field_of_a_label_is_bounded_and_a_refused_one_stores_nothing(server: Server) -> None:
    mal = StepgateClient(server.url, "mal", "mal-password")
    held = mal.run("next_item", DATASET)
    for payload, seconds, message in BAD_LABELS:
        with pytest.raises(ApiError, match=message):
            mal.run("submit_label", held["item_id"], held["version_id"], payload, uuid.uuid4().hex, seconds)
    for bad_id in ("1; DROP TABLE annotations", 2**70, -1, 1.5):
        with pytest.raises(ApiError):
            mal.run("submit_label", bad_id, held["version_id"], {"earliest_error": 0}, uuid.uuid4().hex, 1.0)
    with pytest.raises(ApiError, match="request id"):
        mal.run("submit_label", held["item_id"], held["version_id"], {"earliest_error": 0}, "r" * 129, 1.0)
    assert _stored_after_stop(server) == 4
