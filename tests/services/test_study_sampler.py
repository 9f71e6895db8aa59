"""Drawing agreement studies as the papers did: kept items only, raters who have not seen the item."""

from __future__ import annotations

import uuid

import pandas as pd
import pytest

from qc.sampling import fresh_raters, study_pool
from services import annotate
from services.access import require_admin
from services.errors import InvalidInput
from services.leasing import leases_of
from services.studies import draw_study
from store import Store, studies, users, work
from store.datasets import get_dataset
from store.users import Annotator

DATASET = "prmbench-step-review"


def test_the_pool_holds_only_kept_items() -> None:
    candidates = pd.DataFrame(
        {"item_id": [1, 2, 3, 4, 5], "status": ["open", "complete", "rejected", "consensus", "discarded"]}
    )
    assert study_pool(candidates)["item_id"].tolist() == [2, 4]
    with pytest.raises(ValueError, match="no 'status' column"):
        study_pool(candidates.drop(columns="status"))


def test_fresh_raters_never_include_one_who_saw_the_item_and_spread_the_load() -> None:
    seen = {1: {"ann", "bea"}, 2: {"cid"}, 3: set()}
    plan = fresh_raters([1, 2, 3], ["ann", "bea", "cid", "dan"], seen, k=2, seed=3)
    assert plan[1] == ["cid", "dan"]
    assert all(not (set(plan[i]) & seen[i]) for i in plan)
    load = pd.Series([r for rs in plan.values() for r in rs]).value_counts()
    assert load.max() - load.min() <= 1
    assert plan == fresh_raters([1, 2, 3], ["dan", "cid", "bea", "ann"], seen, k=2, seed=3)  # order-free
    with pytest.raises(ValueError, match="item 1: only 1 rater"):
        fresh_raters([1], ["ann", "bea", "cid"], seen, k=2)


def _user(store: Store, name: str, role: str = "annotator") -> users.Annotator:
    users.add_user(store, name, role, None)
    found = users.get_user(store, name)
    assert found is not None
    return found


def test_a_kept_only_study_draws_from_kept_items_and_assigns_unseen_raters(demo_store: Store) -> None:
    lead = _user(demo_store, "lead", "admin")
    for name in ("ann", "bea", "cid"):
        _user(demo_store, name)
    with pytest.raises(InvalidInput, match="has 0 kept items left to draw, not 4"):
        draw_study(demo_store, lead, dataset=DATASET, name="iaa", n_items=4, raters=2)  # kept only by default
    dataset = get_dataset(demo_store, DATASET)
    ann = users.get_user(demo_store, "ann")
    done = []
    for _ in range(5):  # ann's labels: one annotator per item keeps it (the dataset's default)
        got = work.next_item(demo_store, leases_of(demo_store), ann, dataset, annotate.now_utc())
        annotate.submit(
            demo_store,
            annotator=ann,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload={"original": "correct", "modification": "reasonable", "difficulty": "easy"},
            request_id=str(uuid.uuid4()),
            seconds_spent=3.0,
        )
        done.append(got.item.item_id)
    kept = set(demo_store.fetchall("SELECT item_id FROM item_state WHERE status = 'complete'"))
    assert {(i,) for i in done} == kept
    study = draw_study(
        demo_store,
        lead,
        dataset=DATASET,
        name="iaa",
        n_items=4,
        raters=2,
        seed=2,
        rater_names=["ann", "bea", "cid"],
    )
    assert study.kept_only
    drawn = set(studies.study_items(demo_store, study.id)["item_id"])
    assert drawn <= set(done)
    assigned = studies.assigned_raters(demo_store, study.id)
    assert set(map(tuple, assigned.values())) == {("bea", "cid")}  # ann labelled every drawn item
    plan = plan_raters(demo_store, lead, "iaa", ["ann", "bea", "cid"])
    assert set(plan["raters"]) == {"bea, cid"} and set(plan["assigned"]) == {"bea, cid"}
    with pytest.raises(InvalidInput, match="only 1 rater"):
        plan_raters(demo_store, lead, "iaa", ["ann", "bea"])


def plan_raters(store: Store, user: Annotator, study: str, raters: list[str], seed: int = 0) -> pd.DataFrame:
    """Which of ``raters`` could rate which study item, K per item, none of whom has seen the item
    (qc.sampling.fresh_raters), beside the raters the study assigned when it was drawn."""
    require_admin(user)
    found = studies.get_study(store, study)
    assert found is not None
    items = studies.study_items(store, found.id)
    ids = [int(i) for i in items["item_id"]]
    assigned = studies.assigned_raters(store, found.id)
    seen = {i: names - set(assigned.get(i, [])) for i, names in studies.seen_by(store, ids).items()}
    try:
        plan = fresh_raters(ids, raters, seen, found.raters, seed)
    except ValueError as exc:
        raise InvalidInput(f"{found.name}: {exc}; add raters who have not labelled it") from exc
    return pd.DataFrame(
        {
            "item_id": ids,
            "external_id": items["external_id"].tolist(),
            "raters": [", ".join(plan[i]) for i in ids],
            "assigned": [", ".join(assigned.get(i, [])) for i in ids],
        }
    )


def test_fresh_raters_start_from_the_load_of_earlier_batches() -> None:
    plan = fresh_raters([1, 2], ["ann", "bea", "cid"], {}, k=2, load={"ann": 5})
    assert all("ann" not in raters for raters in plan.values())
