"""Login sessions and failed logins kept in the database, shared by every app replica.

The web layer (ui/web/sessions.py, ui/web/throttle.py) decides what a session or a login attempt
may do; this module only reaches the rows (store/sessions.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store import sessions as rows
from store.sessions import LoginSession, token_hash

if TYPE_CHECKING:
    from store import Store

__all__ = [
    "LoginSession",
    "admit_login",
    "claim_session_hash",
    "count",
    "end",
    "find",
    "login_failed",
    "login_succeeded",
    "open_session",
    "prune",
    "shared",
    "token_hash",
    "touch",
]


def open_session(store: Store, hashed: str, name: str, now: float) -> None:
    rows.open_session(store, hashed, name, now)


def find(store: Store, hashed: str) -> LoginSession | None:
    return rows.find_session(store, hashed)


def touch(store: Store, hashed: str, now: float) -> None:
    rows.touch_session(store, hashed, now)


def end(store: Store, hashed: str) -> str | None:
    return rows.end_session(store, hashed)


def count(store: Store, seen_after: float, issued_after: float) -> int:
    return rows.count_sessions(store, seen_after, issued_after)


def prune(store: Store, seen_before: float, issued_before: float, owners_before: float) -> None:
    rows.prune_sessions(store, seen_before, issued_before, owners_before)


def claim_session_hash(store: Store, session_hash: str, name: str, now: float) -> str:
    return rows.claim_session_hash(store, session_hash, name, now)


def admit_login(
    store: Store, name: str, address: str, now: float, window: float, per_name: int, per_address: int
) -> tuple[float, int | None]:
    return rows.admit_login(store, name, address, now, window, per_name, per_address)


def login_failed(store: Store, address: str, attempt: int, now: float) -> None:
    rows.login_failed(store, address, attempt, now)


def login_succeeded(store: Store, name: str, attempt: int) -> None:
    rows.login_succeeded(store, name, attempt)


def shared(store: Store) -> bool:
    """Other processes may open, end or touch sessions in this database (replicas over PostgreSQL);
    False when this process owns it (a DuckDB file), where its own memory of a session stays true."""
    return not store.engine.exclusive
