"""The statistics behind each panel's "View statistics"."""

from __future__ import annotations

import json

import pandas as pd

from qc.label_stats import annotator_summary, label_distribution, settlement_shares


def _log(rows: list[tuple[int, str, int, dict, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"annotation_id": i, "annotator": a, "item_id": it, "payload": json.dumps(p), "seconds_spent": s}
            for i, a, it, p, s in rows
        ]
    )


def test_a_correction_replaces_the_label_but_counts_as_a_label_given() -> None:
    log = _log(
        [
            (1, "ann", 1, {"original": "correct"}, 10.0),
            (2, "ann", 1, {"original": "incorrect"}, 4.0),
            (3, "bob", 1, {"original": "correct"}, 6.0),
            (4, "bob", 2, {"original": "correct"}, 8.0),
        ]
    )
    dist = label_distribution(log, "original", order=["correct", "incorrect"]).set_index("annotator")
    assert dist.loc["ann"].tolist() == [0, 1]
    assert dist.loc["bob"].tolist() == [2, 0]
    assert dist.loc["all annotators"].tolist() == [2, 1]
    summary = annotator_summary(log).set_index("annotator")
    assert summary.loc["ann", "items"] == 1 and summary.loc["ann", "labels"] == 2
    assert summary.loc["bob", "median_seconds"] == 7.0


def test_settlement_shares_follow_processbench_table_2() -> None:
    states = pd.DataFrame(
        {
            "status": ["consensus", "consensus", "consensus", "discarded", "open"],
            "settled_at": [3, 3, 4, 5, None],
        }
    )
    table = settlement_shares(states).set_index("state")
    assert table.loc["3/3", "items"] == 2 and table.loc["3/4", "items"] == 1
    assert table.loc["discarded", "share"] == 0.2 and table.loc["open", "items"] == 1
