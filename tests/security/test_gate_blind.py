"""Quality gate blindness over HTTP: on a dual-annotated item the second annotator learns nothing of the
first one's verdict, criteria, reason or edit, neither from the API nor from the panel's events (the
tab, the disputes section, an item's lineage); an adjudicator does see them once the item is disputed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.client import StepgateClient
from bench.server import Server, start_server
from importers.records import ItemRecord
from services import annotate
from store import Store, users
from store.bulk import write_records
from store.datasets import update_settings
from tests.security.support import call_event, config, event_of, login

pytestmark = pytest.mark.browser  # starts the real app

DATASET = "gate-blind"
SECRET = "SECRET-of-ann"
IDENTITY = ("item_id", "version_id", "external_id", "question", "steps", "position", "annotation_id")
ALL = {"c1": True, "c2": True, "c3": True, "c4": True}


def _items() -> list[ItemRecord]:
    return [
        ItemRecord(
            external_id=f"g-{k}",
            question=f"Question {k}: how many bars are there?",
            steps={"candidate": [f"There are {k} bars.", f"So the answer is {k}."]},
            reference_answer=str(k),
        )
        for k in range(3)
    ]


def _label(store: Store, who: str, ref: str, payload: dict) -> int:
    user = users.get_user(store, who)
    dataset = annotate.dataset_for(store, DATASET)
    found = annotate.jump_to(store, user, dataset, ref)
    annotate.submit(
        store,
        annotator=user,
        item_id=found.item.item_id,
        version_id=found.item.version_id,
        payload=payload,
        request_id=uuid.uuid4().hex,
    )
    return found.item.item_id


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """Every item dual; ann rejected g-0 (with a reason and an edit that name the SECRET) and accepted g-1."""
    db = tmp_path / "gate-blind.duckdb"
    with Store(db) as store:
        for name in ("ann", "bob", "cy"):
            users.add_user(store, name, "annotator", f"{name}-password")
        users.add_user(store, "judy", "adjudicator", "judy-password")
        with store.writing() as tx:
            write_records(tx, DATASET, "quality_gate", _items(), "crystal")
        update_settings(store, DATASET, {"dual_percent": 100})
        rejected = {
            "verdict": "reject",
            "criteria": {**ALL, "c3": False},
            "reason": f"{SECRET}: the bars are not counted",
            "edited_steps": [f"{SECRET} step.", "So the answer is 0."],
        }
        server_items = {"g-0": _label(store, "ann", "g-0", rejected)}
        server_items["g-1"] = _label(store, "ann", "g-1", {"verdict": "accept", "criteria": ALL})
    server = start_server(db, "--team", "--no-demo")
    server.items = server_items  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.stop()


def _blind(reply: dict) -> dict:
    return {k: v for k, v in reply.items() if k not in IDENTITY}


def test_the_second_annotator_gets_the_same_reply_whatever_the_first_chose(server: Server) -> None:
    bob = StepgateClient(server.url, "bob", "bob-password")
    cy = StepgateClient(server.url, "cy", "cy-password")
    # Started items come first: bob gets g-0 (ann rejected it), cy g-1 (ann accepted it).
    on_rejected, on_accepted = bob.run("next_item", DATASET), cy.run("next_item", DATASET)
    assert (on_rejected["external_id"], on_accepted["external_id"]) == ("g-0", "g-1")
    assert _blind(on_rejected) == _blind(on_accepted)
    assert SECRET not in str(on_rejected) and "reject" not in str(on_rejected)
    label = {"verdict": "accept", "criteria": ALL}
    saved = bob.run("submit_label", on_rejected["item_id"], on_rejected["version_id"], label, "bob-1", 3.0)
    assert _blind(saved) == {"duplicate": False, "saved": True}


def _session(who, url: str, conf: dict, *calls: tuple[str, str, list]) -> list[str]:
    """One page's session: the tab opened, then each (element, trigger, data) event; the replies' text."""
    session = uuid.uuid4().hex
    tab, inputs = event_of(conf, "tab-quality_gate", "select")
    replies = [call_event(who, url, tab, [None] * len(inputs), session_hash=session)]
    for elem_id, trigger, data in calls:
        fn, _ = event_of(conf, elem_id, trigger)
        replies.append(call_event(who, url, fn, data, session_hash=session))
    assert all(status == 200 for status, _ in replies)
    return [text for _, text in replies]


def test_the_panels_events_show_a_second_annotator_nothing_of_the_first(server: Server) -> None:
    bob = login(server.url, "bob", "bob-password")
    conf = config(bob, server.url)
    item = server.items["g-0"]  # type: ignore[attr-defined]
    disputes = (("qg-dispute-refresh", "click", [DATASET]), ("qg-dispute-pick", "change", [DATASET, item]))
    opened, listed, shown = _session(bob, server.url, conf, *disputes)
    assert "g-0" in opened  # bob is handed ann's item ...
    assert SECRET not in opened and "verdict" not in opened  # ... and sees nothing of her label
    assert "settled by adjudicators" in listed and SECRET not in shown
    # Once bob has labelled too, the item is disputed: still nothing for annotators, all for the adjudicator.
    bob_api = StepgateClient(server.url, "bob", "bob-password")
    held = bob_api.run("next_item", DATASET)
    label = {"verdict": "accept", "criteria": ALL}
    bob_api.run("submit_label", held["item_id"], held["version_id"], label, "bob-2", 1.0)
    cy = login(server.url, "cy", "cy-password")
    for who in (bob, cy):
        assert not any(SECRET in text for text in _session(who, server.url, conf, *disputes))
    judy = login(server.url, "judy", "judy-password")
    _, listed, shown = _session(judy, server.url, conf, *disputes)
    assert "1 disputed item" in listed and SECRET in shown and "**ann**: **reject**" in shown
