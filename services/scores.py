"""Scoring models: import a model's predictions, then score every model against the gated labels.

A predictions file is JSONL (or a JSON list), one object per item: ``id`` (the item's id as
imported) and at least one of ``earliest_error`` (0-based step, -1 = no error, as ProcessBench),
``error_steps`` (1-based step numbers, as PRMBench-V), ``step_scores`` (one number per step; with
``threshold`` for an earliest error), ``step_confidences`` (P(step correct) per step, ConfProBench)
with ``perturbed_confidences`` (the same on each step's perturbed input, null where none: CRS counts
only the steps whose variant passed its check in a perturbation-check dataset made from this one).
The whole file or nothing: every problem is listed with its line, and nothing is stored.
Importing is an admin's; the scores hold the gold, so adjudicators and admins see them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qc import model_scores, mpbench_scores
from qc.scoring import PRMSCORE_CONVENTIONS
from services.access import Action, Actor, require, require_reviewer
from services.errors import InvalidInput, NotFound
from store import predictions as store_predictions
from store.datasets import get_dataset
from store.db import on_all_cores

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from store import Store
    from store.datasets import Dataset
    from store.users import Annotator

__all__ = [
    "PRMSCORE_CONVENTIONS",
    "PredictionsImported",
    "ScoreReport",
    "failure_cases",
    "figures",
    "import_predictions",
    "score_report",
]

MAX_PROBLEMS = 10  # problems listed in one message; the count says how many more
MAX_MODEL_NAME = 80


@dataclass(frozen=True)
class PredictionsImported:
    model: str
    dataset: str
    items: int
    replaced: bool

    def summary(self) -> str:
        verb = "replaced its earlier predictions" if self.replaced else "stored"
        return f"{self.model} on {self.dataset}: {self.items} predictions {verb}."


@dataclass(frozen=True)
class ScoreReport:
    dataset: str
    task: str
    models: list[str]
    table: pd.DataFrame  # qc.model_scores.model_table
    subsets: pd.DataFrame  # qc.model_scores.subset_table
    by_difficulty: pd.DataFrame
    by_agreement: pd.DataFrame
    outcomes: pd.DataFrame  # qc.model_scores.item_outcomes
    n_kept: int
    mpbench: pd.DataFrame  # qc.mpbench_scores.mpbench_table: MPBench's Table 2 per model
    mpbench_domains: pd.DataFrame  # qc.mpbench_scores.domain_table: its Table 3
    prmbench_v: pd.DataFrame  # qc.model_scores.prmbench_v_by_type: PRMBench-V's Tables 1 and 5
    # which convention the table's PRMScore used for an undefined F1 (a PRMSCORE_CONVENTIONS key)
    prmscore_convention: str = "zero"

    @property
    def prmscore_note(self) -> str:
        """What the PRMScore column is, in words, with its convention."""
        return (
            "PRMScore = 0.5 F1 + 0.5 negative F1 over the steps of the items with gold error steps "
            f"(PRMBench); {PRMSCORE_CONVENTIONS[self.prmscore_convention]}."
        )


def _dataset(store: Store, name: str) -> Dataset:
    dataset = get_dataset(store, name)
    if dataset is None:
        raise NotFound(f"There is no dataset named {name!r}.")
    return dataset


def _read_rows(path: Path, shown: str) -> list[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{shown}: cannot be read ({exc}).") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            return list(enumerate(json.loads(text), start=1))
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{shown}: not valid JSON ({exc.msg}, line {exc.lineno}).") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            rows.append((number, f"not valid JSON ({exc.msg})"))
    return rows


def _numbers(value: Any, name: str, whole: bool) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"{name} holds {v!r}, not a number")
        if whole and int(v) != v:
            raise ValueError(f"{name} holds {v!r}, not a step number")
        out.append(int(v) if whole else float(v))
    return out


def _perturbed(value: Any, confidences: list[Any] | None) -> list[Any]:
    """ConfProBench: P(step correct) on each step's perturbed input, null where the step has none."""
    if confidences is None:
        raise ValueError("perturbed_confidences need the step_confidences they are compared with")
    if not isinstance(value, list) or len(value) != len(confidences):
        raise ValueError(
            f"perturbed_confidences needs one entry per step ({len(confidences)}), null where none"
        )
    out = [None if v is None else _numbers([v], "perturbed_confidences", whole=False)[0] for v in value]
    if any(v is not None and not 0.0 <= v <= 1.0 for v in out):
        raise ValueError("perturbed_confidences are probabilities in [0, 1]")
    return out


