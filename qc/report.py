"""Agreement report over long-format labels, with item-bootstrap confidence intervals.

Long format: one row per label, columns ``item, annotator, field, value``.

Fast bootstrap: every coefficient here is a function of sums over items of per-item quantities
(category counts, pairwise agreement, Krippendorff's per-item coincidences). Those quantities
are computed once as the columns of a matrix X (items x m); a bootstrap replicate that draws
items with replacement is then a weight vector w (how often each item was drawn), and its sums
are w @ X. Rows of X depend only on the item's labels, so X is kept once per labelling pattern
(5 annotators, 3 labels: at most 4**5 rows however many items) and w counts draws per pattern:
a thousand replicates over 100,000 items cost little more than drawing them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from qc.agreement import (
    alpha_values,
    as_ratings_array,
    category_counts,
    encode_labels,
    fleiss_kappa,
    gwet_ac1,
    is_kappa_paradox,
    item_agreement,
    krippendorff_alpha,
    observed_agreement,
)
from qc.bootstrap import check_ci, check_n_boot, percentile_interval, resample_indices, wilson_interval

__all__ = [
    "FAST_STATISTICS",
    "SHARE_STATISTICS",
    "agreement_report",
    "bootstrap_ci",
    "point_estimates",
    "ratings_matrix",
    "tolerance_items",
    "within_tolerance_agreement",
]

NAN = float("nan")
_EPS = 1e-12
FAST_STATISTICS = (
    "observed_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "pabak",
    "mean_cohen_kappa",
)
# Shares of agreeing pairs: their interval is Wilson's, not the bootstrap's (qc.bootstrap.wilson_interval).
SHARE_STATISTICS = ("observed_agreement",)
_DENSE_CELLS = 8_000_000  # a block of sums larger than this stays sparse (many annotators or labels)


def ratings_matrix(df: pd.DataFrame, field: str) -> pd.DataFrame:
    """Items x annotators table of one field's values (NaN where unlabelled); a repeated label keeps the last.

    The table ``pivot`` makes (rows and columns sorted, its dtypes), filled with NumPy: on 500,000
    labels the pivot and its duplicate check took most of the report's time outside the bootstrap.
    """
    rows = df.loc[df["field"] == field, ["item", "annotator", "value"]]
    if rows.empty or not isinstance(rows["value"].dtype, np.dtype):  # pandas' own dtypes: its pivot
        return _pivot(rows)
    item_at, items = pd.factorize(rows["item"], sort=True)
    annotator_at, annotators = pd.factorize(rows["annotator"], sort=True)
    if (item_at < 0).any() or (annotator_at < 0).any():  # a missing item or annotator: as pivot does
        return _pivot(rows)
    cell = item_at.astype(np.int64) * len(annotators) + annotator_at
    cells, from_end = np.unique(cell[::-1], return_index=True)  # the last label of each cell
    values = rows["value"].to_numpy()[len(cell) - 1 - from_end]
    size = len(items) * len(annotators)
    if len(cells) == size:
        table = np.empty(size, dtype=values.dtype)
    else:
        table = np.full(size, np.nan, dtype=float if values.dtype.kind in "iuf" else object)
    table[cells] = values
    return pd.DataFrame(
        table.reshape(len(items), len(annotators)),
        index=pd.Index(items, name="item"),
        columns=pd.Index(annotators, name="annotator"),
    )


def _pivot(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.drop_duplicates(["item", "annotator"], keep="last")
    wide = rows.pivot(index="item", columns="annotator", values="value")
    return wide.sort_index().sort_index(axis=1)


def tolerance_items(values: Any, tolerance: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Per item: share of annotator pairs within ``tolerance`` steps (-1 agrees only with -1), and pair counts."""
    values = np.asarray(as_ratings_array(values), dtype=float)
    agree = np.zeros(len(values))
    pairs = np.zeros(len(values))
    for i in range(values.shape[1]):
        for j in range(i + 1, values.shape[1]):
            a, b = values[:, i], values[:, j]
            both = ~np.isnan(a) & ~np.isnan(b)
            no_error = (a == -1) | (b == -1)
            agree += np.where(no_error, a == b, np.abs(a - b) <= tolerance) & both
            pairs += both
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(pairs > 0, agree / np.where(pairs > 0, pairs, 1), 0.0)
    return share, pairs


