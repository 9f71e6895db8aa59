"""Planning an agreement study: qc.planning's answer for what a user typed, errors said plainly.

Planning reads no labels, so every logged-in user may plan; the QC dashboard shows it to
reviewers and the command line to whoever runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qc.planning import PRESETS, STATISTICS, Plan, Preset, plan_preset, plan_study
from qc.quality import label_fields
from qc.sequential import SequentialResult, SequentialRule, sequential_agreement
from services import gold
from services import studies as study_service
from services.access import Action, Actor, require
from services.errors import InvalidInput, NotFound
from store import studies
from store.datasets import get_dataset

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from store import Store

__all__ = [
    "LEVELS",
    "PRESETS",
    "STATISTICS",
    "Plan",
    "Preset",
    "SequentialResult",
    "figure",
    "parse_shares",
    "plan",
    "preset",
    "sequential_study",
]

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
    """The items a study needs for ``half_width`` and the interval at that size (or at ``items``); a
    simulated size is checked on draws of its own and comes with the half-width re-measured there
    (``Plan.needed_half_width`` and ``needed_sim_error``, on the summary's second line)."""
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
    from qc.planning_plot import plan_figure  # matplotlib loads when a plot is first drawn

    return plan_figure(result)


def sequential_study(
    store: Store,
    user: Actor,
    study: str,
    *,
    target: float,
    batch: int,
    cap: int | None = None,
    field: str | None = None,
    adjust: str = "bonferroni",
    confidence: float = 0.95,
) -> tuple[str, SequentialResult]:
    """Apply a stopping rule to a study's finished items (those with all their raters' labels, in
    draw order): stopped by the target, by the cap (default: the study's size), or running. Reads the
    study's own labels (services.studies.outcomes). Returns the field judged and the result."""
    require(user, Action.SEE_LABELS)
    found = studies.get_study(store, study)
    if found is None:
        raise NotFound(f"There is no study named {study!r}.")
    try:
        rule = SequentialRule(target, batch, cap or found.n_items, confidence, adjust)
    except ValueError as exc:
        raise InvalidInput(f"Cannot apply this stopping rule: {exc}.") from exc
    log = studies.study_annotations(store, found)
    if not found.own_labels:  # drawn before studies had labels of their own: gold answers stay out
        dataset = get_dataset(store, found.dataset)
        if dataset is None:
            raise NotFound(f"The study's dataset {found.dataset!r} is gone.")
        log = gold.for_agreement(store, dataset, log)
    fields = list(label_fields(found.task, log)) if len(log) else []
    chosen = field or (fields[0] if fields else None)
    if chosen is None or chosen not in fields:
        raise InvalidInput(
            f"Field {field!r} has no labels in this study; fields: {', '.join(fields) or 'none yet'}."
        )
    return chosen, sequential_agreement(study_service.outcomes(store, found, chosen, log), rule)