def _candidate_scores(value: Any, candidates: int) -> list[Any]:
    """MPBench's answer aggregation and process search: one score, or one list of step scores, per
    candidate of the item."""
    if not isinstance(value, list) or len(value) != candidates:
        raise ValueError(
            f"step_scores needs one entry per candidate: {candidates} (a number or a list of step scores)"
        )
    return [
        _numbers(v, "step_scores", whole=False)
        if isinstance(v, list)
        else _numbers([v], "step_scores", whole=False)[0]
        for v in value
    ]


def _prediction(raw: Any, steps: int, candidates: int | None = None) -> dict[str, Any]:
    """One row's prediction fields, checked; ValueError says what is wrong. ``candidates``: the
    item's candidate count where it has candidates (MPBench), whose step_scores are per candidate."""
    if not isinstance(raw, dict):
        raise ValueError(raw if isinstance(raw, str) else "not a JSON object")
    fields = {k: raw[k] for k in store_predictions.PREDICTION_FIELDS if raw.get(k) is not None}
    if not set(fields) - {"threshold"}:
        raise ValueError("no prediction: give earliest_error, error_steps, step_scores or step_confidences")
    out: dict[str, Any] = {}
    if "earliest_error" in fields:
        value = fields["earliest_error"]
        if isinstance(value, bool) or not isinstance(value, int) or value < -1:
            raise ValueError(f"earliest_error {value!r} is not a step index (0-based, -1 = no error)")
        out["earliest_error"] = value
    if "error_steps" in fields:
        out["error_steps"] = sorted(set(_numbers(fields["error_steps"], "error_steps", whole=True)))
        if any(s < 1 for s in out["error_steps"]):
            raise ValueError("error_steps are 1-based step numbers (1 = the first step)")
    for name in ("step_scores", "step_confidences"):
        if name == "step_scores" and name in fields and candidates is not None:
            out[name] = _candidate_scores(fields[name], candidates)
        elif name in fields:
            out[name] = _numbers(fields[name], name, whole=False)
            if steps and len(out[name]) != steps:
                raise ValueError(f"{name} has {len(out[name])} values for a chain of {steps} steps")
    if any(not 0.0 <= p <= 1.0 for p in out.get("step_confidences", [])):
        raise ValueError("step_confidences are probabilities in [0, 1]")
    if "perturbed_confidences" in fields:
        out["perturbed_confidences"] = _perturbed(
            fields["perturbed_confidences"], out.get("step_confidences")
        )
    if "threshold" in fields:
        value = fields["threshold"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"threshold {value!r} is not a number")
        out["threshold"] = float(value)
    return out


