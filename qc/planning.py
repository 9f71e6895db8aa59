"""Planning an agreement study: how many items (and raters) a wanted interval width needs.

Observed agreement is planned exactly with the Wilson score interval (Wilson 1927, JASA 22:209-212):
the smallest n whose interval around the expected share has (upper - lower) / 2 <= the target.
The coefficients (Cohen's kappa, Fleiss' kappa, Krippendorff's alpha) have no closed form worth
trusting at small n, so they are planned by seeded simulation: ratings drawn from the expected
category shares and agreement, the coefficient's spread over many simulated studies, and the
simulation error of that spread by the project's one bootstrap (qc.bootstrap).

The simulation model (one per item: a true category drawn from the shares; each rater reports it
with probability r, else a category drawn from the shares again) keeps every rater's marginals at
the shares, so chance agreement is s = sum(shares^2), pairwise agreement is s + r^2 (1 - s) and
every kappa-type coefficient is r^2: an expected coefficient k means agreement s + k (1 - s).

A simulated size keeps its promise: the size fitted through a few simulated sizes is simulated
again on draws of its own (another random stream) and stepped up until the half-width measured
there, plus CHECK_Z times its simulation error, is within the target; the plan reports that size with
the half-width re-measured at it (issue 30: a fit alone left 21 of 36 plans above their target).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist
from typing import Literal, cast

import krippendorff
import numpy as np
import pandas as pd

from qc.bootstrap import resample_indices
from qc.bootstrap import wilson_interval as _wilson

__all__ = [
    "CHECK_Z",
    "PRESETS",
    "STATISTICS",
    "CheckedSize",
    "ParadoxBound",
    "Plan",
    "SimulatedWidth",
    "agreement_for",
    "items_for_agreement",
    "items_for_coefficient",
    "kappa_paradox_bound",
    "plan_preset",
    "plan_study",
    "simulate_codes",
    "simulated_width",
    "wilson_half_width",
    "wilson_interval",
]

STATISTICS = ("observed_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha")
MAX_ITEMS = 1_000_000  # beyond this no annotation study is planned; the search stops with an error
SIM_ERROR_BOOT = 200  # bootstrap replicates over the simulated studies for the simulation error
# A size is accepted when half-width + CHECK_Z * simulation error <= target: one-sided 95%, so the
# half-width there exceeds the target by chance in about 1 plan in 20 at worst, and then by little.
CHECK_Z = NormalDist().inv_cdf(0.95)
MAX_CHECKS = 20
# The check simulates four times the plan's studies (at most CHECK_SIMS_CAP, never fewer than the
# plan's): half the simulation error, so the margin for it costs about half as many items.
CHECK_SIMS_FACTOR = 4
CHECK_SIMS_CAP = 2000


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _check_share(share: float, what: str = "expected agreement") -> float:
    if not 0.0 <= share <= 1.0 or math.isnan(share):
        raise ValueError(f"{what} must be a share between 0 and 1, got {share}")
    return float(share)


def wilson_interval(share: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a share observed on n trials: Wilson 1927, JASA 22:209-212."""
    share = _check_share(share, "share")
    if n < 1:
        raise ValueError(f"n must be at least 1 item, got {n}")
    _z(confidence)  # checks the level
    return _wilson(share, n, confidence)


def wilson_half_width(share: float, n: int, confidence: float = 0.95) -> float:
    """(upper - lower) / 2 of the Wilson interval (before clipping to [0, 1], which it never needs)."""
    z = _z(confidence)
    share = _check_share(share, "share")
    return z * math.sqrt(share * (1 - share) * n + z * z / 4) / (n + z * z)


def items_for_agreement(expected: float, half_width: float, confidence: float = 0.95) -> int:
    """The smallest n whose Wilson interval around ``expected`` has (upper - lower) / 2 <= half_width.

    The half-width z*sqrt(p(1-p)n + z^2/4)/(n + z^2) falls strictly with n (its derivative has the
    sign of p(1-p)(z^2 - n) - z^2/2 < 0), so a bisection finds the smallest n. 0.94, 0.05 -> 95.
    """
    expected = _check_share(expected)
    if not 0.0 < half_width < 0.5:
        raise ValueError(f"the interval half-width must be between 0 and 0.5, got {half_width}")
    _z(confidence)
    if wilson_half_width(expected, 1, confidence) <= half_width:
        return 1
    high = 2
    while wilson_half_width(expected, high, confidence) > half_width:
        high *= 2
        if high > MAX_ITEMS:
            raise ValueError(f"more than {MAX_ITEMS} items would be needed for a half-width of {half_width}")
    low = high // 2  # too few; high is enough
    while high - low > 1:
        mid = (low + high) // 2
        if wilson_half_width(expected, mid, confidence) <= half_width:
            high = mid
        else:
            low = mid
    return high


