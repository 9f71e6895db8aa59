"""Drafts belong to one user, live on the server, and go at logout: nothing of them reaches a browser.

Before, drafts were kept in the browser under a signing key that Gradio sent to every client in
/config, and a shared browser kept one annotator's drafts for the next.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from store import Store, drafts, users
from tests.security.support import PASSWORD, config, login, team_server


def test_no_browser_state_and_no_key_is_sent_to_the_page(tmp_path: Path) -> None:
    with team_server(tmp_path / "page.duckdb", demo=True) as server:
        ann = login(server.url, "ann")
        conf = config(ann, server.url)
        kinds = {c.get("type") for c in conf["components"]}
        assert "browserstate" not in kinds
        page = ann.get(server.url, timeout=30).text + str(conf)
        assert "secret" not in str([c.get("props", {}) for c in conf["components"]]).lower()
        assert "stepgate-step-review-drafts" not in page and "stepgate-earliest-error-drafts" not in page


def test_a_users_drafts_are_cleared_when_they_log_out_and_nobody_elses(tmp_path: Path) -> None:
    db = tmp_path / "drafts.duckdb"
    with Store(db) as store:
        for name in ("ann", "bob"):
            users.add_user(store, name, "annotator", f"{name}-{PASSWORD}")
        for name in ("ann", "bob"):
            who = users.get_user(store, name)
            assert who is not None
            drafts.put_draft(store, who.id, "earliest_error", "ds|1|1", 3, datetime(2026, 1, 1))
    with team_server(db) as server:
        ann = login(server.url, "ann")
        out = ann.post(
            f"{server.url}/logout", headers={"Origin": server.url}, timeout=10, allow_redirects=False
        )
        assert out.status_code in (200, 303)
    with Store(db) as store:
        left = dict(
            store.fetchall(
                "SELECT a.name, count(*) FROM drafts d JOIN annotators a ON a.id = d.annotator_id GROUP BY a.name"
            )
        )
    assert left == {"bob": 1}
