"""Planning an agreement study: qc.planning's answer for what a user typed, errors said plainly.

Planning reads no labels, so every logged-in user may plan; the QC dashboard shows it to
reviewers and the command line to whoever runs it.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from qc.planning import PRESETS, STATISTICS, Plan, Preset, plan_preset, plan_study
from qc.planning_plot import plan_figure
from services.errors import InvalidInput

__all__ = ["LEVELS", "PRESETS", "STATISTICS", "Plan", "Preset", "figure", "parse_shares", "plan", "preset"]

LEVELS = ("nominal", "ordinal", "interval")
MAX_SIMS = 5000  # a plan answers in seconds; more simulated studies buy little precision


def parse_shares(text: str) -> tuple[float, ...]:
    """'0.9,0.1' or '90 10' -> shares (normalised later); a message naming the bad part otherwise."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError as exc:
        raise InvalidInput(
            f"Category shares: {text!r} is not a list of numbers; write them like 0.9,0.1."
        ) from exc
    if len(values) < 2:
        raise InvalidInput("Category shares: give at least two, like 0.9,0.1 (one per label).")
    return values


def plan(
    *,
    statistic: str,
    expected: float,
    half_width: float,
    shares: str | tuple[float, ...] = (0.5, 0.5),
    raters: int = 2,
    confidence: float = 0.95,
    level: str = "nominal",
    items: int | None = None,
    n_sims: int = 400,
    seed: int = 0,
) -> Plan:
    """The items a study needs for ``half_width`` and the interval at that size (or at ``items``)."""
    if level not in LEVELS:
        raise InvalidInput(f"Level must be one of {', '.join(LEVELS)}, not {level!r}.")
    if not 20 <= n_sims <= MAX_SIMS:
        raise InvalidInput(f"Simulated studies must be between 20 and {MAX_SIMS}, not {n_sims}.")
    values = parse_shares(shares) if isinstance(shares, str) else shares
    try:
        return plan_study(
            statistic, expected, half_width, values, raters, confidence, level, items, n_sims, seed
        )
    except ValueError as exc:
        raise InvalidInput(f"Cannot plan this study: {exc}.") from exc


def preset(key: str, n_sims: int = 400, seed: int = 0) -> Plan:
    """A seed paper's study opened in the planner."""
    try:
        return plan_preset(key, n_sims=n_sims, seed=seed)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


def figure(result: Plan) -> Figure:
    return plan_figure(result)
