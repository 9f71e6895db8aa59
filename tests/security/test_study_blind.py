"""Over HTTP, as a script would: a study rater never sees another rater's study label.

Bob and Cat rate the same study items; Bob's study labels carry a marker. Cat calls every event of the
app (as tests/security/test_api_blindness.py does for the gate) and the annotation API on her own study items:
no answer holds the marker, and her submit answers "saved" like any other.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from bench.client import StepgateClient
from bench.server import start_server
from services.annotate import now_utc, submit
from services.demo import populate_demo
from services.leasing import leases_of
from services.studies import draw_study
from store import Store, studies, users, work
from store.datasets import get_dataset
from tests.gold_support import GOOD, label
from tests.security.support import PASSWORD, make_team
from tests.security.test_api_blindness import _call, _events

pytestmark = pytest.mark.browser
DATASET = "prmbench-step-review"
MARKER = "SECRET-STUDY-LABEL-OF-BOB-41c9"


def _study_rated_by_bob(db: Path) -> set[int]:
    """ann keeps 6 items; a study of 4 for Bob and Cat; Bob labels all of his with the marker."""
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        label(store, "ann", 6, GOOD)
        study = draw_study(
            store,
            users.get_user(store, "lead"),
            dataset=DATASET,
            name="iaa",
            n_items=4,
            raters=2,
            rater_names=["bob", "cat"],
        )
        bob, dataset = users.get_user(store, "bob"), get_dataset(store, DATASET)
        for _ in range(4):
            found = work.next_item(store, leases_of(store), bob, dataset, now_utc())
            submit(
                store,
                annotator=bob,
                item_id=found.item.item_id,
                version_id=found.item.version_id,
                payload={"original": "incorrect", "modification": "unreasonable", "note": MARKER},
                request_id=uuid.uuid4().hex,
            )
        assert store.scalar("SELECT count(*) FROM study_labels WHERE payload LIKE ?", [f"%{MARKER}%"]) == 4
        return set(studies.study_items(store, study.id)["item_id"].astype(int))


def test_a_study_rater_never_gets_another_raters_study_label_over_http(tmp_path: Path) -> None:
    db = tmp_path / "study-blind.duckdb"
    items = _study_rated_by_bob(db)
    server = start_server(db, "--team", "--no-demo")
    try:
        cat = StepgateClient(server.url, "cat", f"cat-{PASSWORD}")
        # Her study items come first, as new work with no label on them, and her saves say "saved".
        for _ in range(4):
            item = cat.run("next_item", DATASET)
            assert item["item_id"] in items and item["state"] == "new" and item["my_label"] is None
            assert MARKER not in str(item)
            receipt = cat.run(
                "submit_label",
                item["item_id"],
                item["version_id"],
                {"original": "correct", "modification": "reasonable", "difficulty": "easy"},
                uuid.uuid4().hex,
                4.0,
            )
            assert receipt["saved"] is True and MARKER not in str(receipt)
        # Every event, with the page's values and with empty ones: the marker never comes back.
        events, values = _events(cat)
        answers = {}
        for dep in events:
            if not dep.get("backend_fn", True):
                continue
            answers[dep["id"]] = _call(cat, dep["id"], [values.get(i) for i in dep.get("inputs", [])])
            answers[-dep["id"] - 1] = _call(cat, dep["id"], [None] * len(dep.get("inputs", [])))
        leaks = [fn for fn, text in answers.items() if MARKER in text]
        assert leaks == [], f"events {leaks} returned Bob's study label to Cat"
    finally:
        server.stop()
