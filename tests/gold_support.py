"""Annotators at work on the step-review demo, for the gold tests (store calls, no server)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from services import annotate
from services.leasing import leases_of
from store import Store, users, work
from store.datasets import get_dataset

DATASET = "prmbench-step-review"
GOOD = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
WRONG = {"original": "incorrect", "modification": "unreasonable"}


def label_items(
    store: Store, name: str, n: int, payload_for: Callable[[int], dict[str, Any]]
) -> list[tuple[int, str]]:
    """``name`` takes and labels ``n`` items: (item id, id in the source file) in the order handed out."""
    who = users.get_user(store, name)
    dataset = get_dataset(store, DATASET)
    handed = []
    for _ in range(n):
        got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
        assert got is not None
        handed.append((got.item.item_id, got.item.external_id))
        annotate.submit(
            store,
            annotator=who,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=payload_for(got.item.item_id),
            request_id=uuid.uuid4().hex,
            seconds_spent=5.0,
        )
    return handed


def label(store: Store, name: str, n: int, payload: dict[str, Any]) -> list[str]:
    """``name`` labels ``n`` items with one payload; their ids in the source file."""
    return [ref for _, ref in label_items(store, name, n, lambda _: payload)]
