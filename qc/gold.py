"""Annotator calibration on gold items: accuracy with its Wilson interval, recent accuracy, the alert.

``answers``: one row per answer on a gold item, oldest first, with columns ``annotator``,
``payload`` and ``gold_label`` (dicts or JSON text) and optionally ``seconds_spent`` and
``created_at``. An answer is correct when every field the gold label names has the same value in
the answer (a gold label may name only the fields it settles, e.g. the earliest error alone).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from qc.planning import wilson_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["AlertRule", "answer_correct", "calibration_figure", "calibration_series", "calibration_table"]

NAN = float("nan")


@dataclass(frozen=True)
class AlertRule:
    """Flag an annotator when, over their last ``window`` gold answers (at least ``min_items`` of
    them), accuracy is below ``threshold``."""

    threshold: float = 0.7
    min_items: int = 10
    window: int = 20

    def describe(self) -> str:
        return (
            f"flagged when accuracy over the last {self.window} gold answers is below {self.threshold:.0%}, "
            f"once there are at least {self.min_items} of them (fewer are too few to say)"
        )


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        loaded = json.loads(value)
        return loaded if isinstance(loaded, dict) else {}
    return dict(value) if isinstance(value, dict) else {}


def answer_correct(payload: Any, gold_label: Any) -> bool:
    """Every field of the gold label has the same value in the answer."""
    answer, gold = _as_dict(payload), _as_dict(gold_label)
    return bool(gold) and all(key in answer and answer[key] == value for key, value in gold.items())


def _scored(answers: pd.DataFrame) -> pd.DataFrame:
    out = answers.copy()
    out["correct"] = [answer_correct(p, g) for p, g in zip(out["payload"], out["gold_label"], strict=True)]
    return out


def calibration_table(answers: pd.DataFrame, rule: AlertRule, confidence: float = 0.95) -> pd.DataFrame:
    """Per annotator: gold answers, correct, accuracy and its Wilson interval, recent accuracy over the
    rule's window, median seconds per gold item, and ``flagged`` by the rule."""
    columns = [
        "annotator",
        "gold_answers",
        "correct",
        "accuracy",
        "lower",
        "upper",
        "recent_answers",
        "recent_accuracy",
        "median_seconds",
        "flagged",
    ]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    scored = _scored(answers)
    rows = []
    for who, group in scored.groupby("annotator", sort=True):
        n, k = len(group), int(group["correct"].sum())
        lower, upper = wilson_interval(k / n, n, confidence)
        recent = group.tail(rule.window)
        recent_accuracy = float(recent["correct"].mean())
        seconds = group["seconds_spent"].dropna() if "seconds_spent" in group else pd.Series(dtype=float)
        rows.append(
            {
                "annotator": who,
                "gold_answers": n,
                "correct": k,
                "accuracy": k / n,
                "lower": lower,
                "upper": upper,
                "recent_answers": len(recent),
                "recent_accuracy": recent_accuracy,
                "median_seconds": float(seconds.median()) if len(seconds) else NAN,
                "flagged": bool(len(recent) >= rule.min_items and recent_accuracy < rule.threshold),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def calibration_series(answers: pd.DataFrame, window: int) -> pd.DataFrame:
    """Per annotator and answer (in order): the answer's number, when, and the rolling accuracy over
    the last ``window`` answers (the line an admin watches)."""
    if answers.empty:
        return pd.DataFrame(columns=["annotator", "answer", "created_at", "rolling_accuracy"])
    scored = _scored(answers)
    parts = []
    for who, group in scored.groupby("annotator", sort=True):
        rolling = group["correct"].astype(float).rolling(window, min_periods=1).mean()
        parts.append(
            pd.DataFrame(
                {
                    "annotator": who,
                    "answer": np.arange(1, len(group) + 1),
                    "created_at": group["created_at"].to_numpy() if "created_at" in group else None,
                    "rolling_accuracy": rolling.to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def calibration_figure(series: pd.DataFrame, rule: AlertRule, annotator: str | None = None) -> Figure:
    """Rolling gold accuracy by answer, one line per annotator (or one), the alert threshold dashed."""
    from qc.canvas import Figure  # loads matplotlib when a plot is first drawn, not at start

    fig = Figure(figsize=(6.4, 3.4), dpi=100)
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.16, top=0.88)
    ax = fig.add_subplot()
    shown = series if annotator is None else series[series["annotator"] == annotator]
    if shown.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "No answers on gold items yet.", ha="center", va="center", color="#555555")
        return fig
    for who, group in shown.groupby("annotator", sort=True):
        ax.plot(
            group["answer"],
            group["rolling_accuracy"],
            marker="o",
            markersize=3,
            label=str(who).replace("$", r"\$"),
        )
    ax.axhline(rule.threshold, color="#C44E52", linestyle="--", label=f"alert below {rule.threshold:.0%}")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("gold answers, in order")
    ax.set_ylabel(f"accuracy, last {rule.window}")
    ax.set_title("Gold accuracy over time", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    return fig
