"""Gradio session hashes bound to their users (store.sessions): a page's first events arrive together,
each binding the same new hash, and every one of them gets its owner."""

from __future__ import annotations

import threading

import pytest

from store import Store
from store.sessions import claim_session_hash

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL


def _claimed_together(store: Store, session_hash: str, names: list[str]) -> tuple[list[str], list[Exception]]:
    """Each name binds the hash in its own thread, all released at once: the owners told, the errors raised."""
    start, owners, errors = threading.Barrier(len(names)), [], []

    def claim(name: str) -> None:
        start.wait()
        try:
            owners.append(claim_session_hash(store, session_hash, name, 1.0))
        except Exception as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=claim, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return owners, errors


def test_events_binding_one_new_hash_at_once_all_get_the_one_owner(store: Store) -> None:
    """Before, DuckDB refused the second insert of a key still in flight and the page's load answered
    500 (a reload in the browser tests, now and then)."""
    for round_ in range(40):
        owners, errors = _claimed_together(store, f"page-{round_}", ["ann", "ann", "bob", "ann"])
        assert errors == [], f"round {round_}: {errors[0]!r}"
        assert len(owners) == 4 and len(set(owners)) == 1, owners
