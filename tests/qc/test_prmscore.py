"""PRMBench's PRMScore: the paper's formula by default, its code's convention for an undefined F1 as a
setting (issue 30), and the Scores tab naming which one a number used."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import numpy as np
import pytest

from qc.scoring import PRMSCORE_CONVENTIONS, prmscore, step_correct
from services import data, scores
from services.access import OPERATOR
from services.errors import InvalidInput
from store import Store, users
from store.datasets import get_dataset
from ui.context import TEAM, AppContext
from ui.panels import scores as scores_panel

pytestmark = pytest.mark.engines


def mr_eval_prmscore(predicted_correct: list[bool], gold_correct: list[bool]) -> float:
    """PRMBench's own arithmetic, restated as the reference: the F1 and negative F1 of
    mr_eval/tasks/prmtest_classified/task.py (evaluate_function: -1 where a precision, recall or F1
    is undefined) and the score of its leaderboard notebooks (mr_visualize/.../form_latex_strs.ipynb,
    get_prmscore_from_current_res_dict: 0.5 f1 + 0.5 negative_f1, then `x if x > 0 else 0`)."""
    tp = sum(p and g for p, g in zip(predicted_correct, gold_correct, strict=True))
    fp = sum(p and not g for p, g in zip(predicted_correct, gold_correct, strict=True))
    tn = sum(not p and not g for p, g in zip(predicted_correct, gold_correct, strict=True))
    fn = sum(not p and g for p, g in zip(predicted_correct, gold_correct, strict=True))
    precision = tp / (tp + fp) if (tp + fp) != 0 else -1
    recall = tp / (tp + fn) if (tp + fn) != 0 else -1
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) != 0 else -1
    negative_precision = tn / (tn + fn) if (tn + fn) != 0 else -1
    negative_recall = tn / (tn + fp) if (tn + fp) != 0 else -1
    negative_f1 = (
        2 * negative_precision * negative_recall / (negative_precision + negative_recall)
        if (negative_precision + negative_recall) != 0
        else -1
    )
    score = f1 * 0.5 + negative_f1 * 0.5
    return score if score > 0 else 0


def test_the_issues_example_formula_and_code() -> None:
    gold = step_correct([2, 3], 3)  # error steps {2, 3}
    assert gold == [True, False, False]
    predicted = [False, True, False]
    paper = prmscore(predicted, gold)
    assert paper == {"f1": 0.0, "f1_neg": 0.5, "prmscore": 0.25}
    code = prmscore(predicted, gold, undefined="minus_one_clipped")
    assert code == {"f1": -1.0, "f1_neg": 0.5, "prmscore": 0.0}  # 0.5 * -1 + 0.5 * 0.5 < 0, clipped


def test_the_code_convention_matches_prmbench_arithmetic_on_random_pools() -> None:
    rng = np.random.default_rng(30)
    differ = 0
    for _ in range(2000):
        n = int(rng.integers(1, 9))
        gold = (rng.random(n) < rng.random()).tolist()
        predicted = (rng.random(n) < rng.random()).tolist()
        code = prmscore(predicted, gold, undefined="minus_one_clipped")["prmscore"]
        assert code == pytest.approx(mr_eval_prmscore(predicted, gold), abs=1e-12)
        differ += abs(code - prmscore(predicted, gold)["prmscore"]) > 1e-12
    assert differ > 0  # the conventions part on small pools with an undefined F1


def test_an_unknown_convention_is_refused() -> None:
    with pytest.raises(ValueError, match="undefined must be one of"):
        prmscore([True], [True], undefined="nan")


def _tiny_prmbench(store: Store, tmp_path: Path) -> str:
    """A PRMBench item of 3 steps with error steps 2 and 3, kept as a completed review would keep it."""
    record = {
        "idx": "tiny_0",
        "original_question": "What is 2 + 2 - 1?",
        "modified_question": "What is 2 + 2 - 1?",
        "original_process": ["2 + 2 = 4.", "4 - 1 = 3.", "The answer is 3."],
        "modified_process": ["2 + 2 = 4.", "4 - 1 = 5.", "The answer is 5."],
        "modified_steps": [2, 3],
        "error_steps": [2, 3],
        "reason": "Step 2 subtracts wrongly and step 3 repeats it.",
        "classification": "counterfactual",
    }
    path = tmp_path / "tiny.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    data.import_file(store, OPERATOR, path, dataset="tiny-prmbench")
    dataset = get_dataset(store, "tiny-prmbench")
    assert dataset is not None
    store.execute("UPDATE item_state SET status = 'complete' WHERE dataset_id = ?", [dataset.id])
    external = store.scalar("SELECT external_id FROM items WHERE dataset_id = ?", [dataset.id])
    predictions = tmp_path / "model.jsonl"
    predictions.write_text(json.dumps({"id": external, "error_steps": [1, 3]}) + "\n", encoding="utf-8")
    scores.import_predictions(store, OPERATOR, predictions, model="flagger", dataset="tiny-prmbench")
    return "tiny-prmbench"


def test_the_scores_report_names_its_prmscore_convention(store: Store, tmp_path: Path) -> None:
    dataset = _tiny_prmbench(store, tmp_path)
    users.add_user(store, "lead", "admin", password=None)
    lead = users.get_user(store, "lead")
    assert lead is not None
    paper = scores.score_report(store, lead, dataset)
    assert paper.prmscore_convention == "zero" and "the paper's formula" in paper.prmscore_note
    assert paper.table.set_index("model").loc["flagger", "prmscore"] == pytest.approx(0.25)
    code = scores.score_report(store, lead, dataset, prmscore_undefined="minus_one_clipped")
    assert code.table.set_index("model").loc["flagger", "prmscore"] == 0.0
    assert "PRMBench's code" in code.prmscore_note
    with pytest.raises(InvalidInput, match="PRMScore convention"):
        scores.score_report(store, lead, dataset, prmscore_undefined="other")

    ctx = AppContext(store=store, mode=TEAM)
    for key, value in (("zero", "25.0"), ("minus_one_clipped", "0.0")):
        shown = scores_panel.on_show(ctx, dataset, None, key, gr.Request(username="lead"))
        header = f"PRMScore ({PRMSCORE_CONVENTIONS[key]})"
        assert shown["models"].set_index("model").loc["flagger", header] == value
        assert PRMSCORE_CONVENTIONS[key] in shown["status"]
