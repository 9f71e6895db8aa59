"""Model predictions per model and item version, and the gold they are scored against.

A model's import replaces its predictions on the dataset whole (a re-run of the model is a new
file, not a correction of single rows). Lists (error steps, step scores, confidences) are JSON text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from store.annotations import RULING

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "PREDICTION_FIELDS",
    "item_versions",
    "models",
    "passed_variants",
    "predictions_frame",
    "replace_predictions",
    "scoring_gold",
]

# earliest_error: 0-based step (-1 = no error, ProcessBench); error_steps: 1-based numbers
# (PRMBench-V); step_scores with threshold (scalar PRMs); step_confidences: P(step correct);
# perturbed_confidences: P(step correct) on the step's perturbed input (ConfProBench's CRS), kept in
# the confidences' column as {"original": [...], "perturbed": [...]} (no column of its own).
PREDICTION_FIELDS = (
    "earliest_error",
    "error_steps",
    "step_scores",
    "step_confidences",
    "threshold",
    "perturbed_confidences",
)


def item_versions(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """external_id -> item_id and current version_id, with the version's chain length (steps scored)
    and its meta (JSON text: MPBench's candidates)."""
    return db.df(
        "SELECT i.external_id, i.id AS item_id, i.current_version_id AS version_id, "
        "(SELECT v.meta FROM item_versions v WHERE v.id = i.current_version_id) AS meta, "
        "(SELECT count(*) FROM steps st WHERE st.version_id = i.current_version_id "
        " AND st.role IN ('modified', 'solution', 'candidate')) AS scored_steps, "
        "(SELECT count(*) FROM steps st WHERE st.version_id = i.current_version_id AND st.role = 'original') "
        " AS original_steps "
        "FROM items i WHERE i.dataset_id = ? ORDER BY i.id",
        [dataset_id],
    )


def replace_predictions(
    store: Store, model: str, dataset_id: int, rows: list[dict[str, Any]], imported_by: int | None
) -> int:
    """Store ``rows`` (item_id, version_id and PREDICTION_FIELDS) as the model's predictions on the
    dataset, replacing what the model had there, in one transaction. Returns the rows stored."""

    def text(value: Any) -> str | None:
        return None if value is None else json.dumps(value)

    with store.writing() as tx:
        tx.execute("DELETE FROM predictions WHERE model = ? AND dataset_id = ?", [model, dataset_id])
        tx.executemany(
            "INSERT INTO predictions (model, dataset_id, item_id, version_id, earliest_error, error_steps, "
            "step_scores, step_confidences, threshold, imported_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    model,
                    dataset_id,
                    int(r["item_id"]),
                    int(r["version_id"]),
                    r.get("earliest_error"),
                    text(r.get("error_steps")),
                    text(r.get("step_scores")),
                    text(
                        {"original": r.get("step_confidences"), "perturbed": r["perturbed_confidences"]}
                        if r.get("perturbed_confidences") is not None
                        else r.get("step_confidences")
                    ),
                    r.get("threshold"),
                    imported_by,
                )
                for r in rows
            ],
        )
        stored = tx.scalar(
            "SELECT count(*) FROM predictions WHERE model = ? AND dataset_id = ?", [model, dataset_id]
        )
    return int(stored)


def models(db: Store | Tx, dataset_id: int) -> list[str]:
    rows = db.fetchall(
        "SELECT DISTINCT model FROM predictions WHERE dataset_id = ? ORDER BY model", [dataset_id]
    )
    return [str(r[0]) for r in rows]


def predictions_frame(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """Every model's predictions on the dataset's current versions (older versions' predictions stay
    stored but are not scored: the gold belongs to the current version). Lists decoded."""
    frame = db.df(
        "SELECT p.model, p.item_id, p.version_id, p.earliest_error, p.error_steps, p.step_scores, "
        "p.step_confidences, p.threshold FROM predictions p JOIN items i ON i.id = p.item_id "
        "AND i.current_version_id = p.version_id WHERE p.dataset_id = ? ORDER BY p.model, p.item_id",
        [dataset_id],
    )
    for column in ("error_steps", "step_scores", "step_confidences"):
        frame[column] = [json.loads(v) if isinstance(v, str) else None for v in frame[column]]
    both = [
        v if isinstance(v, dict) else {"original": v, "perturbed": None} for v in frame["step_confidences"]
    ]
    frame["step_confidences"] = [v["original"] for v in both]
    frame["perturbed_confidences"] = [v["perturbed"] for v in both]
    return frame


def passed_variants(db: Store | Tx, dataset_name: str) -> set[tuple[str, int]]:
    """(item id in the source file, 1-based step) of every perturbed step of ``dataset_name`` whose
    variant passed its check (ConfProBench's CRS counts only those): perturbation-check items accepted."""
    rows = db.fetchall(
        "SELECT v.meta FROM items i JOIN item_versions v ON v.id = i.current_version_id "
        "JOIN item_state s ON s.item_id = i.id JOIN datasets d ON d.id = i.dataset_id "
        "WHERE d.task = 'perturbation_check' AND s.status = 'accepted'"
    )
    passed = set()
    for (meta,) in rows:
        unit = (json.loads(meta) if isinstance(meta, str) else {}).get("perturbation") or {}
        if unit.get("source_dataset") == dataset_name and unit.get("step") is not None:
            passed.add((str(unit["source_item"]), int(unit["step"])))
    return passed


def scoring_gold(db: Store | Tx, dataset_id: int) -> pd.DataFrame:
    """Per item of the dataset: its state and decision and the current version's gold fields, its
    meta (MPBench's paradigm and candidates), chain length (n_steps: the steps a model scores) and how
    many different labels its annotators gave (distinct_labels: 1 = unanimous)."""
    frame = db.df(
        "SELECT s.item_id, i.external_id, i.current_version_id AS version_id, s.status, s.decision, "
        "s.settled_at, v.source, v.error_type, v.earliest_error, v.error_steps, v.final_answer_correct, "
        "v.reference_answer, v.meta, "
        "coalesce(nullif((SELECT count(*) FROM steps st WHERE st.version_id = v.id "
        " AND st.role IN ('modified', 'solution', 'candidate')), 0), "
        " (SELECT count(*) FROM steps st WHERE st.version_id = v.id AND st.role = 'original')) AS n_steps, "
        "(SELECT count(DISTINCT a.payload) FROM annotations a WHERE a.version_id = v.id "
        f" AND a.task <> '{RULING}' AND a.id NOT IN (SELECT a2.id FROM annotations a2 JOIN gold g "
        " ON g.item_id = a2.item_id AND a2.id > g.after_annotation)) AS distinct_labels "
        "FROM item_state s JOIN items i ON i.id = s.item_id JOIN item_versions v ON v.id = i.current_version_id "
        "WHERE s.dataset_id = ? ORDER BY s.item_id",
        [dataset_id],
    )
    frame["error_steps"] = [json.loads(v) if isinstance(v, str) else [] for v in frame["error_steps"]]
    frame["decision"] = [json.loads(v) if isinstance(v, str) and v else {} for v in frame["decision"]]
    frame["meta"] = [json.loads(v) if isinstance(v, str) and v else {} for v in frame["meta"]]
    return frame
