"""MPBench's metrics in the Scores tab: its Table 2 (and Table 3 by domain) with its averaging, on a
gated dataset shaped like MPBench's (step correctness, answer aggregation, process search items), and
its averaging against the paper's published Table 2 rows (docs/PROTOCOLS.md C4b, C4c)."""

from __future__ import annotations

import json
import math
import uuid
from pathlib import Path

import pandas as pd
import pytest

from qc.mpbench_scores import mpbench_table, paradigm_of, table2_averages
from services import annotate, scores
from services.errors import InvalidInput
from services.imports import import_file
from services.leasing import leases_of
from store import Store, users, work
from store.datasets import get_dataset

DATASET = "mpbench"
GOOD = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}

# Items as MPBench's three data categories hold them (C2): SC chains with gold error steps (1-based in
# the paper; 0-based positions in a plain table), AA problems with five-or-fewer candidates, RPS pairs.
ROWS = [
    {"id": "sc1", "question": "q1", "steps": ["a", "b", "c", "d"], "error_steps": [2], "domain": "science"},
    {"id": "sc2", "question": "q2", "steps": ["a", "b", "c"], "error_steps": [1, 2], "domain": "mathematics"},
    {
        "id": "aa1",
        "question": "q3",
        "steps": ["see candidates"],
        "domain": "science",
        "answer": "A",
        "paradigm": "answer_aggregation",
        "candidates": [
            {"answer": "A", "correct": True},
            {"answer": "B", "correct": False},
            {"answer": "b", "correct": False},
        ],
    },
    {
        "id": "aa2",
        "question": "q4",
        "steps": ["see candidates"],
        "domain": "mathematics",
        "answer": "C",
        "paradigm": "answer_aggregation",
        "candidates": [{"answer": "C", "correct": True}, {"answer": "D", "correct": False}],
    },
    {
        "id": "rps1",
        "question": "q5",
        "steps": ["history"],
        "domain": "science",
        "paradigm": "process_search",
        "correct_candidate": 0,
    },
    {
        "id": "rps2",
        "question": "q6",
        "steps": ["history"],
        "domain": "mathematics",
        "paradigm": "process_search",
        "correct_candidate": 1,
    },
]
MAPPING = {
    "external_id": "id",
    "question": "question",
    "steps": "steps",
    "error_steps": "error_steps",
    "reference_answer": "answer",
    "source": "domain",
    "meta.paradigm": "paradigm",
    "meta.candidates": "candidates",
    "meta.correct_candidate": "correct_candidate",
}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    rows = [{c: r.get(c) for c in columns} for r in rows]  # every column on every line, as a table has
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def mpbench_store(store: Store, tmp_path: Path) -> users.Annotator:
    """The MPBench-shaped dataset, every item reviewed and kept; returns an admin."""
    import_file(
        store, _jsonl(tmp_path / "mpbench.jsonl", ROWS), dataset=DATASET, task="step_review", mapping=MAPPING
    )
    ann = users.add_user(store, "ann", "annotator")
    dataset = get_dataset(store, DATASET)
    while (got := work.next_item(store, leases_of(store), ann, dataset, annotate.now_utc())) is not None:
        annotate.submit(
            store,
            annotator=ann,
            item_id=got.item.item_id,
            version_id=got.item.version_id,
            payload=GOOD,
            request_id=uuid.uuid4().hex,
            seconds_spent=3.0,
        )
    if users.get_user(store, "lead") is None:
        users.add_user(store, "lead", "admin")
    admin = users.get_user(store, "lead")
    assert admin is not None
    return admin


# A judge that is right everywhere but flags one correct step of sc1 (a false alarm at step 1):
SHARP = [
    {"id": "sc1", "step_scores": [-0.2, 0.9, -1.0, 0.8]},  # predicted first error step 1 (gold: step 3)
    {"id": "sc2", "step_scores": [0.5, -0.5, -1.0]},  # right: first error step 2, steps 2-3 wrong
    # aa1: candidate scores (min) 0.8 / 0.1 / 0.2: BoN picks A; MV: A 0.8 > B (B and b) 0.3 -> A
    {"id": "aa1", "step_scores": [[0.9, 0.8], [0.1], [0.2, 0.3]]},
    {"id": "aa2", "step_scores": [[-0.5], [0.4]]},  # BoN picks D (miss); MV: C -0.5 < D 0.4 -> D (miss)
    {"id": "rps1", "step_scores": [0.7, -0.3]},  # right
    {"id": "rps2", "step_scores": [[0.1], [0.2]]},  # right
]