@on_all_cores
def import_predictions(
    store: Store,
    user: Actor,
    path: str | Path,
    *,
    model: str,
    dataset: str,
    shown_name: str | None = None,
) -> PredictionsImported:
    """Store a model's predictions on a dataset's current item versions (an admin's; ``user`` None is
    the command line). All rows or none: an unknown id, a duplicate or a malformed field refuses the
    file with every problem and its line. A model imported again has its predictions replaced."""
    require(user, Action.ADMINISTER)
    model = (model or "").strip()
    if not model or len(model) > MAX_MODEL_NAME:
        raise InvalidInput(f"Give the model a name of 1 to {MAX_MODEL_NAME} characters.")
    target = _dataset(store, dataset)
    path = Path(path)
    shown = shown_name or path.name
    versions = store_predictions.item_versions(store, target.id).set_index("external_id")
    rows, problems, seen = [], [], set()
    for number, raw in _read_rows(path, shown):
        key = raw.get("id", raw.get("external_id")) if isinstance(raw, dict) else None
        if isinstance(raw, dict) and key is None:
            problems.append(f"line {number}: no id")
            continue
        key = str(key) if key is not None else None
        if key is not None and key not in versions.index:
            problems.append(f"line {number}: no item {key!r} in {target.name}")
            continue
        if key in seen:
            problems.append(f"line {number}: item {key!r} appears twice")
            continue
        item = versions.loc[key] if key is not None else None
        steps = int(item["scored_steps"] or item["original_steps"]) if item is not None else 0
        try:
            meta = json.loads(item["meta"]) if item is not None and isinstance(item["meta"], str) else {}
            fields = _prediction(raw, steps, mpbench_scores.candidate_count(meta))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if item is None:  # a row that is no object: _prediction refused it above
            continue
        seen.add(key)
        rows.append({"item_id": int(item["item_id"]), "version_id": int(item["version_id"]), **fields})
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
        raise InvalidInput(
            f"{shown}: nothing imported; fix these lines{more}: " + "; ".join(problems[:MAX_PROBLEMS]) + "."
        )
    if not rows:
        raise InvalidInput(f"{shown}: no predictions in the file; nothing imported.")
    replaced = model in store_predictions.models(store, target.id)
    stored = store_predictions.replace_predictions(store, model, target.id, rows, user.id)
    return PredictionsImported(model=model, dataset=target.name, items=stored, replaced=replaced)


@on_all_cores
def score_report(
    store: Store, user: Annotator, dataset: str, prmscore_undefined: str = "zero"
) -> ScoreReport:
    """Every model with predictions on the dataset, scored on its kept items (reviewers and admins).
    ``prmscore_undefined``: PRMBench's PRMScore with an undefined F1 as the paper's formula ("zero")
    or as its code ("minus_one_clipped", to reproduce its leaderboard); the report names it."""
    require_reviewer(user)
    if prmscore_undefined not in PRMSCORE_CONVENTIONS:
        raise InvalidInput(
            f"PRMScore convention must be one of {', '.join(PRMSCORE_CONVENTIONS)}, not {prmscore_undefined!r}."
        )
    target = _dataset(store, dataset)
    gold = store_predictions.scoring_gold(store, target.id)
    items = model_scores.gold_items(gold, target.task)
    predictions = store_predictions.predictions_frame(store, target.id)
    passed = store_predictions.passed_variants(store, target.name)
    outcomes = model_scores.item_outcomes(items, predictions, passed)
    mpbench_items = mpbench_scores.mpbench_items(gold, target.task)
    return ScoreReport(
        dataset=target.name,
        task=target.task,
        models=sorted(predictions["model"].unique().tolist()) if len(predictions) else [],
        table=model_scores.model_table(outcomes, prmscore_undefined),
        subsets=model_scores.subset_table(outcomes),
        by_difficulty=model_scores.scores_by(outcomes, "difficulty"),
        by_agreement=model_scores.scores_by(outcomes, "agreement"),
        outcomes=outcomes,
        n_kept=len(items),
        mpbench=mpbench_scores.mpbench_table(mpbench_items, predictions),
        mpbench_domains=mpbench_scores.domain_table(mpbench_items, predictions),
        prmbench_v=model_scores.prmbench_v_by_type(outcomes),
        prmscore_convention=prmscore_undefined,
    )


def failure_cases(report: ScoreReport, model: str) -> pd.DataFrame:
    """The model's failure cases in the report (wrong step, missed error, false alarm, no prediction)."""
    if model not in report.models:
        raise NotFound(f"No predictions of a model named {model!r} on {report.dataset}.")
    return model_scores.failures(report.outcomes, model)


def figures(report: ScoreReport) -> tuple[Figure, Figure]:
    """The models' scores as bars and their confidences' reliability diagram (matplotlib loads here)."""
    from qc import score_plots

    return score_plots.scores_figure(report.table), score_plots.reliability_figure(report.outcomes)