def _shares(shares: Sequence[float]) -> np.ndarray:
    values = np.asarray(list(shares), dtype=float)
    if values.ndim != 1 or len(values) < 2:
        raise ValueError("give at least two category shares, e.g. 0.9,0.1")
    if (values < 0).any() or not np.isfinite(values).all() or values.sum() <= 0:
        raise ValueError(f"category shares must be non-negative numbers, got {list(shares)}")
    out: np.ndarray = values / values.sum()
    return out


def agreement_for(statistic: str, expected: float, shares: Sequence[float]) -> float:
    """Pairwise agreement the simulation model needs for an expected value of ``statistic``."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")
    s = float((_shares(shares) ** 2).sum())
    if statistic == "observed_agreement":
        agreement = _check_share(expected)
    else:
        if not -1.0 <= expected <= 1.0:
            raise ValueError(f"an expected {statistic} must lie between -1 and 1, got {expected}")
        agreement = s + expected * (1.0 - s)
    if agreement < s - 1e-12:
        raise ValueError(
            f"expected agreement {agreement:.3f} is below chance agreement {s:.3f} at these shares; "
            "the simulation needs raters who agree at least by chance"
        )
    return float(agreement)


def simulate_codes(
    n_studies: int,
    n_items: int,
    n_raters: int,
    shares: Sequence[float],
    agreement: float,
    seed: int = 0,
    stream: int = 0,
) -> np.ndarray:
    """Category codes, shape (studies, items, raters), from the model in the module docstring.
    ``stream`` > 0 draws from another random stream of the same seed (the size check's own draws)."""
    p = _shares(shares)
    s = float((p**2).sum())
    reliability = math.sqrt(max(0.0, (agreement - s) / (1.0 - s))) if s < 1.0 else 1.0
    rng = np.random.default_rng([seed, n_items, n_raters, stream] if stream else [seed, n_items, n_raters])
    truth = rng.choice(len(p), size=(n_studies, n_items, 1), p=p)
    noise = rng.choice(len(p), size=(n_studies, n_items, n_raters), p=p)
    keep = rng.random((n_studies, n_items, n_raters)) < reliability
    out: np.ndarray = np.where(keep, truth, noise)
    return out


def _counts(codes: np.ndarray, k: int) -> np.ndarray:
    """(studies, items, categories): how many raters gave each category."""
    one_hot = codes[..., None] == np.arange(k)
    out: np.ndarray = one_hot.sum(axis=2).astype(float)
    return out


def _observed(counts: np.ndarray) -> np.ndarray:
    m = counts.sum(axis=2)
    out: np.ndarray = ((counts * (counts - 1)).sum(axis=2) / (m * (m - 1))).mean(axis=1)
    return out


def _fleiss(counts: np.ndarray) -> np.ndarray:
    """Fleiss' kappa per simulated study (as qc.agreement.fleiss_kappa_from_counts, all items rated by all)."""
    p_bar = _observed(counts)
    p = counts.sum(axis=1) / counts.sum(axis=(1, 2))[:, None]
    pe = (p**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(pe < 1.0 - 1e-12, (p_bar - pe) / (1.0 - pe), np.nan)
    return out


def _cohen(codes: np.ndarray, k: int) -> np.ndarray:
    """Cohen's kappa per simulated study; with more than two raters the mean over pairs (Light 1971)."""
    per_pair = []
    for i, j in combinations(range(codes.shape[2]), 2):
        x, y = codes[:, :, i], codes[:, :, j]
        studies, n = x.shape
        # each study's k x k table of the pair's labels, as shares (one bincount for all studies)
        cells = np.bincount(
            (np.arange(studies)[:, None] * (k * k) + x * k + y).ravel(), minlength=studies * k * k
        ).reshape(studies, k, k) / float(n)
        po = np.trace(cells, axis1=1, axis2=2)
        px, py = cells.sum(axis=2), cells.sum(axis=1)
        pe = (px * py).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_pair.append(np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan))
    out: np.ndarray = np.nanmean(np.vstack(per_pair), axis=0) if per_pair else np.full(len(codes), np.nan)
    return out


def _alpha(counts: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha per simulated study via the ``krippendorff`` package."""
    domain = np.arange(counts.shape[2], dtype=float)
    values = []
    for study in counts:
        if (study.sum(axis=0) > 0).sum() < 2:
            values.append(np.nan)
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            values.append(
                krippendorff.alpha(
                    value_counts=study,
                    value_domain=domain,
                    level_of_measurement=cast(Literal["nominal", "ordinal", "interval", "ratio"], level),
                )
            )
    return np.asarray(values, dtype=float)


def _statistic(statistic: str, codes: np.ndarray, k: int, level: str) -> np.ndarray:
    if statistic == "cohen_kappa":
        return _cohen(codes, k)
    counts = _counts(codes, k)
    if statistic == "fleiss_kappa":
        return _fleiss(counts)
    if statistic == "krippendorff_alpha":
        return _alpha(counts, level)
    return _observed(counts)


@dataclass(frozen=True)
class SimulatedWidth:
    """A coefficient's spread over simulated studies of one size."""

    n_items: int
    n_raters: int
    centre: float  # the median simulated value
    lower: float  # the (1 - confidence) / 2 quantile over the simulated studies
    upper: float
    half_width: float  # (upper - lower) / 2
    sim_error: float  # bootstrap standard error of half_width over the simulated studies
    n_sims: int
    seed: int


def _half_widths(values: np.ndarray, confidence: float) -> np.ndarray:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail], axis=-1)  # finite values only
    out: np.ndarray = (high - low) / 2.0
    return out


