"""A hostile annotator with a script gets no label from the Browse panel's events: each one is refused
by role (services.access), while the same call by an adjudicator does return the labels."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.server import Server
from services import annotate
from store import Store, users
from store.imports import import_file
from tests.conftest import PRMBENCH_FILE
from tests.security.support import call_event, config, event_of, login, make_team, team_server

pytestmark = pytest.mark.browser  # starts the real app

SECONDS = 4242.5  # bob's time on his label: a value that appears nowhere else
NO_FILTER = ["", "", "", "", "", None, "bob", "", "id", ""]  # ... annotator = bob


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("browse-http") / "team.duckdb"
    make_team(db)
    with Store(db) as store:
        import_file(store, PRMBENCH_FILE, dataset="prm")
        bob = users.get_user(store, "bob")
        assert bob is not None
        work = annotate.next_item(store, bob, annotate.dataset_for(store, "prm"))
        assert work is not None and work.item.item_id == 1
        annotate.submit(
            store,
            annotator=bob,
            item_id=1,
            version_id=work.item.version_id,
            payload={"original": "incorrect", "modification": "unreasonable", "difficulty": "hard"},
            request_id="bob-1",
            seconds_spent=SECONDS,
        )
    with team_server(db) as app:
        yield app


def _calls(conf: dict) -> list[tuple[int, list]]:
    """Every Browse event with the inputs a script would send to learn about bob's label on item 1."""
    calls = []
    open_fn, _ = event_of(conf, "br-open")
    calls.append((open_fn, ["1", *NO_FILTER]))
    search_fn, _ = event_of(conf, "br-search")
    calls.append((search_fn, NO_FILTER))
    next_fn, _ = event_of(conf, "br-next")
    calls.append((next_fn, [-1, *NO_FILTER]))
    tab_fn, _ = event_of(conf, "tab-browse", "select")
    calls.append((tab_fn, ["?tab=browse&annotator=bob&item=1"]))
    return calls


def test_an_annotator_gets_no_label_from_any_browse_event(server: Server) -> None:
    http = login(server.url, "ann")
    conf = config(http, server.url)
    for fn_index, data in _calls(conf):
        status, text = call_event(http, server.url, fn_index, data)
        assert status == 200
        assert str(SECONDS) not in text and "unreasonable" not in text and "prm_test_p1_0" not in text
        assert "adjudicators and admins" in text


def test_the_same_calls_by_an_adjudicator_return_the_labels(server: Server) -> None:
    http = login(server.url, "judge")
    conf = config(http, server.url)
    fn_index, data = _calls(conf)[0]
    status, text = call_event(http, server.url, fn_index, data)
    assert status == 200 and str(SECONDS) in text and "unreasonable" in text