def _by_hand() -> dict[str, float]:
    # SC: steps pooled, positive = correct. sc1 gold [T, T, F, T], predicted [F, T, F, T];
    # sc2 gold [T, F, F], predicted [T, F, F]. TP 3, FN 1, TN 3, FP 0.
    f1 = 2 * 1.0 * (3 / 4) / (1.0 + 3 / 4)  # P 1, R 3/4: 6/7
    f1_neg = 2 * (3 / 4) * 1.0 / (3 / 4 + 1.0)  # P_neg 3/4, R_neg 1: 6/7
    aei = (f1 + f1_neg) / 2
    fei = 1 / 2  # sc2 right, sc1 wrong
    bon = mv = 1 / 2  # aa1 right (A: 0.8 > B+b 0.3 as one answer), aa2 wrong
    rps_f1, mcc = 1.0, 1.0  # both pairs right
    sc, aa, rps = (fei + aei) / 2, (bon + mv) / 2, (rps_f1 + mcc) / 2
    overall = (sc + aa + rps) / 3
    return {
        "fei": fei,
        "aei": aei,
        "bon": bon,
        "mv": mv,
        "f1": rps_f1,
        "mcc": mcc,
        "sc_avg": sc,
        "aa_avg": aa,
        "rps_avg": rps,
        "overall": overall,
        "delta": overall - 0.318,
    }


def test_paradigms_are_read_from_the_items_meta() -> None:
    assert paradigm_of({"paradigm": "AA"}) == "answer_aggregation"
    assert paradigm_of({"candidates": []}) == "answer_aggregation"
    assert paradigm_of({"correct_candidate": 1}) == "process_search"
    assert paradigm_of({}) == paradigm_of(None) == "step_correctness"


def test_mpbench_table_on_a_gated_dataset_shaped_like_mpbench(store: Store, tmp_path: Path) -> None:
    admin = mpbench_store(store, tmp_path)
    scores.import_predictions(
        store, admin, _jsonl(tmp_path / "sharp.jsonl", SHARP), model="sharp", dataset=DATASET
    )
    # A second model run on step correctness only: every step scored 0 (not above 0: all incorrect).
    flat = [{"id": "sc1", "step_scores": [0, 0, 0, 0]}, {"id": "sc2", "step_scores": [0.0, 0.0, 0.0]}]
    scores.import_predictions(
        store, admin, _jsonl(tmp_path / "flat.jsonl", flat), model="flat", dataset=DATASET
    )
    report = scores.score_report(store, admin, DATASET)
    table = report.mpbench.set_index("model")
    row = table.loc["sharp"]
    for key, value in _by_hand().items():
        assert row[key] == pytest.approx(value), key
    assert (row["sc_items"], row["aa_items"], row["rps_items"], row["unscored"]) == (2, 2, 2, 0)
    other = table.loc["flat"]
    # All predicted incorrect: FEI hits neither (predicted step 1, gold 3 and 2); F1 = 0, F1_neg from
    # TN 3, FN 4: P 3/7, R 1 -> 0.6; AA and RPS not run: NaN, and so are Overall and Δ.
    assert other["fei"] == 0.0 and other["aei"] == pytest.approx(0.3)
    assert math.isnan(other["aa_avg"]) and math.isnan(other["overall"]) and math.isnan(other["delta"])
    # Table 3: per domain, each Avg minus the random row's value of its paradigm.
    domains = report.mpbench_domains.set_index(["model", "domain"])
    science = domains.loc[("sharp", "science")]
    assert science["aa_avg"] == 1.0 and science["aa_vs_random"] == pytest.approx(1.0 - 0.409)
    assert science["rps_vs_random"] == pytest.approx(1.0 - 0.25)


def test_a_missing_prediction_counts_as_wrong_and_is_counted(store: Store, tmp_path: Path) -> None:
    admin = mpbench_store(store, tmp_path)
    some = [r for r in SHARP if r["id"] not in ("sc2", "aa1", "rps1")]
    scores.import_predictions(
        store, admin, _jsonl(tmp_path / "some.jsonl", some), model="some", dataset=DATASET
    )
    row = scores.score_report(store, admin, DATASET).mpbench.set_index("model").loc["some"]
    assert row["unscored"] == 3
    assert row["fei"] == 0.0  # sc1 wrong, sc2 missing: all its steps predicted incorrect (first = step 1)
    assert row["bon"] == 0.0 and row["mv"] == 0.0  # aa2 a miss, aa1 missing
    assert row["f1"] == 0.5 and row["mcc"] == 0.0  # rps2 right, rps1 missing: a wrong pair


def test_candidate_scores_must_match_the_items_candidates(store: Store, tmp_path: Path) -> None:
    admin = mpbench_store(store, tmp_path)
    bad = [{"id": "aa1", "step_scores": [[0.1], [0.2]]}, {"id": "rps1", "step_scores": [0.1, 0.2, 0.3]}]
    with pytest.raises(InvalidInput) as refused:
        scores.import_predictions(
            store, admin, _jsonl(tmp_path / "bad.jsonl", bad), model="bad", dataset=DATASET
        )
    assert "line 1" in str(refused.value) and "line 2" in str(refused.value) and "3" in str(refused.value)
    assert scores.score_report(store, admin, DATASET).mpbench.empty  # nothing stored