def simulated_width(
    statistic: str,
    n_items: int,
    n_raters: int,
    shares: Sequence[float],
    agreement: float,
    confidence: float = 0.95,
    level: str = "nominal",
    n_sims: int = 400,
    seed: int = 0,
    stream: int = 0,
) -> SimulatedWidth:
    """Simulate ``n_sims`` studies of n_items x n_raters and measure the statistic's interval there."""
    if n_items < 2 or n_raters < 2:
        raise ValueError("a study needs at least 2 items and 2 raters")
    if n_sims < 20:
        raise ValueError(f"at least 20 simulated studies are needed, got {n_sims}")
    _z(confidence)
    k = len(_shares(shares))
    codes = simulate_codes(n_sims, n_items, n_raters, shares, agreement, seed, stream)
    values = _statistic(statistic, codes, k, level)
    finite = values[np.isfinite(values)]
    if finite.size < 20:
        raise ValueError("the statistic is undefined in most simulated studies (one category everywhere)")
    tail = (1.0 - confidence) / 2.0
    lower, centre, upper = (float(v) for v in np.quantile(finite, [tail, 0.5, 1.0 - tail]))
    boot = np.concatenate(
        [
            _half_widths(finite[rows], confidence)
            for rows in resample_indices(finite.size, SIM_ERROR_BOOT, seed)
        ]
    )
    return SimulatedWidth(
        n_items, n_raters, centre, lower, upper, (upper - lower) / 2.0, float(boot.std(ddof=1)), n_sims, seed
    )


@dataclass(frozen=True)
class ParadoxBound:
    """How low kappa can be at an observed agreement: the kappa paradox, before the study."""

    observed: float
    chance_at_shares: float  # sum of squared shares: chance agreement when both raters keep them
    lowest_kappa: float | None  # at the expected shares (None: no table has them and this agreement)
    lowest_kappa_any_shares: float  # every agreement on one label, disagreements split evenly
    pabak: float

    def note(self) -> str:
        at = "impossible at these shares" if self.lowest_kappa is None else f"{self.lowest_kappa:.3f}"
        return (
            f"At observed agreement {self.observed:.3f}, kappa can be as low as {at} at the expected "
            f"shares and {self.lowest_kappa_any_shares:.3f} at the most skewed shares (PABAK "
            f"{self.pabak:.3f}): decide before the study which figure you will report."
        )


