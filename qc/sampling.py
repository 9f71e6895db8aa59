"""Stratified samples for agreement studies: N items drawn across the values of one field.

PRMBench-V drew 100 instances for its two-rater study and MPBench 300 for three raters; a study
stratified by error type keeps rare types from vanishing from a small sample. Pure and seeded: the
same frame, size, field and seed always give the same items, whatever order the rows come in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["KEPT_STATUSES", "MISSING_STRATUM", "allocate", "fresh_raters", "stratified_sample", "study_pool"]

MISSING_STRATUM = "(none)"  # the stratum of items whose field is empty


def allocate(sizes: dict[str, int], n: int, seed: int = 0) -> dict[str, int]:
    """How many items to draw from each stratum: proportional, at least one each where n allows.

    Largest-remainder rounding of n * size / total; a stratum never gives more than it holds, and
    what a small stratum cannot give goes to the others. With fewer draws than strata, the largest
    strata get one each (ties broken by the seed).
    """
    total = sum(sizes.values())
    if n < 0:
        raise ValueError(f"cannot draw {n} items")
    if n > total:
        raise ValueError(f"cannot draw {n} items from {total}")
    names = sorted(k for k, v in sizes.items() if v > 0)
    out = dict.fromkeys(sizes, 0)
    if n == 0 or not names:
        return out
    if n < len(names):
        rng = np.random.default_rng(seed)
        tiebreak = dict(zip(names, rng.permutation(len(names)), strict=True))
        for name in sorted(names, key=lambda k: (-sizes[k], tiebreak[k]))[:n]:
            out[name] = 1
        return out
    quota = {k: n * sizes[k] / total for k in names}
    alloc = {k: min(sizes[k], max(1, math.floor(quota[k]))) for k in names}
    # Too few: the largest remainders (quota - alloc) gain one; too many: the largest excesses lose one.
    while sum(alloc.values()) < n:
        room = [k for k in names if alloc[k] < sizes[k]]
        alloc[max(room, key=lambda k: (quota[k] - alloc[k], sizes[k], k))] += 1
    while sum(alloc.values()) > n:
        spare = [k for k in names if alloc[k] > 1]
        alloc[max(spare, key=lambda k: (alloc[k] - quota[k], k))] -= 1
    out.update(alloc)
    return out


def _stratum(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return MISSING_STRATUM
    return str(value)


def stratified_sample(
    items: pd.DataFrame, n: int, by: str | None = None, seed: int = 0, id_column: str = "item_id"
) -> pd.DataFrame:
    """``n`` rows of ``items`` drawn without replacement within the strata of column ``by``.

    Returns columns ``id_column`` and ``stratum`` (the field's value as text, MISSING_STRATUM when
    empty; "all" without ``by``), sorted by id. Raises ValueError when ``n`` exceeds the items.
    """
    if id_column not in items.columns:
        raise ValueError(f"items have no {id_column!r} column")
    if by is not None and by not in items.columns:
        raise ValueError(f"items have no {by!r} column to stratify by")
    ids = items[id_column].to_numpy()
    if len(pd.unique(ids)) != len(ids):
        raise ValueError(f"{id_column} repeats: each item must appear once")
    frame = pd.DataFrame(
        {
            id_column: ids,
            "stratum": [_stratum(v) for v in items[by]] if by is not None else "all",
        }
    ).sort_values(id_column, ignore_index=True)
    if n > len(frame):
        raise ValueError(f"asked for {n} items but there are only {len(frame)}")
    sizes = frame["stratum"].value_counts().to_dict()
    counts = allocate(sizes, n, seed)
    rng = np.random.default_rng(seed)
    picked = []
    for name in sorted(counts):
        if counts[name]:
            members = frame.index[frame["stratum"] == name].to_numpy()
            picked.append(rng.choice(members, size=counts[name], replace=False))
    rows = np.sort(np.concatenate(picked)) if picked else np.array([], dtype=int)
    return frame.loc[rows].reset_index(drop=True)


# ---- Drawing as the papers drew (docs/PROTOCOLS.md A5, C1a) ----------------------------------------------

KEPT_STATUSES = ("consensus", "complete", "accepted")  # items in the gated benchmark


def study_pool(
    candidates: pd.DataFrame, kept: Sequence[str] = KEPT_STATUSES, status_column: str = "status"
) -> pd.DataFrame:
    """The items a paper-style study may draw: those the gate kept (PRMBench-V sampled its
    "pre-verified dataset", MPBench its released items), in the candidates' order."""
    if status_column not in candidates.columns:
        raise ValueError(f"candidates have no {status_column!r} column")
    return candidates[candidates[status_column].isin(list(kept))].reset_index(drop=True)


def fresh_raters(
    items: Sequence[Any],
    raters: Sequence[str],
    seen: Mapping[Any, Iterable[str]],
    k: int,
    seed: int = 0,
    load: Mapping[str, int] | None = None,
) -> dict[Any, list[str]]:
    """K raters per item, none of whom has seen it (labelled it in the gate): the study's blind raters.

    Each item takes the k eligible raters with the fewest items so far (ties broken by the seed), so
    the load spreads evenly; the same inputs always give the same plan. ``load``: items each rater
    already has (a sequential study's earlier batches). Raises ValueError naming the first item with
    fewer than k raters who have not seen it.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    names = sorted(set(raters))
    rng = np.random.default_rng(seed)
    tiebreak = dict(zip(names, rng.permutation(len(names)), strict=True))
    load = {name: int((load or {}).get(name, 0)) for name in names}
    plan: dict[Any, list[str]] = {}
    for item in items:
        blocked = set(seen.get(item, ()))
        eligible = [r for r in names if r not in blocked]
        if len(eligible) < k:
            raise ValueError(
                f"item {item!r}: only {len(eligible)} rater(s) have not seen it, the study needs {k}"
            )
        chosen = sorted(eligible, key=lambda r: (load[r], tiebreak[r]))[:k]
        for r in chosen:
            load[r] += 1
        plan[item] = sorted(chosen)
    return plan