def test_ties_are_broken_with_a_fixed_seed_and_reported() -> None:
    items = pd.DataFrame(
        [
            {
                "item_id": 1,
                "subset": "all",
                "paradigm": "process_search",
                "n_steps": 1,
                "gold_steps": [],
                "candidates": [],
                "answer": None,
                "correct_candidate": 0,
            }
        ]
    )
    predictions = pd.DataFrame([{"model": "m", "item_id": 1, "step_scores": [0.5, 0.5], "threshold": None}])
    first = mpbench_table(items, predictions, seed=3)
    assert first["tie_rate"].iloc[0] == 1.0
    assert first.equals(mpbench_table(items, predictions, seed=3))


# Table 2 (003 l.91-106): FEI, AEI, BoN, MV, F1, MCC, then the published SC, AA, RPS Avgs, Overall, Δ.
TABLE2 = {
    "InternVL2.5-1B": (22.2, 49.1, 47.1, 33.3, 45.5, -9.1, 35.6, 40.2, 18.2, 31.3, -0.5),
    "InternVL2.5-8B": (36.7, 56.9, 79.5, 58.0, 53.1, 6.3, 46.8, 68.7, 29.7, 48.3, 16.5),
    "InternVL2.5-26B": (10.3, 51.7, 67.5, 55.6, 56.5, 12.9, 31.0, 61.5, 34.7, 42.4, 10.6),
    "InternVL2.5-38B": (55.3, 28.2, 74.6, 57.2, 55.4, 11.2, 38.9, 66.9, 33.5, 49.7, 17.9),
    "Qwen2.5-VL-3B": (1.6, 48.2, 76.8, 55.0, 48.1, -3.8, 24.9, 65.9, 22.1, 37.6, 5.8),
    "Qwen2-VL-7B": (6.8, 51.3, 85.2, 50.6, 53.6, 7.1, 29.1, 67.9, 30.3, 42.4, 10.6),
    "Qwen2.5-VL-7B": (9.8, 54.2, 59.0, 52.5, 66.3, 32.5, 32.0, 55.8, 49.4, 45.7, 13.9),
    "Qwen2.5-VL-72B": (24.8, 65.2, 81.6, 69.8, 64.4, 28.8, 45.0, 75.7, 46.6, 55.8, 24.0),
    "QVQ": (15.5, 55.6, 63.6, 51.7, 54.8, 9.6, 35.5, 57.7, 32.2, 41.8, 10.0),
    "Gemini-2.0-flash-exp": (53.8, 74.9, 82.2, 69.6, 70.5, 41.1, 64.4, 75.9, 55.8, 65.4, 33.6),
    "Gemini-2.0-thinking-exp": (54.0, 74.9, 81.7, 67.7, 69.8, 39.6, 64.4, 74.7, 54.7, 64.6, 32.8),
    "GPT-4o": (51.2, 74.4, 85.3, 62.2, 84.7, 69.5, 62.8, 73.7, 77.1, 71.2, 39.4),
}
ERRATA = {"InternVL2.5-8B", "InternVL2.5-38B"}  # C4b: their derived cells do not follow from the inputs


@pytest.mark.parametrize("model", sorted(set(TABLE2) - ERRATA))
def test_the_scores_tabs_averaging_reproduces_published_table2_rows(model: str) -> None:
    *components, sc, aa, rps, overall, delta = TABLE2[model]
    got = table2_averages(*components, percent=True)
    for key, published in (
        ("sc_avg", sc),
        ("aa_avg", aa),
        ("rps_avg", rps),
        ("overall", overall),
        ("delta", delta),
    ):
        assert abs(got[key] - published) <= 0.10 + 1e-9, (key, got[key], published)


def test_the_published_errata_rows_do_not_follow_from_their_components() -> None:
    eight = table2_averages(*TABLE2["InternVL2.5-8B"][:6], percent=True)
    assert abs(eight["overall"] - 48.3) > 0.10  # 48.42 from its components
    big = table2_averages(*TABLE2["InternVL2.5-38B"][:6], percent=True)
    for key, published in zip(
        ("sc_avg", "aa_avg", "rps_avg", "overall"), TABLE2["InternVL2.5-38B"][6:10], strict=True
    ):
        assert abs(big[key] - published) > 0.10, key
    random = table2_averages(9.1, 50.0, 40.9, 40.9, 50.0, 0.0, percent=True)
    assert abs(random["overall"] - 31.8) <= 0.10 and abs(random["delta"]) <= 0.10


def test_an_earliest_error_dataset_has_no_step_correctness_items() -> None:
    from qc.mpbench_scores import mpbench_items

    gold = pd.DataFrame(
        [
            {
                "item_id": 1,
                "external_id": "a",
                "status": "consensus",
                "decision": {"label": -1},
                "settled_at": 3,
                "source": "gsm8k",
                "error_type": None,
                "earliest_error": None,
                "error_steps": [],
                "final_answer_correct": True,
                "reference_answer": None,
                "meta": {},
                "n_steps": 3,
                "version_id": 1,
            },
        ]
    )
    # "no error" is known there, but an erroneous item's later steps are not: none is scored as SC
    assert mpbench_items(gold, "earliest_error").empty
    assert len(mpbench_items(gold, "step_review")) == 0  # no gold steps and no earliest error either
