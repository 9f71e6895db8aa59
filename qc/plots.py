"""The dashboard's figures, drawn with matplotlib's Agg canvas (no display, no pyplot state).

Each function takes a table of the DashboardReport and returns a Figure that gr.Plot shows as
an image. Figures are built with matplotlib.figure.Figure directly, so nothing accumulates in
pyplot's global registry between requests.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd

from qc.canvas import Figure
from qc.quality import FAST_RATIO

__all__ = [
    "agreement_by_error_type_figure",
    "annotator_heatmap_figure",
    "empty_figure",
    "error_position_figure",
    "labels_by_annotator_figure",
    "plain_label",
    "step_counts_figure",
    "steps_per_chain_figure",
    "time_per_item_figure",
]

_WIDTH, _HEIGHT = 6.4, 3.8  # inches at 100 dpi: two figures side by side fill a 1366-px window
_LABELS_IN = 1.45  # room for error-type names left of the bars
_CMAP = matplotlib.colormaps["viridis"].with_extremes(bad="#e6e6e6")
_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3")


def plain_label(value: object) -> str:
    """Labels from the data are plain text: a '$' must not start matplotlib's math mode."""
    return str(value).replace("$", r"\$")


def empty_figure(message: str) -> Figure:
    """A small figure that says why there is nothing to plot (one look for every empty plot)."""
    fig = Figure(figsize=(_WIDTH, 1.6), dpi=100)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color="#555555")
    return fig


def agreement_by_error_type_figure(by_type: pd.DataFrame) -> Figure:
    """Horizontal bars: observed agreement per error type, one bar per field, n items beside each."""
    data = by_type[by_type["n_items"] >= 2] if len(by_type) else by_type
    if data.empty:
        return empty_figure("No error type has two items with two labels yet.")
    groups = sorted(data["group"].unique())
    fields = list(dict.fromkeys(data["field"]))
    height = max(_HEIGHT, 0.5 + 0.28 * len(groups) * max(1, len(fields)) ** 0.5)
    fig = Figure(figsize=(_WIDTH, height), dpi=100)
    # Fixed margins in inches: constrained layout costs more than drawing the figure itself.
    fig.subplots_adjust(left=_LABELS_IN / _WIDTH, right=0.98, bottom=1.05 / height, top=1 - 0.35 / height)
    ax = fig.add_subplot()
    bar = 0.8 / len(fields)
    y = np.arange(len(groups))
    for k, field in enumerate(fields):
        part = data[data["field"] == field].set_index("group").reindex(groups)
        values = part["observed_agreement"].to_numpy(dtype=float)
        pos = y + (k - (len(fields) - 1) / 2) * bar
        ax.barh(
            pos,
            np.nan_to_num(values),
            height=bar,
            label=plain_label(field),
            color=_COLOURS[k % len(_COLOURS)],
        )
        for p, v, n in zip(pos, values, part["n_items"], strict=True):
            if not np.isnan(v):
                ax.text(min(v, 1.0) + 0.01, p, f"{v:.2f} (n={int(n)})", va="center", fontsize=7)
    ax.set_yticks(y, [plain_label(g) for g in groups], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.25)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("observed agreement (n = items with at least two labels)")
    ax.set_title("Agreement by error type", fontsize=11)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(fields), frameon=False)
    return fig


