"""Login sessions, Gradio session owners and failed logins, in the database (migration 12).

Every replica over one PostgreSQL database reads the same rows, so a cookie issued by one replica
works on the others, a logout on one ends the session on all, a Gradio session_hash belongs to one
login everywhere, and failed logins are counted once for all replicas. Only a SHA-256 of a session
token is stored: the token is 32 random bytes, so a fast hash is enough, and a copy of the database
hands out no working cookie. Times are seconds since the epoch (time.time()), as
`annotators.sessions_valid_after` is.

The few statements an app request may run outside a write transaction (a session's last use, a
session_hash's first owner) are single autocommit statements: they never wait for the write lock
that a long import holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "LoginSession",
    "admit_login",
    "claim_session_hash",
    "count_sessions",
    "end_session",
    "find_session",
    "login_failed",
    "login_succeeded",
    "open_session",
    "prune_sessions",
    "token_hash",
    "touch_session",
]


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class LoginSession:
    name: str
    issued_at: float
    last_seen: float


def open_session(store: Store, hashed: str, name: str, now: float) -> None:
    with store.writing() as tx:
        tx.execute(
            "INSERT INTO login_sessions (token_hash, name, issued_at, last_seen) VALUES (?, ?, ?, ?)",
            [hashed, name, now, now],
        )


def find_session(db: Store | Tx, hashed: str) -> LoginSession | None:
    row = db.fetchone("SELECT name, issued_at, last_seen FROM login_sessions WHERE token_hash = ?", [hashed])
    return LoginSession(str(row[0]), float(row[1]), float(row[2])) if row else None


def touch_session(store: Store, hashed: str, now: float) -> None:
    """The session's last use (one autocommit statement; only ever moves forward)."""
    store.execute(
        "UPDATE login_sessions SET last_seen = ? WHERE token_hash = ? AND last_seen < ?", [now, hashed, now]
    )


def end_session(store: Store, hashed: str) -> str | None:
    """Remove one session; returns its user's name (None when there was none)."""
    with store.writing() as tx:
        found = tx.scalar("SELECT name FROM login_sessions WHERE token_hash = ?", [hashed])
        if found is not None:
            tx.execute("DELETE FROM login_sessions WHERE token_hash = ?", [hashed])
        return None if found is None else str(found)


def count_sessions(db: Store | Tx, seen_after: float, issued_after: float) -> int:
    return int(
        db.scalar(
            "SELECT count(*) FROM login_sessions WHERE last_seen >= ? AND issued_at >= ?",
            [seen_after, issued_after],
        )
        or 0
    )


def prune_sessions(store: Store, seen_before: float, issued_before: float, owners_before: float) -> None:
    """Drop sessions past their idle or absolute limit, and session_hash owners older than a login lasts."""
    with store.writing() as tx:
        tx.execute(
            "DELETE FROM login_sessions WHERE last_seen < ? OR issued_at < ?", [seen_before, issued_before]
        )
        tx.execute("DELETE FROM gradio_sessions WHERE claimed_at < ?", [owners_before])


def claim_session_hash(store: Store, session_hash: str, name: str, now: float) -> str:
    """Bind a Gradio session_hash to a user on its first use, on any replica; returns its owner."""
    owner = store.scalar("SELECT name FROM gradio_sessions WHERE session_hash = ?", [session_hash])
    if owner is None:
        # A page's first events arrive together, each binding the same new hash. As a write transaction they
        # take turns: DuckDB refuses an insert of a key another transaction has in flight, ON CONFLICT or not
        # (the page's load then answered 500). Between replicas the primary key decides: one row wins.
        with store.writing() as tx:
            tx.execute(
                "INSERT INTO gradio_sessions (session_hash, name, claimed_at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_hash) DO NOTHING",
                [session_hash, name, now],
            )
            owner = tx.scalar("SELECT name FROM gradio_sessions WHERE session_hash = ?", [session_hash])
    return str(owner)


def admit_login(
    store: Store, name: str, address: str, now: float, window: float, per_name: int, per_address: int
) -> tuple[float, int | None]:
    """A login attempt counted before its password is checked: (seconds to wait, 0 when admitted;
    the attempt's id when admitted). Against its name the attempt is written as a failure at once, in
    the same write transaction as the count (serialised across replicas), so guesses at one name sent
    at once to several replicas cannot all pass the count; login_succeeded takes it back. Against the
    address only a failed attempt counts (login_failed): a team behind one address (an office, a
    balancer) logging in together at nine is not throttled for being many."""
    since = now - window
    with store.writing() as tx:
        wait = 0.0
        for kind, value, limit in (("name", name, per_name), ("address", address, per_address)):
            count, first = tx.fetchone(
                "SELECT count(*), min(failed_at) FROM login_failures WHERE kind = ? AND value = ? "
                "AND failed_at > ?",
                [kind, value, since],
            ) or (0, None)
            if int(count) >= limit and first is not None:
                # the oldest failure still counted leaves the window first
                oldest = tx.fetchall(
                    "SELECT failed_at FROM login_failures WHERE kind = ? AND value = ? AND failed_at > ? "
                    "ORDER BY failed_at DESC LIMIT ?",
                    [kind, value, since, limit],
                )
                wait = max(wait, float(oldest[-1][0]) + window - now)
        if wait > 0:
            return wait, None
        attempt = int(tx.scalar("SELECT nextval('login_attempt_ids')"))
        tx.execute(
            "INSERT INTO login_failures (attempt_id, kind, value, failed_at) VALUES (?, 'name', ?, ?)",
            [attempt, name, now],
        )
        if attempt % 100 == 0:  # now and then, forget what no window counts any more
            tx.execute("DELETE FROM login_failures WHERE failed_at <= ?", [since])
        return 0.0, attempt


def login_failed(store: Store, address: str, attempt: int, now: float) -> None:
    """The attempt was wrong: it now counts against its address too."""
    with store.writing() as tx:
        tx.execute(
            "INSERT INTO login_failures (attempt_id, kind, value, failed_at) VALUES (?, 'address', ?, ?)",
            [attempt, address, now],
        )


def login_succeeded(store: Store, name: str, attempt: int) -> None:
    """The attempt was right: it and the name's earlier failures no longer count."""
    with store.writing() as tx:
        tx.execute(
            "DELETE FROM login_failures WHERE attempt_id = ? OR (kind = 'name' AND value = ?)",
            [attempt, name],
        )
