"""services.reports on a real store: who may see a report, and Table 2 from the stored decisions."""

from __future__ import annotations

import uuid

import pytest

from services import reports
from services.annotate import now_utc, submit
from services.errors import NotAllowed, NotFound
from services.leasing import leases_of
from store import Store, users, work
from store.state import get_item_state

DATASET = "qwq-earliest-error"


def _label(store: Store, names: tuple[str, ...], labels: list[int]) -> list[int]:
    """Each annotator labels their next items with ``labels`` in turn; returns the item ids."""
    dataset = work.dataset_for(store, DATASET, "earliest_error")
    ids: list[int] = []
    for name in names:
        who = users.get_user(store, name) or users.add_user(store, name)
        for n, label in enumerate(labels):
            found = work.next_item(store, leases_of(store), who, dataset, now_utc())
            submit(
                store,
                annotator=who,
                item_id=found.item.item_id,
                version_id=found.item.version_id,
                payload={"earliest_error": label},
                request_id=uuid.uuid4().hex,
            )
            if len(ids) <= n:
                ids.append(found.item.item_id)
    return ids


def test_table_2_counts_the_settled_items_by_their_consensus_label(demo_store: Store) -> None:
    ids = _label(demo_store, ("ann", "bob", "cid"), [0, 1])
    judge = users.add_user(demo_store, "judge", "adjudicator")
    report = reports.dataset_report(demo_store, judge, DATASET, n_boot=50)
    table = report.tables.table2
    assert all(get_item_state(demo_store, i).status == "consensus" for i in ids)
    error = table.xs("error", axis=1, level="column")
    assert error.loc["# Samples"].sum() == 2  # both settled with a step label: the error column
    assert (error.loc["% 3/3 agreement"].dropna() == 100.0).all()
    assert table.xs("correct", axis=1, level="column").loc["# Samples"].sum() == 0
    assert report.table2.columns[0] == "" and "# Samples" in report.table2[""].tolist()
    assert "## ProcessBench Table 2" in (
        reports.write_files(report, demo_store.data_dir / "qc").markdown.read_text(encoding="utf-8")
    )


def test_reports_are_for_reviewers_and_name_what_is_missing(demo_store: Store) -> None:
    ann = users.add_user(demo_store, "ann")
    with pytest.raises(NotAllowed):
        reports.dataset_report(demo_store, ann, DATASET, n_boot=50)
    judge = users.add_user(demo_store, "judge", "adjudicator")
    with pytest.raises(NotFound, match="no dataset named"):
        reports.dataset_report(demo_store, judge, "nope", n_boot=50)
    with pytest.raises(NotFound, match="no study named"):
        reports.study_report(demo_store, judge, "nope", n_boot=50)