def annotator_heatmap_figure(pairwise: dict[str, pd.DataFrame], shared: dict[str, pd.DataFrame]) -> Figure:
    """Annotator x annotator observed agreement per field, each cell with its value and shared items."""
    fields = [f for f, m in pairwise.items() if m.shape[0] >= 2]
    if not fields:
        return empty_figure("Pairwise agreement needs two annotators on the same items.")
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.1, right=0.86, bottom=0.2, top=0.8, wspace=0.12)
    axes = fig.subplots(1, len(fields), squeeze=False)[0]
    image = None
    for ax, field in zip(axes, fields, strict=True):
        matrix = pairwise[field]
        values = matrix.to_numpy(dtype=float).copy()
        np.fill_diagonal(values, np.nan)  # self-agreement is 1 by definition: grey, not a bright square
        image = ax.imshow(np.ma.masked_invalid(values), vmin=0.0, vmax=1.0, cmap=_CMAP)
        names = [plain_label(a) for a in matrix.columns]
        size = 9 if len(names) <= 4 else 7
        ax.set_xticks(
            range(len(names)),
            names,
            rotation=45 if len(names) > 3 else 0,
            ha="right" if len(names) > 3 else "center",
            fontsize=size,
        )
        ax.set_yticks(range(len(names)), names if ax is axes[0] else [""] * len(names), fontsize=size)
        ax.set_title(plain_label(field), fontsize=10)
        if len(names) <= 6:
            for i, j in zip(*np.nonzero(~np.isnan(values)), strict=True):
                n = int(shared[field].iloc[i, j])
                ax.text(
                    j,
                    i,
                    f"{values[i, j]:.2f}\nn={n}",
                    ha="center",
                    va="center",
                    fontsize=size - 1,
                    color="white" if values[i, j] < 0.6 else "black",
                )
    if image is None:
        raise ValueError("an agreement heatmap needs at least one field")
    fig.colorbar(image, cax=fig.add_axes((0.89, 0.2, 0.02, 0.6)), label="observed agreement")
    fig.suptitle("Pairwise annotator agreement", fontsize=11)
    return fig


def time_per_item_figure(item_seconds: pd.DataFrame) -> Figure:
    """Seconds per item by annotator (box plots), with the team median and the "too fast" line."""
    data = item_seconds.dropna(subset=["seconds"]) if len(item_seconds) else item_seconds
    if data.empty:
        return empty_figure("No timed labels yet.")
    names = sorted(data["annotator"].astype(str).unique())
    groups = [data.loc[data["annotator"].astype(str) == n, "seconds"].to_numpy(dtype=float) for n in names]
    height = max(_HEIGHT, 0.6 + 0.35 * len(names))
    fig = Figure(figsize=(_WIDTH, height), dpi=100)
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.6 / height, top=1 - 0.35 / height)
    ax = fig.add_subplot()
    ax.boxplot(groups, orientation="horizontal", widths=0.6, showfliers=True)
    ax.set_yticks(range(1, len(names) + 1), [plain_label(n) for n in names], fontsize=8)
    team = float(np.median(np.concatenate(groups)))
    ax.axvline(team, color="#333333", linestyle="--", linewidth=1, label=f"team median {team:.0f} s")
    ax.axvline(
        FAST_RATIO * team,
        color="#C44E52",
        linestyle=":",
        linewidth=1.5,
        label=f"too fast below {FAST_RATIO * team:.0f} s",
    )
    if data["seconds"].max() > 20 * max(data["seconds"].min(), 1e-9) and data["seconds"].min() > 0:
        ax.set_xscale("log")
    ax.set_xlabel("seconds per item")
    ax.set_title("Time per item", fontsize=11)
    ax.legend(fontsize=8, loc="best")
    return fig


