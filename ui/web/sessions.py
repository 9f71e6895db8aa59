"""Login sessions: an unguessable cookie token -> user, checked against the store on every request.

A session ends when it is idle too long, when it is older than the absolute limit, at logout, and
at once when the user's password or role changes or the user is removed (store.users moves the
user's `sessions_valid_after`, also from the command line). Which Gradio session_hash belongs to
which user is kept here too: a queue stream or event is served only to the login that opened it.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass

from services import users
from services.records import Annotator
from ui.context import AppContext

__all__ = ["COOKIE", "Sessions"]

COOKIE = "stepgate-session"


@dataclass
class _Session:
    name: str
    issued_at: float
    last_seen: float


class Sessions:
    def __init__(self, ctx: AppContext) -> None:
        self._ctx = ctx
        self._by_token: dict[str, _Session] = {}
        self._owners: dict[str, tuple[str, float]] = {}  # session_hash -> (user name, last use)
        self._lock = threading.Lock()

    def open(self, name: str) -> str:
        token = secrets.token_urlsafe(32)
        now = time.time()
        with self._lock:
            self._by_token[token] = _Session(name, now, now)
        return token

    def close(self, token: str | None) -> str | None:
        """End one session; returns its user's name."""
        with self._lock:
            found = self._by_token.pop(token or "", None)
        return found.name if found else None

    def user(self, token: str | None) -> Annotator | None:
        """The live session's user, or None (and the session is dropped) when it has ended."""
        if not token:
            return None
        web = self._ctx.web
        now = time.time()
        with self._lock:
            session = self._by_token.get(token)
        if session is None:
            return None
        user = users.find(self._ctx.store, session.name)
        ended = (
            user is None
            or now - session.last_seen > web.session_idle_seconds
            or now - session.issued_at > web.session_max_seconds
            or (user.sessions_valid_after is not None and session.issued_at < user.sessions_valid_after)
        )
        if ended:
            self.close(token)
            return None
        session.last_seen = now
        return user

    def claim(self, session_hash: str, name: str) -> bool:
        """Bind a Gradio session_hash to the user on first use; False when another user holds it."""
        now = time.time()
        with self._lock:
            owner = self._owners.get(session_hash)
            if owner is not None and owner[0] != name:
                return False
            self._owners[session_hash] = (name, now)
            if len(self._owners) > 50_000:
                horizon = now - self._ctx.web.session_idle_seconds
                self._owners = {h: o for h, o in self._owners.items() if o[1] > horizon}
        return True

    def active(self) -> int:
        """Sessions open now (neither idle too long nor past their age), for the metrics."""
        now, web = time.time(), self._ctx.web
        with self._lock:
            return sum(
                1
                for s in self._by_token.values()
                if now - s.last_seen <= web.session_idle_seconds
                and now - s.issued_at <= web.session_max_seconds
            )
