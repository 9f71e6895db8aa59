"""A hostile annotator with a script gets no other annotator's label from the Browse panel's events.

Annotators browse their own finished work (services.browse scopes every use case): on an open blind
item that both bob and ann labelled, ann's calls return her own label and time and never bob's, and
every way of asking for bob's work (the annotator filter, a link, a state) is refused. The same call
by an adjudicator does return bob's label.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bench.server import Server
from services import annotate
from services.imports import import_file
from store import Store, users
from store.datasets import update_settings
from tests.conftest import PRMBENCH_FILE
from tests.security.support import call_event, config, event_of, login, make_team, team_server

pytestmark = pytest.mark.browser  # starts the real app

SECONDS = 76543.2109  # bob's time on his label: a value that appears nowhere else (not in a timestamp)
ANN_SECONDS = 65432.1987  # ann's on hers
BOBS = ["", "", "", "", "", None, "bob", "", "id", ""]  # ... annotator = bob
MINE = ["", "", "", "", "", None, "", "", "id", ""]
OPEN_STATE = ["", "", "", "", "open", None, "", "", "id", ""]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("browse-http") / "team.duckdb"
    make_team(db)
    with Store(db) as store:
        import_file(store, PRMBENCH_FILE, dataset="prm")
        update_settings(store, "prm", {"annotators_per_item": 3})  # two labels leave item 1 open
        labels = (
            ("bob", {"original": "incorrect", "modification": "unreasonable", "difficulty": "hard"}, SECONDS),
            ("ann", {"original": "correct", "modification": "reasonable", "difficulty": "easy"}, ANN_SECONDS),
        )
        for name, payload, seconds in labels:
            user = users.get_user(store, name)
            assert user is not None
            work = annotate.next_item(store, user, annotate.dataset_for(store, "prm"))
            assert work is not None and work.item.item_id == 1
            annotate.submit(
                store,
                annotator=user,
                item_id=1,
                version_id=work.item.version_id,
                payload=payload,
                request_id=f"{name}-1",
                seconds_spent=seconds,
            )
    with team_server(db) as app:
        yield app


def _label_tables(text: str) -> list[dict]:
    """The label tables (Dataframes with an annotator column) in the event's answer."""
    tables = []
    for line in text.splitlines():
        message = json.loads(line[5:])
        for value in (message.get("output") or {}).get("data") or []:
            if isinstance(value, dict) and value.get("__type__") == "update":  # a table shown with its rows
                value = value.get("value")
            if isinstance(value, dict) and "annotator" in (value.get("headers") or []):
                tables.append(value)
    return tables


def _no_trace_of_bob(text: str) -> None:
    assert str(SECONDS) not in text
    for table in _label_tables(text):
        column = table["headers"].index("annotator")
        assert {row[column] for row in table["data"]} <= {"ann"}


def test_an_annotator_opening_an_open_item_she_labelled_sees_only_her_label(server: Server) -> None:
    http = login(server.url, "ann")
    conf = config(http, server.url)
    open_fn, _ = event_of(conf, "br-open")
    status, text = call_event(http, server.url, open_fn, ["1", *MINE])
    assert status == 200 and str(ANN_SECONDS) in text and "Your own labels only" in text
    assert len(_label_tables(text)) == 1
    _no_trace_of_bob(text)
    tab_fn, _ = event_of(conf, "tab-browse", "select")
    status, text = call_event(http, server.url, tab_fn, ["?tab=browse&item=1"])
    assert status == 200 and str(ANN_SECONDS) in text
    _no_trace_of_bob(text)


def test_every_way_of_asking_for_anothers_work_is_refused(server: Server) -> None:
    http = login(server.url, "cat")  # cat labelled nothing: item 1 is not her finished work
    conf = config(http, server.url)
    open_fn, _ = event_of(conf, "br-open")
    search_fn, _ = event_of(conf, "br-search")
    next_fn, _ = event_of(conf, "br-next")
    tab_fn, _ = event_of(conf, "tab-browse", "select")
    export_fn, _ = event_of(conf, "br-export")
    calls = [
        (open_fn, ["1", *MINE], "not among your finished work"),
        (open_fn, ["1", *BOBS], "not among your finished work"),
        (search_fn, BOBS, "adjudicators and admins"),
        (search_fn, OPEN_STATE, "adjudicators and admins"),
        (next_fn, [None, -1, *BOBS], "adjudicators and admins"),  # the step (a State), the page, the filter
        (tab_fn, ["?tab=browse&annotator=bob&item=1"], "adjudicators and admins"),
        (export_fn, ["log-jsonl", *MINE], "adjudicators and admins"),
    ]
    for fn_index, data, said in calls:
        status, text = call_event(http, server.url, fn_index, data)
        assert status == 200 and said in text, (data, text[-400:])
        _no_trace_of_bob(text)
        assert str(ANN_SECONDS) not in text and not _label_tables(text)


def test_the_same_calls_by_an_adjudicator_return_the_labels(server: Server) -> None:
    http = login(server.url, "judge")
    conf = config(http, server.url)
    fn_index, _ = event_of(conf, "br-open")
    status, text = call_event(http, server.url, fn_index, ["1", *BOBS])
    assert status == 200 and str(SECONDS) in text and "unreasonable" in text and str(ANN_SECONDS) in text