def within_tolerance_agreement(ratings: Any, tolerance: int = 1) -> float:
    """Mean pairwise agreement on earliest-error labels where |a - b| <= tolerance counts; -1 agrees only with -1."""
    share, pairs = tolerance_items(ratings, tolerance)
    pairable = pairs > 0
    if pairable.sum() < 2:
        return NAN
    return float(share[pairable].mean())


@dataclass(frozen=True)
class _Block:
    """Per-item columns X (dense or sparse) and the function turning summed columns into the statistic."""

    columns: Any
    finish: Callable[[np.ndarray], np.ndarray]


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _chance_corrected(observed: np.ndarray, chance: np.ndarray, ok: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (observed - chance) / (1.0 - chance)
    return np.where(ok & (1.0 - chance > _EPS), out, np.nan)


def _columns(
    rows: list[np.ndarray], cols: list[np.ndarray], vals: list[np.ndarray], shape: tuple[int, int]
) -> Any:
    """Per-item columns from (item, column, value) entries, repeats summed; dense unless large.

    Dense: one bincount, which adds the entries in their order (as scipy's coo_matrix.toarray does),
    and leaves scipy unimported; sparse only past _DENSE_CELLS.
    """
    flat = [np.concatenate(part) if part else np.zeros(0) for part in (rows, cols, vals)]
    at_rows, at_cols = flat[0].astype(np.int64), flat[1].astype(np.int64)
    if shape[0] * shape[1] <= _DENSE_CELLS:
        cells = np.bincount(at_rows * shape[1] + at_cols, weights=flat[2], minlength=shape[0] * shape[1])
        return cells.reshape(shape)
    from scipy import sparse  # imported on first use: the app starts without scipy (10 MB)

    return sparse.coo_matrix((flat[2], (at_rows, at_cols)), shape=shape).tocsr()


def _category_blocks(counts: np.ndarray, q: int) -> dict[str, _Block]:
    """Observed agreement (Fleiss' P-bar), Fleiss' kappa and Gwet's AC1 from per-item category counts."""
    k = counts.shape[1]
    agree, pairable = item_agreement(counts)
    m = counts.sum(axis=1)
    rated = m >= 1
    base = np.column_stack([agree, pairable.astype(float)])

    def oa(s: np.ndarray) -> np.ndarray:
        return np.where(s[:, 1] >= 2, _safe_div(s[:, 0], s[:, 1]), np.nan)

    def fleiss(s: np.ndarray) -> np.ndarray:
        p = _safe_div(s[:, 2:], s[:, 2:].sum(axis=1, keepdims=True))
        return _chance_corrected(oa(s), (p**2).sum(axis=1), s[:, 1] >= 2)

    def ac1(s: np.ndarray) -> np.ndarray:
        pi = _safe_div(s[:, 2 : 2 + k], s[:, [-1]])
        pe = (pi * (1.0 - pi)).sum(axis=1) / (q - 1) if q >= 2 else np.full(len(s), np.nan)
        return _chance_corrected(oa(s), pe, s[:, 1] >= 2)

    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(rated[:, None], counts / np.where(rated, m, 1.0)[:, None], 0.0)
    return {
        "observed_agreement": _Block(base, oa),
        "fleiss_kappa": _Block(np.column_stack([base, counts * pairable[:, None]]), fleiss),
        "gwet_ac1": _Block(np.column_stack([base, shares, rated.astype(float)]), ac1),
    }


def _distance_matrix(values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's fixed difference functions (2011, sec. "metric differences"); ordinal depends on the data."""
    a, b = values[:, None], values[None, :]
    out: np.ndarray
    if level == "nominal":
        out = (a != b).astype(float)
        return out
    if level == "interval":
        out = (a - b) ** 2
        return out
    total = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total != 0, ((a - b) / np.where(total != 0, total, 1.0)) ** 2, 0.0)


def _alpha_block(codes: np.ndarray, counts: np.ndarray, values: np.ndarray, level: str) -> _Block:
    """Krippendorff's alpha from summed per-item coincidences (Krippendorff 2011, coincidence matrix o_ck).

    Item u adds (n_uc n_uk - [c == k] n_uc) / (m_u - 1) to o_ck. Its row sums are the item's counts,
    so the marginals n_c are sums of counts over pairable items and only the distance-weighted
    disagreement needs more: one column for fixed distances, the upper triangle of o for ordinal.
    """
    k = counts.shape[1]
    m = counts.sum(axis=1)
    pairable = m >= 2
    held = counts * pairable[:, None]
    n_items = len(counts)
    if level != "ordinal":
        dist = _distance_matrix(values, level)
        with np.errstate(divide="ignore", invalid="ignore"):
            disagreement = np.where(pairable, np.einsum("ij,jk,ik->i", held, dist, held) / (m - 1), 0.0)
        columns = np.column_stack([held, pairable.astype(float), disagreement])

        def finish(s: np.ndarray) -> np.ndarray:
            n_c = s[:, :k]
            n = n_c.sum(axis=1)
            expected = np.einsum("bi,ij,bj->b", n_c, dist, n_c)
            with np.errstate(divide="ignore", invalid="ignore"):
                alpha = 1.0 - (n - 1.0) * s[:, k + 1] / expected
            return np.where((s[:, k] >= 2) & (expected > _EPS), alpha, np.nan)

        return _Block(columns, finish)

    iu, ju = np.triu_indices(k, 1)
    pair_col = -np.ones((k, k), dtype=np.int64)
    pair_col[iu, ju] = np.arange(len(iu))
    rows, cols, vals = [], [], []
    present = ~np.isnan(codes)
    weight = np.where(pairable, 1.0 / np.maximum(m - 1, 1), 0.0)
    for a in range(codes.shape[1]):
        for b in range(a + 1, codes.shape[1]):
            both = present[:, a] & present[:, b] & (codes[:, a] != codes[:, b])
            ca, cb = codes[both, a].astype(np.int64), codes[both, b].astype(np.int64)
            rows.append(np.flatnonzero(both))
            cols.append(pair_col[np.minimum(ca, cb), np.maximum(ca, cb)])
            vals.append(weight[both])
    head = np.column_stack([held, pairable.astype(float)])
    upper = _columns(rows, cols, vals, (n_items, len(iu)))
    if isinstance(upper, np.ndarray):
        columns = np.column_stack([head, upper])
    else:
        from scipy import sparse

        columns = sparse.hstack([sparse.csr_matrix(head), upper], format="csr")

    def finish_ordinal(s: np.ndarray) -> np.ndarray:
        n_c = s[:, :k]
        n = n_c.sum(axis=1)
        cum = np.cumsum(n_c, axis=1)
        # ordinal difference: (sum of n_g for g from c to k, minus half of n_c and n_k) squared
        span = cum[:, ju] - cum[:, iu] + n_c[:, iu]
        dist = (span - (n_c[:, iu] + n_c[:, ju]) / 2.0) ** 2
        observed = (s[:, k + 1 :] * dist).sum(axis=1)
        expected = (n_c[:, iu] * n_c[:, ju] * dist).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1.0 - (n - 1.0) * observed / expected
        return np.where((s[:, k] >= 2) & (expected > _EPS), alpha, np.nan)

    return _Block(columns, finish_ordinal)


def _pairwise_blocks(codes: np.ndarray, k: int) -> dict[str, _Block]:
    """Mean over annotator pairs of Cohen's kappa and of PABAK; per pair: agreements and both marginals."""
    present = ~np.isnan(codes)
    width = 1 + 2 * k
    rows, cols, vals = [], [], []
    n_pairs = 0
    for a in range(codes.shape[1]):
        for b in range(a + 1, codes.shape[1]):
            both = present[:, a] & present[:, b]
            if not both.any():
                continue
            items = np.flatnonzero(both)
            ca, cb = codes[both, a].astype(np.int64), codes[both, b].astype(np.int64)
            start = n_pairs * width
            same = ca == cb
            rows += [items[same], items, items]
            cols += [np.full(same.sum(), start), start + 1 + ca, start + 1 + k + cb]
            vals += [np.ones(same.sum()), np.ones(len(items)), np.ones(len(items))]
            n_pairs += 1
    columns = _columns(rows, cols, vals, (len(codes), max(n_pairs, 1) * width))
    k_pabak = max(k, 2)

    def split(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        s = s[:, : n_pairs * width].reshape(len(s), n_pairs, width)
        n = s[:, :, 1 : 1 + k].sum(axis=2)
        return s, n, _safe_div(s[:, :, 0], n), n >= 2

    def mean_over_pairs(values: np.ndarray) -> np.ndarray:
        ok = ~np.isnan(values)
        return np.where(
            ok.any(axis=1), np.where(ok, values, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1), np.nan
        )

    def kappa(s: np.ndarray) -> np.ndarray:
        s, n, po, ok = split(s)
        pa = _safe_div(s[:, :, 1 : 1 + k], n[:, :, None])
        pb = _safe_div(s[:, :, 1 + k :], n[:, :, None])
        return mean_over_pairs(_chance_corrected(po, (pa * pb).sum(axis=2), ok))

    def pabak(s: np.ndarray) -> np.ndarray:
        _, _, po, ok = split(s)
        return mean_over_pairs(np.where(ok, (k_pabak * po - 1.0) / (k_pabak - 1.0), np.nan))

    return {"pabak": _Block(columns, pabak), "mean_cohen_kappa": _Block(columns, kappa)}


def _patterns(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``codes`` (one per labelling pattern) and each item's pattern.

    Every per-item column is a function of the item's row of codes, so items that share a row share
    their columns: 5 annotators and 3 labels make at most 4**5 patterns, however many items.
    """
    n_items, n_annotators = codes.shape
    if n_items == 0:
        return codes, np.zeros(0, dtype=np.intp)
    shifted = np.where(np.isnan(codes), 0.0, codes + 1.0)  # 0 = missing, c + 1 = category c
    if n_annotators and (k + 1) ** n_annotators < 2**62:
        key = shifted.astype(np.int64) @ ((k + 1) ** np.arange(n_annotators, dtype=np.int64))
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(shifted, axis=0, return_index=True, return_inverse=True)
    return codes[first], inverse.reshape(-1).astype(np.intp)


def _blocks_from_codes(
    codes: np.ndarray, categories: list[Any], names: Sequence[str], level: str, order: Sequence[Any] | None
) -> dict[str, _Block]:
    k = len(categories)
    counts = category_counts(codes, k)
    blocks: dict[str, _Block] = {}
    if {"observed_agreement", "fleiss_kappa", "gwet_ac1"} & set(names):
        blocks.update(_category_blocks(counts, k))
    if "krippendorff_alpha" in names:
        values = alpha_values(categories, level, order)
        blocks["krippendorff_alpha"] = _alpha_block(codes, counts, values, level)
    if {"pabak", "mean_cohen_kappa"} & set(names):
        blocks.update(_pairwise_blocks(codes, k))
    unknown = set(names) - set(FAST_STATISTICS)
    if unknown:
        raise ValueError(f"no fast path for {sorted(unknown)}; known: {FAST_STATISTICS}")
    return {name: blocks[name] for name in names}


@dataclass(frozen=True)
class _Coded:
    """A ratings matrix encoded once: codes, categories, and the items grouped by labelling pattern."""

    codes: np.ndarray
    categories: list[Any]
    unique: np.ndarray  # the distinct rows of codes
    pattern: np.ndarray  # each item's row in ``unique``
    multiplicity: np.ndarray  # items per pattern, as float weights

    @classmethod
    def of(cls, ratings: Any, order: Sequence[Any] | None) -> _Coded:
        codes, categories = encode_labels(ratings, order)
        unique, pattern = _patterns(codes, len(categories))
        multiplicity = np.bincount(pattern, minlength=len(unique)).astype(float)
        return cls(codes, categories, unique, pattern, multiplicity)


# Multiply-adds below which the summed columns skip BLAS. OpenBLAS's threads spin for a while after
# each call; on a busy 2-core machine they took the CPU from the next chunk's draws, and the report
# ran at 3-4 times its floor (the seeded draws) instead of twice. Patterns make the products small.
_EINSUM_PRODUCTS = 50_000_000


class _Plan:
    """All blocks' dense columns side by side, so one replicate chunk costs one matrix product."""

    def __init__(self, blocks: dict[str, _Block]):
        self.blocks = blocks
        self.slices: dict[int, slice] = {}
        self.sparse: dict[int, Any] = {}
        dense, width = [], 0
        for block in blocks.values():
            key = id(block.columns)
            if key in self.slices or key in self.sparse:
                continue
            if not isinstance(block.columns, np.ndarray):  # a scipy sparse matrix (_columns)
                self.sparse[key] = block.columns.tocsc()
            else:
                cols = np.asarray(block.columns, dtype=float)
                dense.append(cols)
                self.slices[key] = slice(width, width + cols.shape[1])
                width += cols.shape[1]
        self.dense = np.hstack(dense) if dense else None

    def evaluate(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Each statistic for every row of ``weights`` (replicates x items)."""
        summed = None
        if self.dense is not None and weights.size * self.dense.shape[1] <= _EINSUM_PRODUCTS:
            summed = np.einsum("rp,pw->rw", weights, self.dense)  # NumPy's own loop, one thread
        elif self.dense is not None:
            # (X.T @ W.T).T runs several times faster than W @ X for a short, wide W under OpenBLAS.
            summed = (self.dense.T @ weights.T).T
        out = {}
        for name, block in self.blocks.items():
            key = id(block.columns)
            if key in self.slices and summed is not None:
                s = summed[:, self.slices[key]]
            else:
                s = np.asarray((self.sparse[key].T @ weights.T).T)
            out[name] = block.finish(s)
        return out


def point_estimates(
    ratings: Any,
    statistics: Sequence[str] = FAST_STATISTICS,
    level: str = "nominal",
    order: Sequence[Any] | None = None,
) -> dict[str, float]:
    """The statistics from the summed per-item columns the bootstrap uses (equal to qc.agreement's)."""
    coded = _Coded.of(ratings, order)
    plan = _Plan(_blocks_from_codes(coded.unique, coded.categories, statistics, level, order))
    return {name: float(v[0]) for name, v in plan.evaluate(coded.multiplicity[None, :]).items()}


def _pattern_weights(draws: np.ndarray, pattern: np.ndarray, n_patterns: int) -> np.ndarray:
    """How often each labelling pattern was drawn, per replicate: the items' weights summed by pattern.

    Exact integers either way, so the sums over patterns equal the sums over items for every
    integer-valued column. A replicate at a time: its drawn patterns stay in the cache for the count.
    """
    weights = np.empty((len(draws), n_patterns))
    for row, drawn in enumerate(draws):
        weights[row] = np.bincount(pattern[drawn], minlength=n_patterns)
    return weights


def _replicates(
    ratings: Any,
    statistics: Sequence[str],
    n_boot: int,
    seed: int,
    level: str,
    order: Sequence[Any] | None,
    coded: _Coded | None = None,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    n_boot = check_n_boot(n_boot)
    coded = coded or _Coded.of(ratings, order)
    plan = _Plan(_blocks_from_codes(coded.unique, coded.categories, statistics, level, order))
    n_items, n_patterns = len(coded.pattern), len(coded.unique)
    points = {name: float(v[0]) for name, v in plan.evaluate(coded.multiplicity[None, :]).items()}
    parts: dict[str, list[np.ndarray]] = {name: [] for name in statistics}
    if n_items:
        for draws in resample_indices(n_items, n_boot, seed):
            for name, values in plan.evaluate(_pattern_weights(draws, coded.pattern, n_patterns)).items():
                parts[name].append(values)
    reps = {name: np.concatenate(v) if v else np.full(n_boot, np.nan) for name, v in parts.items()}
    return points, reps


def _rated_rows(ratings: Any) -> Any:
    """The ratings without the rows that have no rating at all (a DataFrame stays a DataFrame)."""
    arr = as_ratings_array(ratings)
    rated = ~np.asarray(pd.isna(arr), dtype=bool).all(axis=1) if arr.size else np.zeros(len(arr), bool)
    if rated.all():
        return ratings
    return ratings[rated] if isinstance(ratings, pd.DataFrame) else arr[rated]


_FAST_FUNCTIONS: dict[Callable[[Any], float], str] = {
    observed_agreement: "observed_agreement",
    fleiss_kappa: "fleiss_kappa",
    gwet_ac1: "gwet_ac1",
    krippendorff_alpha: "krippendorff_alpha",
}


def bootstrap_ci(
    ratings: Any,
    statistic: str | Callable[[Any], float],
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    *,
    level: str = "nominal",
    order: Sequence[Any] | None = None,
) -> tuple[float, float]:
    """Percentile interval from resampling items (rows) with replacement (Efron & Tibshirani 1993, ch. 13).

    ``statistic`` is a name in FAST_STATISTICS or one of qc.agreement's coefficient functions
    (vectorised path; the label set stays that of the full data), or any callable on a ratings
    matrix (one call per replicate, same draws for the same seed). Rows with no rating at all are
    dropped first: they carry no information, and resampling them would only thin the others.
    Raises ValueError for n_boot <= 0 or a ci outside (0, 1).
    """
    check_ci(ci)
    check_n_boot(n_boot)
    ratings = _rated_rows(ratings)
    name = statistic if isinstance(statistic, str) else _FAST_FUNCTIONS.get(statistic)
    if name is not None:
        _, reps = _replicates(ratings, [name], n_boot, seed, level, order)
        return percentile_interval(reps[name], ci)
    if isinstance(statistic, str):
        raise ValueError(f"unknown statistic {statistic!r}")
    frame = ratings if isinstance(ratings, pd.DataFrame) else None
    arr = as_ratings_array(ratings)
    values = []
    for draws in resample_indices(len(arr), n_boot, seed):
        for row in draws:
            values.append(statistic(frame.iloc[row] if frame is not None else arr[row]))
    return percentile_interval(np.asarray(values, dtype=float), ci)


def agreement_report(
    df: pd.DataFrame,
    fields: dict[str, str],
    n_boot: int = 1000,
    seed: int = 0,
    order: Mapping[str, Sequence[Any]] | None = None,
    ci: float = 0.95,
    paradox_threshold: float = 0.8,
    paradox_gap: float = 0.2,
) -> pd.DataFrame:
    """One row per field (``fields`` maps field -> alpha level): coefficients with bootstrap intervals.

    Intervals at level ``ci``: Wilson score intervals over the pairable items for observed
    agreement (SHARE_STATISTICS), percentile item-bootstrap intervals for the chance-corrected
    coefficients (these can be narrow on few items: interval-level alpha on 30 items with skewed
    scores covers about 85% at a nominal 95%, qc.coverage; the report says so beside them). The
    level is in the ``ci`` column.
    Nominal coefficients treat values as categories whatever the level; Krippendorff's alpha uses
    the level. ``pabak`` and ``mean_cohen_kappa`` average over annotator pairs (PABAK's k = the
    field's label count). ``kappa_paradox`` follows qc.agreement.kappa_paradox.
    """
    order = order or {}
    records = []
    for field, level in fields.items():
        wide = ratings_matrix(df, field)
        field_order = order.get(field)
        coded = _Coded.of(wide, field_order)
        points, reps = _replicates(wide, FAST_STATISTICS, n_boot, seed, level, field_order, coded)
        categories = coded.categories
        per_item = category_counts(coded.unique, len(categories)) * coded.multiplicity[:, None]
        totals = per_item.sum(axis=0)
        prevalence = float(totals.max() / totals.sum()) if totals.sum() else NAN
        row: dict[str, Any] = {
            "field": field,
            "level": level,
            "n_items": len(wide),
            "n_annotators": wide.shape[1],
            "n_ratings": int(totals.sum()),
            "n_categories": len(categories),
        }
        n_pairable = int(
            coded.multiplicity[category_counts(coded.unique, len(categories)).sum(axis=1) >= 2].sum()
        )
        for name in FAST_STATISTICS:
            if name in SHARE_STATISTICS:  # a share: Wilson holds its width at perfect agreement
                low, high = wilson_interval(points[name], n_pairable, ci)
            else:
                low, high = percentile_interval(reps[name], ci)
            row.update({name: points[name], f"{name}_low": low, f"{name}_high": high})
        row["ci"] = ci
        row["max_prevalence"] = prevalence
        row["kappa_paradox"] = is_kappa_paradox(
            points["observed_agreement"], points["fleiss_kappa"], prevalence, paradox_threshold, paradox_gap
        )
        records.append(row)
    return pd.DataFrame.from_records(records)
