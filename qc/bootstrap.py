"""The one item bootstrap: draws of item indices with replacement and the percentile interval.

qc.report (every agreement coefficient) and qc.quality (agreement within one step) resample
through here, so the same seed gives the same draws and an n_boot of 0 fails the same way.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = [
    "DRAWS_PER_CHUNK",
    "check_ci",
    "check_n_boot",
    "normal_quantile",
    "percentile_interval",
    "resample_indices",
    "wilson_interval",
]

DRAWS_PER_CHUNK = 8_000_000  # item draws held in memory at once while resampling


def check_n_boot(n_boot: int) -> int:
    """The replicate count as an int, refused when it is not a positive whole number."""
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot <= 0:
        raise ValueError(f"n_boot must be a positive number of bootstrap replicates, got {n_boot!r}")
    return int(n_boot)


def check_ci(ci: float) -> float:
    """The confidence level as a fraction in (0, 1); 95 (a percentage) is refused, not read as 0.95."""
    if isinstance(ci, bool) or not 0.0 < float(ci) < 1.0:
        raise ValueError(f"ci must be a confidence level in (0, 1) such as 0.95, got {ci!r}")
    return float(ci)


def wilson_interval(share: float, n: float, ci: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a share observed on n units: Wilson 1927, JASA 22:209-212.

    Used for agreement shares (observed agreement, agreement within one step): unlike a percentile
    bootstrap it keeps its width at perfect agreement (30/30 gives [0.886, 1] at 95%, where every
    resample is 1.0). (NaN, NaN) when n < 1 or the share is undefined.
    """
    ci = check_ci(ci)
    if not n >= 1 or share is None or np.isnan(share):
        return float("nan"), float("nan")
    z = normal_quantile(1.0 - (1.0 - ci) / 2.0)
    p = min(max(float(share), 0.0), 1.0)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


# scipy.special.ndtri's values (scipy.stats.norm.ppf's function) at the usual levels' quantiles, so a
# report at 90, 95 or 99% does not import scipy (0.2-0.7 s on first use); tests hold them equal.
_NORMAL_QUANTILES = {0.95: 1.6448536269514722, 0.975: 1.959963984540054, 0.995: 2.5758293035489004}


def normal_quantile(p: float) -> float:
    """The standard normal quantile at p, bit for bit scipy's ``ndtri(p)`` (= ``norm.ppf(p)``)."""
    known = _NORMAL_QUANTILES.get(p)
    if known is not None:
        return known
    from scipy.special import ndtri  # norm.ppf's own function, without importing scipy.stats

    return float(ndtri(p))


def _chunks(n_items: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    per_chunk = max(1, DRAWS_PER_CHUNK // max(n_items, 1))
    done = 0
    while done < n_boot:
        size = min(per_chunk, n_boot - done)
        yield rng.integers(0, n_items, size=(size, n_items))
        done += size


def resample_indices(n_items: int, n_boot: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Rows of ``n_items`` item indices drawn with replacement, ``n_boot`` rows in all, in chunks.

    Same seed, same draws, however a caller consumes them. Raises ValueError for n_boot <= 0.
    """
    n_boot = check_n_boot(n_boot)
    if n_items < 0:
        raise ValueError(f"cannot resample {n_items} items")
    return _chunks(n_items, n_boot, seed)


def percentile_interval(replicates: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    """Percentile interval over the defined replicates (a replicate can be NaN, e.g. one label only)."""
    ci = check_ci(ci)
    values = np.asarray(replicates, dtype=float)
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - ci) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)