def kappa_paradox_bound(shares: Sequence[float], observed: float) -> ParadoxBound:
    """The lowest Cohen's kappa at ``observed`` agreement, at the given shares and over any shares.

    With the pooled shares fixed, p_e = sum pA*pB <= sum ((pA+pB)/2)^2 = s, so kappa is lowest,
    (po - s) / (1 - s), when both raters keep the shares. Over any shares it is lowest with every
    agreement on one label and the disagreements split evenly (PRMBench-V at 0.94: -0.031).
    """
    p = _shares(shares)
    po = _check_share(observed, "observed agreement")
    k = len(p)
    s = float((p**2).sum())
    room = (1.0 - po) / 2.0  # an off-diagonal table needs no category's disagreement above half
    feasible = float(np.minimum(p, room).sum()) >= (1.0 - po) - 1e-12
    lowest = (po - s) / (1.0 - s) if feasible and s < 1.0 else None
    q = (1.0 + po) / 2.0
    pe_any = q * q + (1.0 - q) ** 2
    any_shares = (po - pe_any) / (1.0 - pe_any) if pe_any < 1.0 else float("nan")
    return ParadoxBound(po, s, lowest, any_shares, (k * po - 1.0) / (k - 1.0))


@dataclass(frozen=True)
class Plan:
    """What a study of this design needs and what interval it will have."""

    statistic: str
    expected: float
    shares: tuple[float, ...]
    raters: int
    confidence: float
    target: float  # the wanted half-width
    items_needed: int  # the smallest size reaching the target
    items: int  # the size the interval below is for (items_needed unless a size was given)
    lower: float
    upper: float
    half_width: float
    method: str  # "wilson" (exact) | "simulation"
    sim_error: float  # 0 for Wilson
    n_sims: int
    seed: int
    by_items: pd.DataFrame  # items, half_width, sim_error
    by_raters: pd.DataFrame  # raters, half_width, sim_error (at `items`, by simulation)
    paradox: ParadoxBound
    # at items_needed: the half-width re-measured there (simulation) or exact (Wilson), its error
    needed_half_width: float = math.nan
    needed_sim_error: float = 0.0
    # the simulation's size check: (items, half-width, simulation error) at each size tried, the
    # fitted size first; empty for Wilson
    checks: tuple[tuple[int, float, float], ...] = ()
    check_sims: int = 0  # simulated studies per size in the check (0 for Wilson)

    def summary(self) -> str:
        lines = [
            f"statistic: {self.statistic}  expected: {self.expected:g}  shares: "
            + ", ".join(f"{v:.3g}" for v in self.shares)
            + f"  raters: {self.raters}  confidence: {self.confidence:g}",
            f"items needed for a half-width of {self.target:g}: {self.items_needed}"
            + (
                " (Wilson interval, exact)"
                if self.method == "wilson"
                else f" (by simulation), re-measured there: half-width {self.needed_half_width:.4f} "
                f"+/- {self.needed_sim_error:.4f}"
            ),
            f"at {self.items} items: {self.confidence:.0%} interval {self.lower:.3f} to {self.upper:.3f} "
            f"(half-width {self.half_width:.4f})",
        ]
        if self.method == "simulation":
            lines.append(
                f"simulation: {self.n_sims} studies per size ({self.check_sims} in the size check), "
                f"seed {self.seed}; half-width known to "
                f"+/- {self.sim_error:.4f} (bootstrap standard error), so the size is approximate"
            )
            tried = ", then ".join(f"{n} items: {w:.4f} +/- {e:.4f}" for n, w, e in self.checks)
            lines.append(
                f"size check: a size is kept when its re-simulated half-width plus {CHECK_Z:.3f} "
                f"simulation errors is within {self.target:g} ({tried})"
            )
            lines.append(
                "the interval is the coefficient's spread over the simulated studies (its real precision); "
                "the dashboard's percentile bootstrap interval on one such study is narrower on few items "
                "(see its stated coverage)"
            )
        else:
            lines.append(
                "Wilson treats each item as one agreed / not agreed trial; the raters series is by "
                f"simulation ({self.n_sims} studies, seed {self.seed})"
            )
        lines.append(self.paradox.note())
        return "\n".join(lines)


