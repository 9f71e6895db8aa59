"""Finding 7: a password change, a role change or a removal ends the user's sessions at once;
sessions expire; logout is a POST from the app's own page, and GET /logout logs nobody out."""

from __future__ import annotations

import time

import pytest

from tests.browser_support import cli
from tests.security.support import PASSWORD, call_event, config, event_of, login, open_page, team_server

pytestmark = pytest.mark.browser


def _works(http, url: str) -> bool:
    reply = http.get(f"{url}/gradio_api/info", timeout=30)
    assert reply.status_code in (200, 401), reply.text[:200]
    return reply.status_code == 200


def test_password_and_role_changes_end_the_users_open_sessions_at_once(tmp_path) -> None:
    with team_server(tmp_path / "sessions.duckdb") as server:
        ann, bob, lead = login(server.url, "ann"), login(server.url, "bob"), login(server.url, "lead")
        assert _works(ann, server.url) and _works(bob, server.url)
        conf = config(lead, server.url)
        page = open_page(lead, server.url, conf)  # fills the annotator dropdown, as the page does
        set_password, _ = event_of(conf, "data-user-password-save")
        status, text = call_event(lead, server.url, set_password, ["ann", "a-brand-new-password"], page)
        assert status == 200 and "password of ann changed" in text
        assert not _works(ann, server.url), "ann's old session survived her password change"
        assert login(server.url, "ann", "a-brand-new-password")
        change_role, _ = event_of(conf, "data-user-role-save")
        status, text = call_event(lead, server.url, change_role, ["bob", "adjudicator"], page)
        assert "bob is now adjudicator" in text
        assert not _works(bob, server.url), "bob's session kept his old role"
        assert _works(lead, server.url)  # the admin's own session is untouched


def test_a_removed_user_cannot_log_in_and_keeps_no_session(tmp_path) -> None:
    db = tmp_path / "removed.duckdb"
    with team_server(db) as server:
        cat = login(server.url, "cat")
        assert _works(cat, server.url)
    cli("users", "remove", "cat", db=db)
    assert "\ncat\t" not in "\n" + cli("users", "list", db=db).stdout
    with team_server(db) as server:
        reply = cat.post(
            f"{server.url}/login", data={"username": "cat", "password": f"cat-{PASSWORD}"}, timeout=60
        )
        assert reply.status_code == 401 and "stepgate-session" not in reply.cookies
        assert not _works(cat, server.url)


def test_idle_sessions_expire(tmp_path) -> None:
    with team_server(tmp_path / "idle.duckdb", "--session-idle-hours", "0.001") as server:  # 3.6 s
        ann = login(server.url, "ann")
        assert _works(ann, server.url)
        time.sleep(4.5)
        assert not _works(ann, server.url)


def test_logout_is_a_same_origin_post_and_get_logs_nobody_out(tmp_path) -> None:
    with team_server(tmp_path / "logout.duckdb") as server:
        ann = login(server.url, "ann")
        assert ann.get(f"{server.url}/logout", timeout=10).status_code == 405
        assert _works(ann, server.url), "GET /logout (a link on any site) logged the user out"
        forged = ann.post(f"{server.url}/logout", headers={"Origin": "http://evil.example"}, timeout=10)
        assert forged.status_code == 403 and _works(ann, server.url)
        silent = ann.post(f"{server.url}/logout", timeout=10, allow_redirects=False)
        assert silent.status_code == 403 and _works(ann, server.url)
        token = ann.cookies["stepgate-session"]
        done = ann.post(
            f"{server.url}/logout", headers={"Origin": server.url}, timeout=10, allow_redirects=False
        )
        assert done.status_code == 303 and done.headers["location"] == "/login"
        ann.cookies.set("stepgate-session", token)  # a copy of the cookie kept by the attacker
        assert not _works(ann, server.url)


def test_removing_a_user_ends_their_sessions_in_the_running_app(tmp_path) -> None:
    """The same check the guard makes on every request, after services.users.remove."""
    from services import users as user_service
    from store import Store, users
    from ui.context import AppContext
    from ui.web.sessions import Sessions

    with Store(tmp_path / "remove.duckdb") as store:
        lead = users.add_user(store, "lead", "admin", "lead-password")
        users.add_user(store, "cat", "annotator", "cat-password")
        sessions = Sessions(AppContext(store=store))
        token = sessions.open("cat")
        assert sessions.user(token).name == "cat"
        user_service.remove(store, lead, "cat")
        assert sessions.user(token) is None
        assert users.authenticate(store, "cat", "cat-password") is None
