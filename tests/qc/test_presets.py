"""ProcessBench Table 2 (docs/PROTOCOLS.md B3): a hand-built log cell by cell, and the published table."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from qc.consensus import earliest_error_consensus
from qc.presets import TABLE2_ROWS, processbench_table2, table2_items

NAN = float("nan")


def _settled(subset: str, labels: list[int], n_steps: int, fa: bool | None) -> dict:
    """One item of the log: its labels in arrival order, settled by the escalation rule."""
    c = earliest_error_consensus(labels)
    return {
        "subset": subset,
        "status": c.status,
        "label": c.label,
        "n_annotators": c.settled_at,
        "n_steps": n_steps,
        "final_answer_correct": fa,
    }


def _hand_built() -> pd.DataFrame:
    return pd.DataFrame(
        [
            _settled("gsm8k", [2, 2, 2], 6, False),  # error, 3/3
            _settled("gsm8k", [0, 1, 0, 0], 12, True),  # error, 3/4, a process error
            _settled("gsm8k", [-1, -1, -1], 4, True),  # correct, 3/3
            _settled("gsm8k", [-1, 0, 1, -1, -1], 15, True),  # correct, 3/5
            _settled("gsm8k", [-1, -1, -1], 7, True),  # correct, 3/3
            _settled("gsm8k", [0, 1, 2, 3], 20, True),  # discarded: four different labels
            _settled("gsm8k", [-1, -1, -1], 9, False),  # "no error" on a wrong answer: discarded
            _settled("math", [1, 2, 3, 1, 1], 10, True),  # error, 3/5, a process error
            _settled("math", [3, 3, 3], 3, None),  # error, 3/3, final answer unknown
        ]
    )


def test_a_hand_built_log_gives_every_cell() -> None:
    table = processbench_table2(_hand_built())
    assert list(table.index) == list(TABLE2_ROWS)
    assert list(table.columns) == [
        ("gsm8k", "error"),
        ("gsm8k", "correct"),
        ("math", "error"),
        ("math", "correct"),
    ]
    third = 100 / 3
    expected = {
        # retained gsm8k: 2 error + 3 correct; FA-correct among them: items 2-5, one with an error -> 25%
        ("gsm8k", "error"): [2, 25.0, 9.0, 100.0, 50.0, 0.0, 50.0, 50.0, 0.0],
        ("gsm8k", "correct"): [3, 25.0, 26 / 3, 2 * third, third, third, 2 * third, 0.0, third],
        # math: the one FA-correct item has an error -> 100%; the unknown answer is left out
        ("math", "error"): [2, 100.0, 6.5, 50.0, 50.0, 0.0, 50.0, 0.0, 50.0],
        ("math", "correct"): [0, 100.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
    }
    for column, cells in expected.items():
        for row, want in zip(TABLE2_ROWS, cells, strict=True):
            got = table.loc[row, column]
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want), (row, column)


def test_agreement_rows_add_up_to_100_per_column() -> None:
    table = processbench_table2(_hand_built())
    sums = table.loc[["% 3/3 agreement", "% 3/4 agreement", "% 3/5 agreement"]].sum()
    assert sums[("gsm8k", "error")] == pytest.approx(100) and sums[("math", "error")] == pytest.approx(100)


def test_missing_columns_are_named() -> None:
    with pytest.raises(ValueError, match="n_steps"):
        processbench_table2(pd.DataFrame({"subset": [], "status": [], "label": []}))


# docs/PROTOCOLS.md B3: per column N, FA-wrong, FA-correct, >=5, >=10, >=15 steps, settled 3/3, 3/4, 3/5,
# and the published mean step count.
_COUNTS = {
    ("GSM8K", "error"): (207, 200, 7, 128, 7, 1, 138, 44, 25, 5.3),
    ("GSM8K", "correct"): (193, 0, 193, 111, 3, 0, 185, 7, 1, 5.1),
    ("MATH", "error"): (594, 500, 94, 437, 106, 20, 353, 145, 96, 6.8),
    ("MATH", "correct"): (406, 0, 406, 286, 36, 8, 373, 19, 14, 6.0),
    ("OlympiadBench", "error"): (661, 500, 161, 612, 224, 60, 349, 159, 153, 8.9),
    ("OlympiadBench", "correct"): (339, 0, 339, 313, 92, 30, 288, 31, 20, 8.7),
    ("Omni-MATH", "error"): (759, 500, 259, 702, 222, 57, 363, 194, 202, 8.6),
    ("Omni-MATH", "correct"): (241, 0, 241, 197, 52, 10, 193, 33, 15, 7.4),
}
_PUBLISHED = {  # the paper's Table 2, rounded as printed (the process-error row spans both columns)
    ("GSM8K", "error"): (207, 3.5, 5.3, 61.8, 3.4, 0.5, 66.7, 21.3, 12.1),
    ("GSM8K", "correct"): (193, 3.5, 5.1, 57.5, 1.6, 0.0, 95.9, 3.6, 0.5),
    ("MATH", "error"): (594, 18.8, 6.8, 73.6, 17.8, 3.4, 59.4, 24.4, 16.2),
    ("MATH", "correct"): (406, 18.8, 6.0, 70.4, 8.9, 2.0, 91.9, 4.7, 3.4),
    ("OlympiadBench", "error"): (661, 32.2, 8.9, 92.6, 33.9, 9.1, 52.8, 24.1, 23.1),
    ("OlympiadBench", "correct"): (339, 32.2, 8.7, 92.3, 27.1, 8.8, 85.0, 9.1, 5.9),
    ("Omni-MATH", "error"): (759, 51.8, 8.6, 92.5, 29.2, 7.5, 47.8, 25.6, 26.6),
    ("Omni-MATH", "correct"): (241, 51.8, 7.4, 81.7, 21.6, 4.1, 80.1, 13.7, 6.2),
}


def _step_counts(n: int, ge5: int, ge10: int, ge15: int, mean: float) -> list[int]:
    """Step counts with the column's threshold counts whose mean rounds to the published one."""
    bands = [(15, 10**6, ge15), (10, 14, ge10 - ge15), (5, 9, ge5 - ge10), (1, 4, n - ge5)]
    steps = [low for low, _, k in bands for _ in range(k)]
    caps = [high for _, high, k in bands for _ in range(k)]
    missing = round(mean * n) - sum(steps)
    assert missing >= 0
    for i in range(len(steps)):
        add = min(missing, caps[i] - steps[i])
        steps[i] += add
        missing -= add
    assert missing == 0
    return steps


