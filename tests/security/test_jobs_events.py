"""A hostile annotator with a script gets nothing from the Jobs tab's and the perturbation history's
events: no checker's verdict, no job, no change of the generators; an admin's same calls work."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from bench.server import Server
from services import annotate, jobs, perturbation
from services.access import OPERATOR
from services.demo import populate_demo
from store import Store, users
from tests.security.support import call_event, config, event_of, login, make_team, team_server

pytestmark = pytest.mark.browser  # starts the real app


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict]]:
    db = tmp_path_factory.mktemp("jobs-http") / "team.duckdb"
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        perturbation.create_check_dataset(store, OPERATOR, "mathvista-quality-gate", "figs", "image", limit=1)
        jobs.run_pending(store)
        bob = users.get_user(store, "bob")
        assert bob is not None
        shown = annotate.next_item(store, bob, annotate.dataset_for(store, "figs"))
        assert shown is not None
        annotate.submit(
            store,
            annotator=bob,
            item_id=shown.item.item_id,
            version_id=shown.item.version_id,
            payload={"checks": {"I1": True, "I2": False}},
            request_id=uuid.uuid4().hex,
        )
        assert jobs.run_pending(store).done == 1  # the next variant, open for checking
    checked = {"dataset": "figs", "item_id": shown.item.item_id, "version_id": shown.item.version_id}
    with team_server(db, "--no-worker") as app:
        yield app, checked


def _calls(conf: dict, current: dict) -> list[tuple[str, int, list]]:
    calls = []
    for elem, data in (
        ("pc-history", [None, current]),
        ("jobs-refresh", ["all"]),
        ("jobs-run", ["all"]),
        ("jobs-retry", [None, "all"]),
        ("jobs-save", ["http", "http", "http://127.0.0.1:9/v1", "evil", "k", 5, "all"]),
        ("jobs-create", [None, "stolen", "image", 1, "all"]),
    ):
        fn, _ = event_of(conf, elem)
        calls.append((elem, fn, data))
    tab_fn, _ = event_of(conf, "tab-jobs", "select")
    calls.append(("tab-jobs", tab_fn, ["all"]))
    return calls


def test_an_annotator_is_refused_every_jobs_event_and_changes_nothing(server: tuple[Server, dict]) -> None:
    server, checked = server
    http = login(server.url, "ann")
    conf = config(http, server.url)
    for elem, fn_index, data in _calls(conf, checked):
        status, text = call_event(http, server.url, fn_index, data)
        assert status == 200, elem
        assert "only an admin can do this" in text, elem
        assert "bob" not in text and "I2" not in text and "perturb" not in text, elem
    admin = login(server.url, "lead")
    conf = config(admin, server.url)
    _, fn_index, data = next(c for c in _calls(conf, checked) if c[0] == "jobs-refresh")
    _, text = call_event(admin, server.url, fn_index, data)
    assert "Text jobs go to **none**" in text and "stolen" not in text  # the annotator changed nothing


def test_an_admin_sees_the_checkers_verdicts_in_the_history(server: tuple[Server, dict]) -> None:
    server, checked = server
    http = login(server.url, "lead")
    conf = config(http, server.url)
    session = uuid.uuid4().hex
    tab_fn, _ = event_of(conf, "tab-perturbation_check", "select")
    # The tab shows the admin the unit (its id stays in the session's state) and fills the dropdown.
    call_event(http, server.url, tab_fn, [None, None], session_hash=session)
    fn_index = _calls(conf, checked)[0][1]
    status, text = call_event(http, server.url, fn_index, ["figs", checked], session_hash=session)
    assert status == 200 and "bob: fail" in text and "I2" in text
