"""Login sessions: an unguessable cookie token -> user, checked against the store on every request.

A session ends when it is idle too long, when it is older than the absolute limit, at logout, and
at once when the user's password or role changes or the user is removed (store.users moves the
user's `sessions_valid_after`, also from the command line). Which Gradio session_hash belongs to
which user is kept here too: a queue stream or event is served only to the login that opened it.

Both live in the database (services/sessions.py; only a SHA-256 of the token), so every replica over
one PostgreSQL database sees the same sessions. The guard checks a session on every request, so each
replica over PostgreSQL keeps a session row it read for RECHECK_SECONDS (2 s, the age of the store's
read caches there, which hold the user and its role): a logout, a password or role change takes
effect on the next request on the replica that made it, and within those 2 s on the others. On a
DuckDB file, which one process owns, that process's memory of a session is the truth: it reads a
row once and changes it itself (measured: a row read costs ~0.3-2 ms there, a check from memory ~1 us).
A session's last use is written at most every `_touch_seconds` (a minute at most), not per request,
and by a thread of its own: a commit (a WAL sync on DuckDB, ~8 ms) never holds up the event loop.
A Gradio session_hash seen for the first time is bound off the event loop too (owner()).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from services import sessions as rows
from services import users
from services.records import Annotator
from ui.context import AppContext

__all__ = ["COOKIE", "Sessions"]

COOKIE = "stepgate-session"
RECHECK_SECONDS = 2.0  # a session row read is trusted this long before it is read again
_MAX_KNOWN = 50_000  # entries kept in memory before the oldest are forgotten (the database keeps them)


@dataclass
class _Known:
    name: str
    issued_at: float
    last_seen: float  # the last use this replica knows of (its own, or the database's)
    written: float  # the last use written to the database
    read_at: float  # monotonic time the row was read


class Sessions:
    def __init__(
        self,
        ctx: AppContext,
        *,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`wall` stamps what the database keeps (logins, last uses); `monotonic` times this replica's
        own memory of a row. Both are the system's clocks; a test may pass clocks it moves itself."""
        self._ctx = ctx
        self._wall, self._monotonic = wall, monotonic
        self._known: dict[str, _Known] = {}  # token hash -> what this replica read
        self._owners: dict[str, str] = {}  # session_hash -> user name (an owner never changes)
        self._lock = threading.Lock()
        idle = ctx.web.session_idle_seconds
        self._touch_seconds = min(60.0, idle / 10)
        self._pruned = 0.0
        self._recheck = RECHECK_SECONDS if rows.shared(ctx.store) else None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stepgate-sessions")

    def open(self, name: str) -> str:
        token = secrets.token_urlsafe(32)
        now = self._wall()
        hashed = rows.token_hash(token)
        rows.open_session(self._ctx.store, hashed, name, now)
        with self._lock:
            self._known[hashed] = _Known(name, now, now, now, self._monotonic())
            self._forget_some()
        if now - self._pruned > 600:  # expired rows go now and then
            self._pruned = now
            web = self._ctx.web
            rows.prune(
                self._ctx.store,
                seen_before=now - web.session_idle_seconds,
                issued_before=now - web.session_max_seconds,
                owners_before=now - web.session_max_seconds - web.session_idle_seconds,
            )
        return token

    def close(self, token: str | None) -> str | None:
        """End one session; returns its user's name."""
        if not token:
            return None
        hashed = rows.token_hash(token)
        with self._lock:
            self._known.pop(hashed, None)
        return rows.end(self._ctx.store, hashed)

    def _read(self, hashed: str) -> _Known | None:
        """The session as this replica knows it, read again from the database once it is too old."""
        mono = self._monotonic()
        with self._lock:
            known = self._known.get(hashed)
        if known is not None and (self._recheck is None or mono - known.read_at <= self._recheck):
            return known
        row = rows.find(self._ctx.store, hashed)
        with self._lock:
            if row is None:
                self._known.pop(hashed, None)
                return None
            last = max(row.last_seen, known.last_seen if known else 0.0)
            fresh = _Known(row.name, row.issued_at, last, row.last_seen, mono)
            self._known[hashed] = fresh
            self._forget_some()
        return fresh

    def user(self, token: str | None) -> Annotator | None:
        """The live session's user, or None (and the session is dropped) when it has ended."""
        if not token:
            return None
        hashed = rows.token_hash(token)
        session = self._read(hashed)
        if session is None:
            return None
        web = self._ctx.web
        now = self._wall()
        user = users.find(self._ctx.store, session.name)
        ended = (
            user is None
            or now - session.last_seen > web.session_idle_seconds
            or now - session.issued_at > web.session_max_seconds
            or (user.sessions_valid_after is not None and session.issued_at < user.sessions_valid_after)
        )
        if ended:
            with self._lock:
                self._known.pop(hashed, None)
            self._writer.submit(rows.end, self._ctx.store, hashed)
            return None
        session.last_seen = now
        if now - session.written > self._touch_seconds:
            session.written = now
            self._writer.submit(rows.touch, self._ctx.store, hashed, now)
        return user

    def claim(self, session_hash: str, name: str) -> bool:
        """Bind a Gradio session_hash to the user on first use; False when another user holds it."""
        with self._lock:
            owner = self._owners.get(session_hash)
        if owner is None:
            owner = rows.claim_session_hash(self._ctx.store, session_hash, name, self._wall())
            with self._lock:
                if len(self._owners) >= _MAX_KNOWN:
                    self._owners.clear()  # the database still knows them
                self._owners[session_hash] = owner
        return owner == name

    async def owns(self, session_hash: str, name: str) -> bool:
        """claim() for the event loop: from memory when this replica has seen the hash, else bound
        in the database by a worker thread."""
        with self._lock:
            owner = self._owners.get(session_hash)
        if owner is not None:
            return owner == name
        return await asyncio.to_thread(self.claim, session_hash, name)

    def active(self) -> int:
        """Sessions open now (neither idle too long nor past their age), for the metrics."""
        now, web = self._wall(), self._ctx.web
        return rows.count(
            self._ctx.store,
            seen_after=now - web.session_idle_seconds,
            issued_after=now - web.session_max_seconds,
        )

    def _forget_some(self) -> None:
        """Called under the lock: keep the memory bounded (the oldest reads go first)."""
        if len(self._known) > _MAX_KNOWN:
            for hashed in sorted(self._known, key=lambda h: self._known[h].read_at)[: _MAX_KNOWN // 10]:
                del self._known[hashed]
