"""Models scored against the gated benchmark: per item outcomes, then the tables the Scores panel shows.

Pure: the store's gold (item states and current versions) and predictions frames in, frames out.
Only kept items are scored (an earliest-error consensus, a completed review, an accepted gate);
ProcessBench's own discard (-1 on a wrong final answer) applies as in qc.presets. Section codes
(B2, A6) name the headings of docs/PROTOCOLS.md.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd

from qc.confidence import confidence_scores
from qc.scoring import (
    AVERAGE,
    choose_threshold,
    earliest_error_from_scores,
    lowest_scored_steps,
    prmbench_v_scores,
    prmbench_v_table,
    prmscore,
    processbench_table,
    step_correct,
)

__all__ = [
    "FAILURES",
    "KEPT",
    "failures",
    "gold_items",
    "item_outcomes",
    "model_table",
    "prmbench_prmscore",
    "prmbench_v_by_type",
    "scores_by",
    "step_confidences",
    "subset_table",
    "with_chosen_threshold",
]

NAN = float("nan")
KEPT = ("consensus", "complete", "accepted")
FAILURES = ("wrong step", "missed error", "false alarm", "no prediction")
OUTCOME_COLUMNS = [
    "model",
    "item_id",
    "external_id",
    "subset",
    "error_type",
    "difficulty",
    "agreement",
    "gold_earliest",
    "predicted_earliest",
    "outcome",
    "gold_steps",
    "predicted_steps",
    "strict",
    "precision",
    "recall",
    "confidences",
    "threshold",
    "threshold_on",
    "perturbed",
    "n_steps",
]


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _agreement(row: Any, task: str, decision: dict[str, Any]) -> str:
    """How far the humans agreed on the item: ProcessBench's 3/n; elsewhere adjudicated, unanimous or
    split (the annotators' labels, whole, alike or not), with how many labelled it."""
    settled = row.settled_at
    if task == "earliest_error":
        return f"3/{int(settled)}" if not _missing(settled) else "n/a"
    if decision.get("adjudicated"):
        return "adjudicated"
    distinct: Any = getattr(row, "distinct_labels", None)
    if _missing(settled) or _missing(distinct) or int(settled) < 2:
        return "one annotator" if not _missing(settled) and int(settled) == 1 else "n/a"
    return f"{'unanimous' if int(distinct) == 1 else 'split'} ({int(settled)})"


def gold_items(gold: pd.DataFrame, task: str) -> pd.DataFrame:
    """Kept items with the gold a model is scored on: gold_earliest (0-based, -1 = no error; the
    consensus label for earliest-error datasets, else the version's, else its first error step),
    gold_steps (1-based error step numbers, from the store's 0-based positions), n_steps (the chain's
    length, 0 where the gold frame has none), subset (source, else "all"), difficulty and agreement (the
    humans': the review's difficulty; an earliest-error item's 3/n, elsewhere unanimous, split or
    adjudicated)."""
    kept = gold[gold["status"].isin(KEPT)].copy()
    earliest, difficulty, agreement = [], [], []
    for row in kept.itertuples():
        decision = row.decision if isinstance(row.decision, dict) else {}
        label = decision.get("label") if task == "earliest_error" else None
        if label is None and not _missing(row.earliest_error):
            label = row.earliest_error
        if label is None and row.error_steps:
            label = min(int(s) for s in row.error_steps)  # the store's positions are 0-based
        if task == "earliest_error" and label == -1 and row.final_answer_correct is False:
            label = None  # ProcessBench discards "no error" on a wrong final answer (B2)
        earliest.append(NAN if label is None else float(label))
        difficulty.append(str(decision.get("difficulty") or "not rated"))
        agreement.append(_agreement(row, task, decision))
    kept["gold_earliest"] = earliest
    # The store keeps 0-based positions; models are scored on PRMBench-V's 1-based step numbers.
    kept["gold_steps"] = [[int(s) + 1 for s in steps] for steps in kept["error_steps"]]
    kept["subset"] = [s if isinstance(s, str) and s else "all" for s in kept["source"]]
    kept["difficulty"] = difficulty
    kept["agreement"] = agreement
    kept["n_steps"] = [int(n) if not _missing(n) else 0 for n in kept.get("n_steps", [0] * len(kept))]
    kept = kept[~(np.isnan(kept["gold_earliest"].astype(float)) & (kept["gold_steps"].map(len) == 0))]
    columns = [
        "item_id",
        "external_id",
        "subset",
        "error_type",
        "difficulty",
        "agreement",
        "gold_earliest",
        "gold_steps",
        "n_steps",
    ]
    return kept[columns].reset_index(drop=True)


def _predicted_earliest(row: Any) -> float:
    if not _missing(row.earliest_error):
        return float(row.earliest_error)
    if row.step_scores is not None and not _missing(row.threshold):
        return float(earliest_error_from_scores(row.step_scores, float(row.threshold)))
    if row.error_steps is not None:
        return float(min(int(s) for s in row.error_steps) - 1) if row.error_steps else -1.0
    return NAN


def _outcome(gold: float, pred: float) -> str | None:
    if np.isnan(gold):
        return None
    if np.isnan(pred):
        return "no prediction"
    if gold == pred:
        return "correct"
    if gold == -1:
        return "false alarm"
    return "missed error" if pred == -1 else "wrong step"


TUNING_SUBSET = "gsm8k"  # ProcessBench chose its scalar PRMs' threshold on GSM8K (002 l.278)


def with_chosen_threshold(
    predictions: pd.DataFrame, items: pd.DataFrame, subset: str = TUNING_SUBSET
) -> pd.DataFrame:
    """A model's predictions with step scores but no threshold get ProcessBench's: the F1-optimal tau
    on the kept items of ``subset`` (matched case-insensitively), else on all kept items; the rows
    gain ``threshold`` and ``threshold_on`` (where it was chosen; "given" when the file had one)."""
    out = predictions.copy()
    out["threshold_on"] = ["given" if not _missing(t) else None for t in out["threshold"]]
    needs = out["step_scores"].notna() & out["threshold"].isna() & out["earliest_error"].isna()
    if not needs.any():
        return out
    gold = items.set_index("item_id")
    scored = out[needs & out["item_id"].isin(gold.index)]
    scored = scored[gold.loc[scored["item_id"], "gold_earliest"].notna().to_numpy()]
    on_subset = gold.loc[scored["item_id"], "subset"].astype(str).str.lower().to_numpy() == subset.lower()
    tuning = scored[on_subset] if on_subset.any() else scored
    if tuning.empty:
        return out
    tau, _ = choose_threshold(
        tuning["step_scores"].tolist(), gold.loc[tuning["item_id"], "gold_earliest"].astype(int).tolist()
    )
    out.loc[needs, "threshold"] = tau
    out.loc[needs, "threshold_on"] = subset if on_subset.any() else "all kept items"
    return out


def _perturbed(pred: Any, external_id: Any, passed: Collection[tuple[str, int]]) -> list[Any] | None:
    """P(correct) on each step's perturbed input where its variant passed the check, else None."""
    values = getattr(pred, "perturbed_confidences", None) if pred is not None else None
    if not isinstance(values, list):
        return None
    return [v if (str(external_id), k) in passed else None for k, v in enumerate(values, start=1)]


def item_outcomes(
    items: pd.DataFrame, predictions: pd.DataFrame, passed: Collection[tuple[str, int]] = ()
) -> pd.DataFrame:
    """One row per model and kept item (a missing prediction counts as wrong): the earliest error
    predicted and the outcome (correct, wrong step, missed error, false alarm, no prediction), and
    PRMBench-V's per-item strict/precision/recall where the item has gold error steps (scalar step
    scores flag the k lowest steps, k = the gold's count). ``passed``: the (item, 1-based step) whose
    perturbed variant passed its check; only those steps' perturbed confidences count (CRS)."""
    passed = set(passed)
    rows = []
    for model, mine in predictions.groupby("model", sort=True):
        mine = with_chosen_threshold(mine, items)
        by_item = {int(r.item_id): r for r in mine.itertuples()}
        for item in items.itertuples():
            pred = by_item.get(int(item.item_id))
            pred_earliest = _predicted_earliest(pred) if pred is not None else NAN
            steps: list[int] | None = None
            if pred is not None and pred.error_steps is not None:
                steps = [int(s) for s in pred.error_steps]
            elif pred is not None and pred.step_scores is not None and item.gold_steps:
                steps = lowest_scored_steps(pred.step_scores, len(item.gold_steps))
            strict = precision = recall = NAN
            if item.gold_steps:
                scored = prmbench_v_scores([steps or []], [item.gold_steps])
                strict, precision, recall = scored["accuracy"], scored["precision"], scored["recall"]
            rows.append(
                {
                    "model": model,
                    "item_id": int(item.item_id),
                    "external_id": item.external_id,
                    "subset": item.subset,
                    "error_type": item.error_type,
                    "difficulty": item.difficulty,
                    "agreement": item.agreement,
                    "gold_earliest": item.gold_earliest,
                    "predicted_earliest": pred_earliest,
                    "outcome": _outcome(item.gold_earliest, pred_earliest),
                    "gold_steps": list(item.gold_steps),
                    "predicted_steps": steps,
                    "strict": strict,
                    "precision": precision,
                    "recall": recall,
                    "confidences": pred.step_confidences if pred is not None else None,
                    "threshold": pred.threshold if pred is not None else NAN,
                    "threshold_on": pred.threshold_on if pred is not None else None,
                    "perturbed": _perturbed(pred, item.external_id, passed),
                    "n_steps": int(item.n_steps),
                }
            )
    return pd.DataFrame(rows, columns=OUTCOME_COLUMNS)


def step_confidences(part: pd.DataFrame) -> tuple[list[float], list[int], list[Any]]:
    """Per step of the items with confidences: P(correct), gold (0 = a gold error step, else 1) and
    the item's error type on its error steps (None elsewhere): qc.confidence's inputs."""
    p, gold, types, _ = _steps_with_perturbed(part)
    return p, gold, types


def _steps_with_perturbed(part: pd.DataFrame) -> tuple[list[float], list[int], list[Any], list[Any]]:
    p: list[float] = []
    gold: list[int] = []
    types: list[Any] = []
    perturbed: list[Any] = []
    for row in part.itertuples():
        if not row.confidences:
            continue
        wrong = {int(s) for s in row.gold_steps}
        after = getattr(row, "perturbed", None)
        after = after if isinstance(after, list) and len(after) == len(row.confidences) else None
        for number, value in enumerate(row.confidences, start=1):
            p.append(float(value))
            gold.append(0 if number in wrong else 1)
            types.append(row.error_type if number in wrong else None)
            perturbed.append(after[number - 1] if after is not None else None)
    return p, gold, types, perturbed


def _confidence_metrics(part: pd.DataFrame) -> dict[str, float]:
    """CSS, ECE and CCS over every step; CRS over the steps whose variant passed its check (NaN
    where none did)."""
    p, gold, types, perturbed = _steps_with_perturbed(part)
    if not p:
        return {"crs": NAN, "css": NAN, "ece": NAN, "ccs": NAN}
    scores = confidence_scores(p, gold, types, p_perturbed=perturbed)
    crs = scores["crs"] if any(v is not None for v in perturbed) else NAN
    return {"crs": crs, "css": scores["css"], "ece": scores["ece"], "ccs": scores["ccs"]}


def subset_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """ProcessBench's table per model: each subset's denominators, accuracies and F1, then Average."""
    parts = []
    for model, mine in outcomes.groupby("model", sort=True):
        scored = mine[mine["outcome"].notna()]
        if scored.empty:
            continue
        table = processbench_table(
            scored["predicted_earliest"].tolist(), scored["gold_earliest"].tolist(), scored["subset"].tolist()
        )
        parts.append(table.assign(model=model))
    if not parts:
        return pd.DataFrame(
            columns=["model", "subset", "n_error", "n_correct", "error_acc", "correct_acc", "f1"]
        )
    out = pd.concat(parts, ignore_index=True)
    return out[["model", "subset", "n_error", "n_correct", "error_acc", "correct_acc", "f1"]]


def prmbench_prmscore(stepped: pd.DataFrame, undefined: str = "zero") -> float:
    """PRMBench's PRMScore of one model over its kept items with gold error steps, steps pooled as its
    code pools them over the erroneous items; a step is predicted correct unless the model flagged it
    (its error_steps, or a scalar PRM's k lowest as in PRMBench-V). Items without a step prediction
    are left out, as PRMBench leaves out invalid answers. ``undefined``: qc.scoring.PRMSCORE_CONVENTIONS."""
    predicted: list[bool] = []
    gold: list[bool] = []
    for row in stepped.itertuples():
        if not isinstance(row.predicted_steps, list) or not row.n_steps:
            continue
        predicted += step_correct(row.predicted_steps, int(row.n_steps))
        gold += step_correct(row.gold_steps, int(row.n_steps))
    return prmscore(predicted, gold, undefined)["prmscore"] if gold else NAN


def model_table(outcomes: pd.DataFrame, prmscore_undefined: str = "zero") -> pd.DataFrame:
    """Several models side by side: one row per model with every metric its predictions allow;
    ``prmscore_undefined`` names PRMScore's convention for an undefined F1 (qc.scoring)."""
    columns = [
        "model",
        "items",
        "predicted",
        "error_acc",
        "correct_acc",
        "f1",
        "average_f1",
        "strict_accuracy",
        "precision",
        "recall",
        "prmscore",
        "crs",
        "css",
        "ece",
        "ccs",
        "threshold",
        "threshold_on",
    ]
    if outcomes.empty:
        return pd.DataFrame(columns=columns)
    subsets = subset_table(outcomes)
    rows = []
    for model, mine in outcomes.groupby("model", sort=True):
        scored = mine[mine["outcome"].notna()]
        erroneous = scored[scored["gold_earliest"] != -1]
        correct = scored[scored["gold_earliest"] == -1]
        e = float((erroneous["outcome"] == "correct").mean()) if len(erroneous) else NAN
        c = float((correct["outcome"] == "correct").mean()) if len(correct) else NAN
        mine_subsets = subsets[(subsets["model"] == model)].set_index("subset")
        overall = processbench_table(
            scored["predicted_earliest"].tolist(), scored["gold_earliest"].tolist(), ["all"] * len(scored)
        ).set_index("subset")
        stepped = mine[mine["gold_steps"].map(len) > 0]
        rows.append(
            {
                "model": model,
                "items": len(mine),
                "predicted": int(mine["outcome"].ne("no prediction").sum()),
                "error_acc": e,
                "correct_acc": c,
                "f1": float(overall.loc["all", "f1"]) if len(scored) else NAN,
                "average_f1": float(mine_subsets.loc[AVERAGE, "f1"])
                if AVERAGE in mine_subsets.index
                else NAN,
                "strict_accuracy": float(stepped["strict"].mean()) if len(stepped) else NAN,
                "precision": float(stepped["precision"].mean()) if len(stepped) else NAN,
                "recall": float(stepped["recall"].mean()) if len(stepped) else NAN,
                "prmscore": prmbench_prmscore(stepped, prmscore_undefined),
                **_confidence_metrics(mine),
                "threshold": float(mine["threshold"].dropna().iloc[0])
                if mine["threshold"].notna().any()
                else NAN,
                "threshold_on": next((str(t) for t in mine["threshold_on"] if isinstance(t, str)), ""),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def scores_by(outcomes: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per model and human grouping (difficulty, agreement): items and the share the model got right
    (earliest error exact; PRMBench-V strict accuracy where the item has only error steps)."""
    if outcomes.empty:
        return pd.DataFrame(columns=["model", column, "items", "accuracy"])
    right = np.where(outcomes["outcome"].notna(), outcomes["outcome"] == "correct", outcomes["strict"] == 1.0)
    frame = outcomes.assign(right=right.astype(float))
    table = frame.groupby(["model", column], sort=True)["right"].agg(["size", "mean"]).reset_index()
    return table.rename(columns={"size": "items", "mean": "accuracy"})


def failures(outcomes: pd.DataFrame, model: str) -> pd.DataFrame:
    """The model's failure cases on earliest error, worst kinds first: wrong step, missed error,
    false alarm, no prediction; steps shown 1-based as the panels number them (0 = no error)."""
    mine = outcomes[(outcomes["model"] == model) & outcomes["outcome"].isin(FAILURES)].copy()
    order = {name: i for i, name in enumerate(FAILURES)}
    mine["rank"] = mine["outcome"].map(order)
    mine = mine.sort_values(["rank", "item_id"])
    return pd.DataFrame(
        {
            "item_id": mine["item_id"].astype(int),
            "external_id": mine["external_id"],
            "outcome": mine["outcome"],
            "gold_step": [int(v) + 1 if v >= 0 else 0 for v in mine["gold_earliest"]],
            "predicted_step": [
                NAN if np.isnan(v) else (int(v) + 1 if v >= 0 else 0) for v in mine["predicted_earliest"]
            ],
            "difficulty": mine["difficulty"],
            "agreement": mine["agreement"],
        }
    ).reset_index(drop=True)


def prmbench_v_by_type(outcomes: pd.DataFrame) -> pd.DataFrame:
    """PRMBench-V's Tables 1 and 5 per model: strict accuracy and relaxed precision and recall per
    error type, then Overall (macro over the items), on the kept items with gold error steps; a model
    without step predictions on an item counts as predicting none there (A6: precision 0)."""
    columns = ["model", "error_type", "n_items", "accuracy", "precision", "recall"]
    parts = []
    for model, mine in outcomes.groupby("model", sort=True):
        stepped = mine[mine["gold_steps"].map(len) > 0]
        if stepped.empty or stepped["predicted_steps"].isna().all():
            continue
        predicted = [p if isinstance(p, list) else [] for p in stepped["predicted_steps"]]
        types = [t if isinstance(t, str) and t else "untyped" for t in stepped["error_type"]]
        parts.append(prmbench_v_table(predicted, stepped["gold_steps"].tolist(), types).assign(model=model))
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
