"""The Scores tab's figures: models side by side, and reliability diagrams of their confidences.

Drawn on matplotlib's Agg canvas with Figure directly (no pyplot state), as qc.plots does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from qc.canvas import Figure
from qc.confidence import reliability_bins
from qc.model_scores import step_confidences
from qc.plots import empty_figure, plain_label  # one look for every empty plot and data label

__all__ = ["reliability_figure", "scores_figure"]

_WIDTH, _HEIGHT = 6.4, 3.6
_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3")
_BARS = (
    ("error_acc", "erroneous acc."),
    ("correct_acc", "correct acc."),
    ("f1", "F1"),
    ("strict_accuracy", "PRMBench-V acc."),
)


def scores_figure(table: pd.DataFrame) -> Figure:
    """Grouped bars per model: its accuracies and F1 in percent (metrics it has no data for left out)."""
    if table.empty:
        return empty_figure("No predictions on this dataset yet.")
    bars = [(c, label) for c, label in _BARS if c in table and table[c].notna().any()]
    if not bars:
        return empty_figure("The predictions have no figure to plot.")
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.22, top=0.9)
    ax = fig.add_subplot()
    x = np.arange(len(table))
    width = 0.8 / len(bars)
    for k, (column, label) in enumerate(bars):
        values = 100 * table[column].astype(float).fillna(0).to_numpy()
        ax.bar(
            x + (k - (len(bars) - 1) / 2) * width,
            values,
            width,
            label=label,
            color=_COLOURS[k % len(_COLOURS)],
        )
    ax.set_xticks(x, [plain_label(m) for m in table["model"]], rotation=20, ha="right", fontsize=9)
    ax.set_ylim(0, 100)
    ax.set_ylabel("percent")
    ax.legend(fontsize=8, ncols=len(bars), loc="upper center", bbox_to_anchor=(0.5, 1.13), frameon=False)
    return fig


def reliability_figure(outcomes: pd.DataFrame, n_bins: int = 10) -> Figure:
    """Reliability diagram per model with step confidences (ConfProBench): accuracy of the judge's
    label against its confidence c = max(p, 1 - p) per right-closed bin, beside the diagonal."""
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.12, right=0.98, bottom=0.15, top=0.92)
    ax = fig.add_subplot()
    drawn = 0
    for k, (model, mine) in enumerate(outcomes.groupby("model", sort=True) if len(outcomes) else []):
        p, gold, _ = step_confidences(mine)
        if not p:
            continue
        bins = reliability_bins(p, gold, n_bins)
        filled = bins[bins["n"] > 0]
        ax.plot(
            filled["confidence"],
            filled["accuracy"],
            marker="o",
            color=_COLOURS[k % len(_COLOURS)],
            label=plain_label(model),
        )
        drawn += 1
    if not drawn:
        return empty_figure("No model here has step confidences (ConfProBench's reliability diagram).")
    ax.plot([0.5, 1.0], [0.5, 1.0], linestyle="--", color="#888888", label="calibrated")
    ax.set_xlim(0.45, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("confidence c = max(p, 1 - p)")
    ax.set_ylabel("accuracy of the judge's label")
    ax.legend(fontsize=8)
    return fig