def _search_items(
    statistic: str,
    target: float,
    raters: int,
    shares: Sequence[float],
    agreement: float,
    confidence: float,
    level: str,
    n_sims: int,
    seed: int,
) -> int:
    """A pilot at 100 items, rescaled by 1/sqrt(n), then a log-log line through three sizes around it."""

    def width(n: int) -> float:
        return simulated_width(
            statistic, n, raters, shares, agreement, confidence, level, n_sims, seed
        ).half_width

    pilot = width(100)
    guess = max(8, math.ceil(100 * (pilot / target) ** 2)) if pilot > 0 else 100
    if guess > MAX_ITEMS:
        raise ValueError(f"more than {MAX_ITEMS} items would be needed for a half-width of {target}")
    sizes = np.array([max(4, round(guess * f)) for f in (0.7, 1.0, 1.4)], dtype=float)
    widths = np.array([width(int(n)) for n in sizes])
    if (widths <= 0).any():
        return int(sizes[0])
    slope, intercept = np.polyfit(np.log(sizes), np.log(widths), 1)
    if slope >= 0:  # noise swamped the trend: keep the 1/sqrt(n) rescaling
        return guess
    n = math.ceil(math.exp((math.log(target) - intercept) / slope))
    if n > MAX_ITEMS:
        raise ValueError(f"more than {MAX_ITEMS} items would be needed for a half-width of {target}")
    return max(2, n)


@dataclass(frozen=True)
class CheckedSize:
    """A simulated size that keeps its promise: ``items`` and the half-width re-measured there."""

    fitted: int  # the size the log-log fit gave
    items: int  # the smallest size tried whose half-width + CHECK_Z * error is within the target
    width: SimulatedWidth  # measured at ``items`` on the check's own draws
    checks: tuple[tuple[int, float, float], ...]  # (items, half-width, simulation error) per size tried
    sims: int  # simulated studies per size in the check


def items_for_coefficient(
    statistic: str,
    target: float,
    raters: int,
    shares: Sequence[float],
    agreement: float,
    confidence: float = 0.95,
    level: str = "nominal",
    n_sims: int = 400,
    seed: int = 0,
) -> CheckedSize:
    """The items a simulated coefficient needs for ``target``: the fitted size, checked on draws of
    its own (stream 1, CHECK_SIMS_FACTOR times the studies) and stepped up by the 1/sqrt(n) law until
    half-width + CHECK_Z * its simulation error <= target. Never stepped down: a fit that overshoots
    stays (its promise holds)."""
    fitted = _search_items(statistic, target, raters, shares, agreement, confidence, level, n_sims, seed)
    n = fitted
    sims = max(n_sims, min(CHECK_SIMS_FACTOR * n_sims, CHECK_SIMS_CAP))
    checks: list[tuple[int, float, float]] = []
    for _ in range(MAX_CHECKS):
        at = simulated_width(statistic, n, raters, shares, agreement, confidence, level, sims, seed, stream=1)
        checks.append((n, at.half_width, at.sim_error))
        bound = at.half_width + CHECK_Z * at.sim_error
        if bound <= target:
            return CheckedSize(fitted, n, at, tuple(checks), sims)
        n = max(n + 1, math.ceil(n * (bound / target) ** 2 * 1.02))
        if n > MAX_ITEMS:
            break
    raise ValueError(f"more than {MAX_ITEMS} items would be needed for a half-width of {target}")


