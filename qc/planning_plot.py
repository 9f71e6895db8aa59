"""The planner's figure: interval half-width against items (and against raters, 2 to 5)."""

from __future__ import annotations

from matplotlib.ticker import NullFormatter, ScalarFormatter

from qc.canvas import Figure
from qc.planning import Plan

__all__ = ["plan_figure"]

_WIDTH, _HEIGHT = 9.6, 3.6


def plan_figure(plan: Plan) -> Figure:
    """Left: half-width by items, the target as a line and the planned size marked; right: by raters."""
    fig = Figure(figsize=(_WIDTH, _HEIGHT), dpi=100)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    series = plan.by_items.sort_values("items")
    left.errorbar(
        series["items"], series["half_width"], yerr=series["sim_error"], marker="o", color="#4C72B0"
    )
    left.axhline(plan.target, color="#C44E52", linestyle="--", label=f"target {plan.target:g}")
    needed = f"{plan.items_needed} items"
    if plan.method == "simulation":  # the half-width re-measured at the size found (its size check)
        needed += f" (re-measured {plan.needed_half_width:.4f})"
    left.axvline(plan.items_needed, color="#55A868", linestyle=":", label=needed)
    left.set_xscale("log")
    left.set_xticks([int(n) for n in series["items"]])
    left.xaxis.set_major_formatter(ScalarFormatter())
    left.xaxis.set_minor_formatter(NullFormatter())
    left.tick_params(axis="x", labelsize=7)
    left.set_xlabel("items")
    left.set_ylabel("interval half-width")
    how = "Wilson, exact" if plan.method == "wilson" else f"simulation, {plan.n_sims} studies"
    left.set_title(f"{plan.statistic.replace('_', ' ')}: half-width by items ({how})", fontsize=9)
    left.legend(fontsize=8)
    raters = plan.by_raters
    right.errorbar(
        raters["raters"], raters["half_width"], yerr=raters["sim_error"], marker="s", color="#DD8452"
    )
    right.set_xticks(list(raters["raters"]))
    right.set_xlabel("raters")
    right.set_title(f"half-width by raters at {plan.items} items (simulation)", fontsize=9)
    return fig
