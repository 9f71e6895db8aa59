"""Jumping to an item one may not label answers the same whether the others settled it or still hold it
(issue 32): "already settled" against "has all the annotators it needs" told an annotator the state of
items others labelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from services import annotate
from services.demo import populate_demo
from services.errors import ServiceError
from store import Store, users
from tests.gold_support import DATASET, GOOD, label
from tests.security.support import make_team


def test_a_settled_item_and_a_full_one_answer_alike(tmp_path: Path) -> None:
    db = tmp_path / "jump.duckdb"
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        settled = label(store, "ann", 1, GOOD)[0]  # one annotator an item: ann's label settles it
        dataset = annotate.dataset_for(store, DATASET)
        held = annotate.next_item(store, users.get_user(store, "cat"), dataset)  # cat holds the next one
        assert held is not None
        bob = users.get_user(store, "bob")
        answers = []
        for ref in (settled, held.item.external_id):
            with pytest.raises(ServiceError) as refused:
                annotate.jump_to(store, bob, dataset, ref)
            answers.append(str(refused.value).replace(ref, "<item>"))
        assert answers[0] == answers[1] and "settled" not in answers[0]