def error_position_figure(counts: pd.DataFrame) -> Figure:
    """PRMBench-V Fig. 7: one line per error type, x = 1-based error-step position, y = error steps there.

    Counts, not normalised (the caption: the area under each curve varies); integer bins, no smoothing.
    `counts`: error_type, position, error_steps.
    """
    if counts.empty:
        return empty_figure("No error steps in the current filter.")
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.1, right=0.72, bottom=0.14, top=0.9)
    ax = fig.add_subplot()
    top = int(counts["position"].max())
    for k, (kind, part) in enumerate(counts.groupby("error_type", sort=True)):
        series = part.set_index("position")["error_steps"].reindex(range(1, top + 1), fill_value=0)
        colour = matplotlib.colormaps["tab10"](k % 10)
        ax.plot(
            series.index, series.to_numpy(), marker="o", markersize=3, label=plain_label(kind), color=colour
        )
    ax.set_xlabel("error step position (1-based, modified chain)")
    ax.set_ylabel("error steps")
    ax.set_xticks(range(1, top + 1, max(1, top // 12)))
    ax.set_title("Error positions by error type (PRMBench-V Fig. 7)", fontsize=11)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def step_counts_figure(rows: pd.DataFrame) -> Figure:
    """PRMBench-V Fig. 8: steps per chain by error type, original beside modified, as box plots with
    the means marked (the paper gives no plot type; docs/PROTOCOLS.md A7's default). `rows`: error_type,
    role, n_steps (one row per item and chain)."""
    if rows.empty:
        return empty_figure("No chains in the current filter.")
    groups = sorted(rows["error_type"].unique())
    roles = [r for r in ("original", "modified", "solution") if r in set(rows["role"])]
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.32, top=0.9)
    ax = fig.add_subplot()
    width = 0.8 / len(roles)
    x = np.arange(len(groups))
    for k, role in enumerate(roles):
        data = [
            rows[(rows["error_type"] == g) & (rows["role"] == role)]["n_steps"].to_numpy() for g in groups
        ]
        pos = x + (k - (len(roles) - 1) / 2) * width
        kept = [(p, d) for p, d in zip(pos, data, strict=True) if len(d)]
        if not kept:
            continue
        colour = _COLOURS[k % len(_COLOURS)]
        parts = ax.boxplot(
            [d for _, d in kept],
            positions=[p for p, _ in kept],
            widths=width * 0.9,
            patch_artist=True,
            showmeans=True,
            manage_ticks=False,
        )
        for box in parts["boxes"]:
            box.set_facecolor(colour)
            box.set_alpha(0.6)
        ax.plot([], [], color=colour, linewidth=6, alpha=0.6, label=role)
    ax.set_xticks(x, [plain_label(g) for g in groups], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("steps per chain")
    ax.set_title("Step counts by error type (PRMBench-V Fig. 8)", fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    return fig


def steps_per_chain_figure(rows: pd.DataFrame) -> Figure:
    """How long the chains are: a histogram of steps per chain, one series per chain (original,
    modified, solution). `rows`: role, n_steps (one row per item and chain)."""
    if rows.empty:
        return empty_figure("No chains in the current filter.")
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14, top=0.9)
    ax = fig.add_subplot()
    top = int(rows["n_steps"].max())
    bins = [float(b) for b in np.arange(0.5, top + 1.5, max(1, int(np.ceil(top / 40))))]
    for k, role in enumerate(sorted(set(rows["role"]))):
        counts = rows.loc[rows["role"] == role, "n_steps"].to_numpy(dtype=float)
        colour = _COLOURS[k % len(_COLOURS)]
        ax.hist(counts, bins=bins, alpha=0.55, color=colour, label=f"{plain_label(role)} (n={len(counts)})")
    ax.set_xlabel("steps per chain")
    ax.set_ylabel("chains")
    ax.set_title("Steps per chain", fontsize=11)
    ax.legend(fontsize=8, frameon=False)
    return fig


def labels_by_annotator_figure(rows: pd.DataFrame) -> Figure:
    """Labels each annotator stored on the filter's items (corrections included) and how many items
    that covers. `rows`: annotator, item, labels (one row per annotator and item)."""
    if rows.empty:
        return empty_figure("No labels on the items of the current filter.")
    per = rows.groupby(rows["annotator"].astype(str)).agg(labels=("labels", "sum"), items=("item", "nunique"))
    per = per.sort_values(["labels", "items"], ascending=True)
    height = max(_HEIGHT, 0.6 + 0.3 * len(per))
    fig = Figure(figsize=(_WIDTH, height), dpi=100)
    fig.subplots_adjust(left=0.2, right=0.97, bottom=0.6 / height, top=1 - 0.35 / height)
    ax = fig.add_subplot()
    y = np.arange(len(per))
    ax.barh(y + 0.2, per["labels"], height=0.4, color=_COLOURS[0], label="labels")
    ax.barh(y - 0.2, per["items"], height=0.4, color=_COLOURS[1], label="items")
    ax.set_yticks(y, [plain_label(n) for n in per.index], fontsize=8)
    ax.set_xlabel("count")
    ax.set_title("Labels by annotator", fontsize=11)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    return fig