def plan_study(
    statistic: str,
    expected: float,
    half_width: float,
    shares: Sequence[float] = (0.5, 0.5),
    raters: int = 2,
    confidence: float = 0.95,
    level: str = "nominal",
    items: int | None = None,
    n_sims: int = 400,
    seed: int = 0,
) -> Plan:
    """Items needed for ``half_width`` and the interval expected at that size (or at ``items``)."""
    if not 2 <= raters <= 50:
        raise ValueError(f"raters must be between 2 and 50, got {raters}")
    if statistic == "cohen_kappa" and raters != 2:
        raise ValueError("Cohen's kappa is for 2 raters; use Fleiss' kappa or Krippendorff's alpha for more")
    if not 0.0 < half_width < 1.0:
        raise ValueError(f"the interval half-width must be between 0 and 1, got {half_width}")
    if items is not None and not 2 <= items <= MAX_ITEMS:
        raise ValueError(f"items must be between 2 and {MAX_ITEMS}, got {items}")
    p = tuple(float(v) for v in _shares(shares))
    agreement = agreement_for(statistic, expected, p)
    if statistic == "observed_agreement":
        needed = items_for_agreement(expected, half_width, confidence)
        needed_width, needed_error = wilson_half_width(expected, needed, confidence), 0.0
        checks: tuple[tuple[int, float, float], ...] = ()
        check_sims = 0
        size = items if items is not None else needed
        lower, upper = wilson_interval(expected, size, confidence)
        centre_width = wilson_half_width(expected, size, confidence)
        sim_error = 0.0
        grid = sorted({max(2, round(size * f)) for f in (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4)} | {needed})
        by_items = pd.DataFrame(
            {"items": grid, "half_width": [wilson_half_width(expected, n, confidence) for n in grid]}
        ).assign(sim_error=0.0)
        method = "wilson"
    else:
        found = items_for_coefficient(
            statistic, half_width, raters, p, agreement, confidence, level, n_sims, seed
        )
        needed, checks, check_sims = found.items, found.checks, found.sims
        needed_width, needed_error = found.width.half_width, found.width.sim_error
        size = items if items is not None else needed

        def measured(n: int) -> SimulatedWidth:  # the check's draws, so that one size has one figure
            if n == needed:
                return found.width
            return simulated_width(
                statistic, n, raters, p, agreement, confidence, level, n_sims, seed, stream=1
            )

        at = measured(size)
        lower, upper, centre_width, sim_error = at.lower, at.upper, at.half_width, at.sim_error
        grid = sorted({max(2, round(size * f)) for f in (0.25, 0.5, 1, 2, 4)} | {needed})
        widths = [measured(n) for n in grid]
        by_items = pd.DataFrame(
            {
                "items": grid,
                "half_width": [w.half_width for w in widths],
                "sim_error": [w.sim_error for w in widths],
            }
        )
        method = "simulation"
    rater_stat = "fleiss_kappa" if statistic == "cohen_kappa" else statistic
    rater_widths = [
        simulated_width(rater_stat, size, m, p, agreement, confidence, level, n_sims, seed)
        for m in range(2, 6)
    ]
    by_raters = pd.DataFrame(
        {
            "raters": list(range(2, 6)),
            "half_width": [w.half_width for w in rater_widths],
            "sim_error": [w.sim_error for w in rater_widths],
        }
    )
    return Plan(
        statistic,
        float(expected),
        p,
        raters,
        confidence,
        half_width,
        needed,
        size,
        lower,
        upper,
        centre_width,
        method,
        sim_error,
        n_sims,
        seed,
        by_items,
        by_raters,
        kappa_paradox_bound(p, agreement),
        needed_width,
        needed_error,
        checks,
        check_sims,
    )


@dataclass(frozen=True)
class Preset:
    """A seed paper's study, to open in the planner."""

    name: str
    statistic: str
    expected: float
    items: int
    raters: int
    shares: tuple[float, ...]
    half_width: float
    source: str


PRESETS = {
    "prmbench_v": Preset(
        "PRMBench-V: 100 items, 2 raters, OA 0.94",
        "observed_agreement",
        0.94,
        100,
        2,
        (0.95, 0.05),
        0.05,
        "PRMBench-V l.368-370: two researchers, 100 sampled items, 94% observed agreement",
    ),
    "mpbench": Preset(
        "MPBench: 300 items, 3 raters, OA > 0.95 (286/300)",
        "observed_agreement",
        286 / 300,
        300,
        3,
        (0.95, 0.05),
        0.025,
        "MPBench l.178: three annotators, 300 instances, agreement above 95%",
    ),
}


def plan_preset(key: str, n_sims: int = 400, seed: int = 0) -> Plan:
    """Open a seed paper's study in the planner: the interval that study had at its size."""
    if key not in PRESETS:
        raise ValueError(f"no preset {key!r}; presets: {', '.join(PRESETS)}")
    p = PRESETS[key]
    return plan_study(
        p.statistic, p.expected, p.half_width, p.shares, p.raters, items=p.items, n_sims=n_sims, seed=seed
    )