def _released_log() -> pd.DataFrame:
    """ProcessBench's released items rebuilt from B3's counts, plus items the paper discarded."""
    rows = []
    for (subset, column), (n, fa_wrong, _, ge5, ge10, ge15, s3, s4, s5, mean) in _COUNTS.items():
        steps = _step_counts(n, ge5, ge10, ge15, mean)
        settled = [3] * s3 + [4] * s4 + [5] * s5
        for i in range(n):
            rows.append(
                {
                    "subset": subset,
                    "status": "consensus",
                    "label": 0 if column == "error" else -1,
                    "n_annotators": settled[i],
                    "n_steps": steps[i],
                    "final_answer_correct": i >= fa_wrong,
                }
            )
        # what never reached the release: no 3-way agreement, and "no error" on a wrong answer
        rows.append({**rows[-1], "status": "discarded", "label": None, "n_annotators": 5})
        rows.append({**rows[-1], "status": "consensus", "label": -1, "final_answer_correct": False})
    return pd.DataFrame(rows)


def test_the_published_table_2_from_its_reconstructed_counts() -> None:
    table = processbench_table2(_released_log())
    assert [s for s, _ in table.columns[::2]] == ["GSM8K", "MATH", "OlympiadBench", "Omni-MATH"]
    for column, printed in _PUBLISHED.items():
        got = [round(v, 1) for v in table[column]]
        assert got == pytest.approx(list(printed), abs=1e-9), column


def test_items_come_from_the_stored_states() -> None:
    states = pd.DataFrame(
        {
            "dataset": ["pb", "pb", "pb"],
            "source": ["gsm8k", None, "math"],
            "status": ["consensus", "discarded", "open"],
            "decision": ['{"label": 2, "labels": 3}', '{"label": null, "labels": 5}', None],
            "settled_at": [3, 5, None],
            "final_answer_correct": [False, None, True],
            "n_steps": [6, 4, 7],
        }
    )
    items = table2_items(states)
    assert items["subset"].tolist() == ["gsm8k", "pb", "math"]
    assert items["label"].iloc[0] == 2 and pd.isna(items["label"].iloc[1])
    assert items["final_answer_correct"].tolist() == [False, None, True]
    table = processbench_table2(items)
    assert table.loc["# Samples", ("gsm8k", "error")] == 1 and table.loc["# Samples", ("pb", "error")] == 0
