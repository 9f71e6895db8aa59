"""A removed rater's pending study items go to another annotator who has not seen them (admins only,
or the command line), and the study finishes with the new rater's labels."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from services import annotate
from services.access import OPERATOR
from services.errors import InvalidInput, NotAllowed, NotFound
from services.leasing import leases_of
from services.studies import draw_study, reassign
from store import Store, studies, users, work
from store.datasets import get_dataset
from tests.gold_support import GOOD, label
from tests.services.test_studies import DATASET, _annotator


def _rate(store: Store, who: users.Annotator, n: int) -> list[int]:
    dataset = get_dataset(store, DATASET)
    done = []
    for _ in range(n):
        got = work.next_item(store, leases_of(store), who, dataset, annotate.now_utc())
        assert got is not None and got.state == "new"
        annotate.submit(
            store,
            annotator=who,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=GOOD,
            request_id=str(uuid.uuid4()),
            first_label=True,
        )
        done.append(got.item.item_id)
    return done


@pytest.fixture
def drawn(demo_store: Store) -> Store:
    """ann keeps 6 items; a study of 3 rated by bea and cid; bea labels one, then is removed."""
    _annotator(demo_store, "ann")
    label(demo_store, "ann", 6, GOOD)
    lead = _annotator(demo_store, "lead", "admin")
    bea = _annotator(demo_store, "bea")
    _annotator(demo_store, "cid"), _annotator(demo_store, "dan")
    draw_study(
        demo_store,
        lead,
        dataset=DATASET,
        name="s",
        n_items=3,
        raters=2,
        stratify_by=None,
        rater_names=["bea", "cid"],
    )
    _rate(demo_store, bea, 1)
    users.remove_user(demo_store, "bea")
    return demo_store


def test_a_removed_raters_pending_items_go_to_a_rater_who_has_not_seen_them(drawn: Store) -> None:
    lead = users.get_user(drawn, "lead")
    study = studies.get_study(drawn, "s")
    labelled = set(drawn.fetchall("SELECT item_id FROM study_labels"))
    done = reassign(drawn, lead, "s", "bea", "dan")
    assert (
        len(done.moved) == 2 and done.kept == [] and "gave 2 pending item(s) of bea to dan" in done.summary()
    )
    assigned = studies.assigned_raters(drawn, study.id)
    moved = {i for i, names in assigned.items() if "dan" in names}
    assert len(moved) == 2 and not {(i,) for i in moved} & labelled
    assert all(sorted(names) in (["cid", "dan"], ["bea", "cid"]) for names in assigned.values())
    assert "dan" in studies.study_rater_names(drawn, study.id)
    # dan gets exactly those items first, cid rates all three: the study finishes
    dan, cid = users.get_user(drawn, "dan"), users.get_user(drawn, "cid")
    assert set(_rate(drawn, dan, 2)) == moved
    _rate(drawn, cid, 3)
    assert studies.list_studies(drawn).loc[0, "items_done"] == 3
    again = reassign(drawn, OPERATOR, "s", "bea", "dan")  # nothing pending any more
    assert again.moved == [] and again.kept == []


def test_items_the_new_rater_has_seen_stay_and_nothing_else_changes(drawn: Store) -> None:
    before = drawn.fetchall("SELECT * FROM study_assignments ORDER BY item_id, annotator_id")
    done = reassign(drawn, OPERATOR, "s", "bea", "ann")  # ann labelled every kept item in the gate
    assert done.moved == [] and len(done.kept) == 2 and "ann has seen them" in done.summary()
    assert drawn.fetchall("SELECT * FROM study_assignments ORDER BY item_id, annotator_id") == before
    done = reassign(drawn, OPERATOR, "s", "bea", "cid")  # cid rates all three already
    assert done.moved == [] and len(done.kept) == 2


def test_a_bad_reassignment_is_refused_and_changes_nothing(drawn: Store) -> None:
    before = drawn.fetchall("SELECT * FROM study_assignments ORDER BY item_id, annotator_id")
    cid = users.get_user(drawn, "cid")
    with pytest.raises(NotAllowed):
        reassign(drawn, cid, "s", "bea", "dan")
    with pytest.raises(InvalidInput, match="cid is still an active annotator"):
        reassign(drawn, OPERATOR, "s", "cid", "dan")
    with pytest.raises(NotFound, match="no removed annotator named 'zed'"):
        reassign(drawn, OPERATOR, "s", "zed", "dan")
    with pytest.raises(NotFound, match="no active annotator named 'bea'"):
        reassign(drawn, OPERATOR, "s", "bea", "bea")
    with pytest.raises(InvalidInput, match="lead is an admin"):
        reassign(drawn, OPERATOR, "s", "bea", "lead")
    with pytest.raises(NotFound, match="no study named 'x'"):
        reassign(drawn, OPERATOR, "x", "bea", "dan")
    assert drawn.fetchall("SELECT * FROM study_assignments ORDER BY item_id, annotator_id") == before


def test_the_command_line_reassigns(drawn: Store, tmp_path: Path) -> None:
    from tests.browser_support import cli

    # the DuckDB file, or the PostgreSQL database under STEPGATE_TEST_ENGINE=postgresql, and its files
    db, files = drawn.path or drawn.engine.url, str(drawn.data_dir)
    drawn.close()
    argv = ("studies", "reassign", "s", "--from", "bea", "--to", "dan")
    out = cli(*argv, db=db, input_env={"STEPGATE_DATA_DIR": files}).stdout
    assert "s: gave 2 pending item(s) of bea to dan" in out
