"""Browse's gate-state and difficulty filters and its plots for the current filter, on a real DuckDB
file: the states the store holds (accepted, rejected, disputed ...) plus "regenerating" (a rejected
item whose regeneration job is queued or running), the decided difficulty, and labels and time per
annotator over exactly the filter's items."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services import annotate, browse
from services.browse import BrowseFilter
from services.errors import InvalidInput
from services.imports import import_file
from store import Store
from store.datasets import get_dataset
from store.state import set_item_state
from store.users import add_user, get_user
from tests.conftest import PRMBENCH_FILE

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def prm(store: Store) -> Store:
    import_file(store, PRMBENCH_FILE, dataset="prm")
    add_user(store, "adj", "adjudicator")
    for name, seconds in (("ann", 30.0), ("bea", 90.0)):
        add_user(store, name, "annotator")
        user = get_user(store, name)
        ds = get_dataset(store, "prm")
        assert user is not None and ds is not None
        for k in range(3):
            work = annotate.next_item(store, user, ds)
            assert work is not None
            annotate.submit(
                store,
                annotator=user,
                item_id=work.item.item_id,
                version_id=work.item.version_id,
                payload={"original": "correct", "modification": "reasonable", "difficulty": "hard"},
                request_id=f"{name}-{k}",
                seconds_spent=seconds,
            )
    with store.writing() as tx:
        set_item_state(tx, 10, target=1, status="accepted", decision={"labels": 1}, settled_at=1, now=NOW)
        for item in (11, 12):
            set_item_state(
                tx,
                item,
                target=1,
                status="rejected",
                decision={"difficulty": "medium"},
                settled_at=1,
                now=NOW,
            )
        set_item_state(
            tx, 13, target=2, status="disputed", decision={"difficulty": "easy"}, settled_at=2, now=NOW
        )
        tx.execute(
            "INSERT INTO jobs (kind, item_id, version_id, status) VALUES ('regenerate', 12, "
            "(SELECT current_version_id FROM items WHERE id = 12), 'queued')"
        )
    return store


def _adj(store: Store):
    user = get_user(store, "adj")
    assert user is not None
    return user


def _ids(store: Store, f: BrowseFilter) -> list[int]:
    return [int(i) for i in browse.search(store, _adj(store), f).rows["item_id"]]


def test_every_gate_state_the_store_holds_is_a_filter(prm: Store) -> None:
    assert _ids(prm, BrowseFilter(status="accepted")) == [10]
    assert _ids(prm, BrowseFilter(status="rejected")) == [11]
    assert _ids(prm, BrowseFilter(status="regenerating")) == [12]
    assert _ids(prm, BrowseFilter(status="disputed")) == [13]
    shown = browse.search(prm, _adj(prm), BrowseFilter(status="regenerating")).rows
    assert list(shown["state"]) == ["regenerating"]
    everything = browse.search(prm, _adj(prm), BrowseFilter()).total
    counted = sum(browse.search(prm, _adj(prm), BrowseFilter(status=s)).total for s in browse.STATES)
    assert counted == everything  # each item is in exactly one state


def test_the_decided_difficulty_is_a_filter(prm: Store) -> None:
    assert _ids(prm, BrowseFilter(difficulty="medium")) == [11, 12]
    assert _ids(prm, BrowseFilter(difficulty="easy", status="disputed")) == [13]
    assert _ids(prm, BrowseFilter(difficulty="medium", status="rejected")) == [11]
    assert list(browse.search(prm, _adj(prm), BrowseFilter(difficulty="easy")).rows["difficulty"]) == ["easy"]
    with pytest.raises(InvalidInput, match="difficulty"):
        browse.search(prm, _adj(prm), BrowseFilter(difficulty="trivial"))


def test_a_link_keeps_the_difficulty_and_state() -> None:
    from urllib.parse import parse_qsl

    f = BrowseFilter(status="regenerating", difficulty="hard")
    again, _, _ = browse.filter_from_query(dict(parse_qsl(browse.query_for(f).lstrip("?"))))
    assert again == f


def test_labels_and_time_are_counted_over_the_filters_items_only(prm: Store) -> None:
    from store.browse import label_time_rows

    rows = label_time_rows(prm, BrowseFilter())
    per = rows.groupby("annotator")[["labels", "seconds"]].sum()
    assert per.loc["ann", "labels"] == 3 and per.loc["bea", "seconds"] == 270.0
    first = int(rows["item"].min())
    only = label_time_rows(prm, BrowseFilter(text=browse.open_item(prm, _adj(prm), first).item.question[:40]))
    assert set(only["item"]) == {first}


def test_every_plot_is_drawn_for_the_filter_and_says_so_when_empty(prm: Store) -> None:
    figures = browse.figures(prm, _adj(prm), BrowseFilter(dataset="prm"))
    assert list(figures) == list(browse.FIGURES)
    titles = {name: fig.axes[0].get_title() for name, fig in figures.items()}
    assert titles["steps_per_chain"] == "Steps per chain"
    assert titles["labels_by_annotator"] == "Labels by annotator"
    assert titles["time_per_item"] == "Time per item"
    bars = figures["labels_by_annotator"].axes[0].get_yticklabels()
    assert {t.get_text() for t in bars} == {"ann", "bea"}
    nothing = browse.figures(prm, _adj(prm), BrowseFilter(status="accepted"))
    texts = [t.get_text() for t in nothing["labels_by_annotator"].axes[0].texts]
    assert texts == ["No labels on the items of the current filter."]


def test_a_link_restores_every_filter_in_the_panel(prm: Store) -> None:
    import gradio as gr

    from ui.context import AppContext
    from ui.panels import browse as panel

    query = "?tab=browse&dataset=prm&task=step_review&status=rejected&difficulty=medium&sort=difficulty"
    opened = panel.on_tab_open(AppContext(store=prm), query, gr.Request(username="adj"))
    assert opened["dataset"]["value"] == "prm" and opened["task"]["value"] == "step_review"
    assert opened["state"]["value"] == "rejected" and opened["difficulty"]["value"] == "medium"
    assert list(opened["results"]["item_id"]) == [11] and opened["sort"] == "difficulty"
