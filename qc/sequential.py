"""Sequential agreement studies: stop when the interval is narrow enough, with an interval that stays
valid under that stopping.

Items are looked at in batches (in the order they were drawn); after each batch the observed
agreement's Wilson interval is recomputed and the study stops at the first look whose half-width is
at most the target, or at the cap. Looking repeatedly and stopping on what one sees makes a plain
95% interval cover less than 95%. With ``adjust="bonferroni"`` every look uses the confidence
1 - (1 - c) / L, L = the most looks the rule can take (ceil(cap / batch)): by the union bound the
interval at whatever look the study stops covers the true agreement with probability at least c
(conservative: wider than needed). With ``adjust="none"`` the report says plainly that its
interval is not adjusted for stopping.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qc.planning import wilson_interval

__all__ = [
    "ADJUSTMENTS",
    "SequentialResult",
    "SequentialRule",
    "coverage_by_simulation",
    "sequential_agreement",
]

ADJUSTMENTS = ("bonferroni", "none")


@dataclass(frozen=True)
class SequentialRule:
    target: float  # the half-width at which the study stops
    batch: int  # items per look
    cap: int  # the most items the study takes
    confidence: float = 0.95
    adjust: str = "bonferroni"

    def __post_init__(self) -> None:
        if not 0.0 < self.target < 0.5:
            raise ValueError(f"the target half-width must be between 0 and 0.5, got {self.target}")
        if not 1 <= self.batch <= self.cap:
            raise ValueError(f"a batch must hold 1 to cap ({self.cap}) items, got {self.batch}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be between 0 and 1, got {self.confidence}")
        if self.adjust not in ADJUSTMENTS:
            raise ValueError(f"adjust must be one of {', '.join(ADJUSTMENTS)}, got {self.adjust!r}")

    @property
    def looks(self) -> int:
        return math.ceil(self.cap / self.batch)

    @property
    def look_confidence(self) -> float:
        """The confidence each look's interval uses."""
        return 1.0 - (1.0 - self.confidence) / self.looks if self.adjust == "bonferroni" else self.confidence


@dataclass(frozen=True)
class SequentialResult:
    n_items: int
    agreed: int
    estimate: float
    lower: float
    upper: float
    half_width: float
    stopped_by: str  # "target" | "cap" | "running" (neither yet: draw the next batch)
    looks: int
    rule: SequentialRule

    def note(self) -> str:
        why = {
            "target": f"stopped by rule: the interval reached the target half-width {self.rule.target:g}",
            "cap": f"stopped by rule: the cap of {self.rule.cap} items was reached before the target",
            "running": f"running: the interval is not yet {self.rule.target:g} wide; the next batch is due",
        }[self.stopped_by]
        if self.rule.adjust == "bonferroni":
            valid = (
                f"{self.rule.confidence:.0%} interval valid under this stopping rule (Wilson at "
                f"{self.rule.look_confidence:.4f} at each of up to {self.rule.looks} looks, Bonferroni)"
            )
        else:
            valid = (
                f"{self.rule.confidence:.0%} Wilson interval NOT adjusted for stopping: after looking "
                "repeatedly it covers the true agreement less often than stated"
            )
        return (
            f"{why} after {self.looks} look(s) and {self.n_items} items: observed agreement "
            f"{self.estimate:.3f}, {valid}: {self.lower:.3f} to {self.upper:.3f}."
        )


def sequential_agreement(agreed: Sequence[bool], rule: SequentialRule) -> SequentialResult:
    """Walk the items (in draw order, True where the raters agreed) batch by batch under ``rule``."""
    outcomes = np.asarray(list(agreed), dtype=bool)[: rule.cap]
    n = 0
    looks = 0
    while True:
        if n + rule.batch > len(outcomes) and len(outcomes) < rule.cap:
            # the next look needs more items than are labelled yet
            stopped = "running"
            break
        n = min(n + rule.batch, rule.cap)
        looks += 1
        k = int(outcomes[:n].sum())
        lower, upper = wilson_interval(k / n, n, rule.look_confidence)
        if (upper - lower) / 2 <= rule.target:
            stopped = "target"
            break
        if n >= rule.cap:
            stopped = "cap"
            break
    if n == 0:
        return SequentialResult(0, 0, float("nan"), 0.0, 1.0, 0.5, stopped, 0, rule)
    k = int(outcomes[:n].sum())
    lower, upper = wilson_interval(k / n, n, rule.look_confidence)
    return SequentialResult(n, k, k / n, lower, upper, (upper - lower) / 2, stopped, looks, rule)


@dataclass(frozen=True)
class Coverage:
    runs: int
    covered: float  # share of runs whose final interval held the true agreement
    mean_items: float
    stopped_by_target: float  # share of runs that stopped at the target (not the cap)


def coverage_by_simulation(
    true_agreement: float, rule: SequentialRule, runs: int = 2000, seed: int = 0
) -> Coverage:
    """Simulated teams agreeing on each item with probability ``true_agreement``: how often the
    sequential study's interval covers it, and how many items it took."""
    rng = np.random.default_rng(seed)
    draws = rng.random((runs, rule.cap)) < true_agreement
    results = [sequential_agreement(row, rule) for row in draws]
    return Coverage(
        runs,
        float(np.mean([r.lower <= true_agreement <= r.upper for r in results])),
        float(np.mean([r.n_items for r in results])),
        float(np.mean([r.stopped_by == "target" for r in results])),
    )
