"""Finding 8: login is throttled, does the same work for unknown names, and never stalls others.

Timing and load are bounded: a few dozen logins, a few hundred API calls, on 127.0.0.1.
"""

from __future__ import annotations

import multiprocessing
import statistics
import threading
import time
import uuid

import numpy as np
import pytest
import requests

from tests.security.support import login, run_api, team_server

pytestmark = pytest.mark.slow


def _attempt(url: str, name: str, password: str) -> requests.Response:
    return requests.post(f"{url}/login", data={"username": name, "password": password}, timeout=60)


def test_wrong_logins_are_throttled_per_name_and_per_address(tmp_path) -> None:
    with team_server(
        tmp_path / "throttle.duckdb", "--login-failures-per-name", "5", "--login-failures-per-address", "12"
    ) as server:
        for _ in range(5):
            assert _attempt(server.url, "ann", "guess-guess").status_code == 401
        blocked = _attempt(server.url, "ann", "ann-secret-password-1")  # even the right password waits now
        assert blocked.status_code == 429 and "Too many failed logins" in blocked.text
        assert "stepgate-session" not in blocked.cookies
        # Other names from the same address go on until the address's own limit.
        for k in range(7):
            assert _attempt(server.url, f"nobody{k}", "guess-guess").status_code == 401
        assert _attempt(server.url, "bob", "bob-secret-password-1").status_code == 429


@pytest.mark.serial  # a timing comparison: run alone, after the rest (scripts/test.sh)
def test_a_wrong_password_takes_as_long_for_an_unknown_name_as_for_a_known_one(tmp_path) -> None:
    with team_server(
        tmp_path / "timing.duckdb",
        "--login-failures-per-name",
        "1000",
        "--login-failures-per-address",
        "1000",
    ) as server:
        known, unknown = [], []
        for k in range(40):
            for name, into in (("ann", known), (f"ghost{k}", unknown)):
                started = time.perf_counter()
                assert _attempt(server.url, name, "wrong-password").status_code == 401
                into.append(time.perf_counter() - started)
        difference = abs(statistics.median(known) - statistics.median(unknown)) * 1000
        print(
            f"login median: known {statistics.median(known) * 1000:.1f} ms, unknown "
            f"{statistics.median(unknown) * 1000:.1f} ms, difference {difference:.2f} ms"
        )
        # The leak this guards against is skipping the hash for unknown names: the unknown median would
        # then be a small fraction of the known one. Quiet, the two differ by 0.5-3 ms; on a loaded
        # machine scheduling noise alone moves a median of 40 by a quarter, hence the relative bound.
        assert difference < max(5, 0.35 * statistics.median(known) * 1000)


def _next_item_times(http, url: str, session: str, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        reply = run_api(http, url, "next_item", "qwq-earliest-error", session_hash=session)
        times.append(time.perf_counter() - started)
        assert reply.status_code == 200
    return times


def _hammer(url: str, ready, attacking, stop, answered) -> None:  # type: ignore[no-untyped-def]
    """The attackers, in a process of their own at low priority: their client work is not the server's
    (an attacker runs on another machine), and their threads must not share the measuring client's GIL."""
    import os

    os.nice(19)

    def one(k: int) -> None:
        while not stop.is_set():
            if not attacking.wait(0.05):
                continue
            _attempt(url, f"attacker{k}", "wrong-password")
            with answered.get_lock():
                answered.value += 1

    threads = [threading.Thread(target=one, args=(k,), daemon=True) for k in range(20)]
    for t in threads:
        t.start()
    ready.set()
    for t in threads:
        t.join(timeout=120)


@pytest.mark.serial  # a timing comparison: run alone, after the rest (scripts/test.sh)
def test_twenty_concurrent_wrong_logins_leave_other_users_next_item_fast(tmp_path) -> None:
    """Unloaded and loaded windows alternate, so the machine's other work weighs on both alike."""
    with team_server(
        tmp_path / "stall.duckdb",
        "--login-failures-per-name",
        "1000",
        "--login-failures-per-address",
        "1000",
        demo=True,
    ) as server:
        ann, session = login(server.url, "ann"), uuid.uuid4().hex
        _next_item_times(ann, server.url, session, 20)  # warm up
        context = multiprocessing.get_context("spawn")
        ready, attacking, stop = context.Event(), context.Event(), context.Event()
        answered = context.Value("i", 0)
        attackers = context.Process(
            target=_hammer, args=(server.url, ready, attacking, stop, answered), daemon=True
        )
        attackers.start()
        assert ready.wait(60), "the attackers' process did not start"
        _next_item_times(ann, server.url, session, 20)  # settle after the start
        unloaded, loaded = [], []
        try:
            for _ in range(3):
                unloaded += _next_item_times(ann, server.url, session, 40)
                attacking.set()
                time.sleep(0.3)  # all 20 logins in flight
                loaded += _next_item_times(ann, server.url, session, 40)
                attacking.clear()
                time.sleep(0.5)  # the queued hashes drain
        finally:
            stop.set()
            attackers.join(timeout=60)
        logins = answered.value
        p95 = {k: float(np.percentile(v, 95)) * 1000 for k, v in (("unloaded", unloaded), ("loaded", loaded))}
        print(
            f"next_item p95: unloaded {p95['unloaded']:.1f} ms, under 20 concurrent wrong logins "
            f"{p95['loaded']:.1f} ms ({logins} wrong logins answered meanwhile)"
        )
        assert logins >= 20
        # Within 2x the unloaded p95; on a quiet machine where that p95 is under 3 ms, 2x is within the
        # run-to-run noise of a 120-call window, so the bound is never tighter than unloaded + 3 ms.
        assert p95["loaded"] <= max(2 * p95["unloaded"], p95["unloaded"] + 3.0)


def test_a_new_local_name_needs_a_password_of_eight_characters(tmp_path) -> None:
    """Local mode (127.0.0.1 without --team): a new name is an account, so the one password rule holds."""
    from tests.browser_support import running

    with running(tmp_path / "local.duckdb", "--no-demo") as server:
        for password in ("", "short"):
            refused = _attempt(server.url, "newcomer", password)
            assert refused.status_code == 401 and "stepgate-session" not in refused.cookies
            assert "at least 8 characters" in refused.text and "Wrong name" not in refused.text
        page = requests.get(f"{server.url}/login", timeout=30).text
        assert "8 characters or more" in page
        assert _attempt(server.url, "newcomer", "long-enough").status_code == 200
        # the account now has that password: the short one is wrong from here on
        assert "Wrong name or password" in _attempt(server.url, "newcomer", "short").text
