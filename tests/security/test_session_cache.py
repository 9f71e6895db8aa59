"""The session check every request meets is answered from memory (ui/web/sessions.py), yet it hides
nothing: a session's last use is written at most once per touch interval (a minute by default), and
a logout, a role or password change, a removal, an idle or absolute limit ends the session on the very
next request. Real DuckDB files; the session rows read back from the database.

Across replicas over PostgreSQL (a logout on one seen by another within RECHECK_SECONDS) the proof
is tests/ui/test_replicas_http.py (over HTTP) and tests/store/test_replicas.py (the rows).
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from services import sessions as rows
from services import users as user_service
from store import Store, users
from ui.context import AppContext, WebSettings
from ui.web.sessions import Sessions


class Clock:
    """Both of Sessions' clocks, moved by the test: hours of use in a fraction of a second."""

    def __init__(self) -> None:
        self.now, self.mono = time.time(), 1_000.0

    def wall(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.mono += seconds

    def sessions(self, store: Store, web: WebSettings) -> Sessions:
        return Sessions(AppContext(store=store, web=web), wall=self.wall, monotonic=self.monotonic)


def _row_last_seen(store: Store, token: str) -> float:
    found = rows.find(store, rows.token_hash(token))
    assert found is not None
    return found.last_seen


def test_a_session_is_written_at_most_once_per_touch_interval_under_many_requests(tmp_path: Path) -> None:
    with Store(tmp_path / "touch.duckdb") as store:
        users.add_user(store, "ann", "annotator", "ann-password")
        # idle limit 20 s: the last use is written every 2 s at most (a tenth of it, never over a minute)
        clock = Clock()
        sessions = clock.sessions(store, WebSettings(session_idle_seconds=20))
        token = sessions.open("ann")
        written = [_row_last_seen(store, token)]
        for _ in range(1_000):  # 5 s of requests, one every 5 ms
            clock.advance(0.005)
            assert sessions.user(token) is not None
            sessions._writer.submit(lambda: None).result()  # a write handed to the writer thread is done
            seen = _row_last_seen(store, token)
            if seen != written[-1]:
                written.append(seen)
        # the login's row and a touch past 2 s and past 4 s: 3 writes for 1,000 requests
        assert len(written) == 3, written
        assert all(b - a >= 2.0 for a, b in itertools.pairwise(written)), written
        assert written[-1] > written[0] + 4.0  # the last use written is the clock's, not the login's


def test_the_touch_interval_is_a_tenth_of_the_idle_limit_and_never_over_a_minute(tmp_path: Path) -> None:
    with Store(tmp_path / "interval.duckdb") as store:
        for idle, touch in ((20, 2.0), (600, 60.0), (8 * 3600, 60.0)):
            web = WebSettings(session_idle_seconds=idle)
            assert Sessions(AppContext(store=store, web=web))._touch_seconds == touch


def test_a_logout_role_password_change_and_removal_end_a_session_on_its_next_request(tmp_path: Path) -> None:
    """Each session was just checked (so held in memory) when the change happens: the next check
    refuses it. Would fail if the memory of a session or of its user hid the change."""
    with Store(tmp_path / "ends.duckdb") as store:
        lead = users.add_user(store, "lead", "admin", "lead-password")
        for name in ("ann", "bob", "cat", "dan"):
            users.add_user(store, name, "annotator", f"{name}-password")
        sessions = Sessions(AppContext(store=store))
        tokens = {name: sessions.open(name) for name in ("ann", "bob", "cat", "dan", "lead")}
        for name, token in tokens.items():
            user = sessions.user(token)
            assert user is not None and user.name == name

        assert sessions.close(tokens["ann"]) == "ann"
        assert sessions.user(tokens["ann"]) is None
        user_service.set_role(store, lead, "bob", "adjudicator")
        assert sessions.user(tokens["bob"]) is None
        user_service.set_password(store, lead, "cat", "a-brand-new-password")
        assert sessions.user(tokens["cat"]) is None
        user_service.remove(store, lead, "dan")
        assert sessions.user(tokens["dan"]) is None
        assert rows.find(store, rows.token_hash(tokens["ann"])) is None  # the logout's row is gone
        found = sessions.user(tokens["lead"])  # the admin's own session is untouched
        assert found is not None and found.name == "lead"


def test_a_session_past_its_idle_or_absolute_limit_is_refused_though_just_checked(tmp_path: Path) -> None:
    with Store(tmp_path / "limits.duckdb") as store:
        users.add_user(store, "ann", "annotator", "ann-password")
        clock = Clock()
        idle = clock.sessions(store, WebSettings(session_idle_seconds=1))
        token = idle.open("ann")
        assert idle.user(token) is not None
        clock.advance(0.9)
        assert idle.user(token) is not None  # used again within the second: a new second starts
        clock.advance(1.3)
        assert idle.user(token) is None
        absolute = clock.sessions(store, WebSettings(session_max_seconds=3))
        token = absolute.open("ann")
        for _ in range(40):  # in use for 2 s, every 50 ms: never idle
            clock.advance(0.05)
            assert absolute.user(token) is not None
        clock.advance(1.3)  # 3.3 s after the login
        assert absolute.user(token) is None
