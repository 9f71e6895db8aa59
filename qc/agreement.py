"""Inter-annotator agreement coefficients over a ratings matrix.

``ratings`` is 2-D: one row per item, one column per annotator (a list of lists, a numpy array or
a DataFrame). None, NaN or pd.NA is a missing rating; labels may be ints, floats or strings.

Shared conventions, so that callers never need a try/except:

- An item takes part only when it has at least 2 ratings (a "pairable" unit, Krippendorff 2011).
- Every coefficient returns ``float("nan")`` when it is undefined: fewer than 2 pairable items
  (for two sequences: fewer than 2 complete pairs), or chance agreement of 1, which happens when
  every rating uses the same label. PABAK is the exception: it needs no chance model, so one
  label everywhere gives 1.0.
- Two-sequence coefficients drop the pairs where either value is missing, and count only the
  labels seen in the pairs they compare (PABAK's k too).
- Exception, as Gwet defines it: Gwet's AC1 takes its chance term (the category shares pi_k) from
  every item with at least one rating, single-rated items included; its observed agreement uses
  the pairable items only (Gwet, Handbook 2014, sec. 4.2, the "r_i >= 1" and "r_i >= 2" sums).
- Fleiss' kappa with missing ratings follows one of two generalisations, the pooled one: the
  category shares p_j are pooled over all ratings of the pairable items (each item weighted by its
  number of ratings; Fleiss 1971's p_j = sum_i n_ij / sum_i m_i with varying m_i). statsmodels'
  ``fleiss_kappa`` computes the same p_j but refuses a count table whose rows differ in raters
  (it asserts equal row sums), so it agrees only on complete tables. irrCAC's (Gwet 2014, sec. 4.2)
  takes p_j as the mean over items of each item's own shares n_ij / m_i, single-rated items
  included. With the same number of raters on every item the two coincide; see fleiss_kappa.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

import krippendorff
import numpy as np
import pandas as pd

__all__ = [
    "LEVELS",
    "alpha_values",
    "as_ratings_array",
    "category_counts",
    "cohen_kappa",
    "encode_labels",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "gwet_ac1",
    "is_kappa_paradox",
    "item_agreement",
    "kappa_paradox",
    "krippendorff_alpha",
    "observed_agreement",
    "pabak",
    "pairwise_matrix",
    "prevalence_skew",
    "scott_pi",
]

NAN = float("nan")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
# Chance agreement this close to 1 means one label everywhere: kappa is 0/0, not a number.
_EPS = 1e-12


def as_ratings_array(ratings: Any) -> np.ndarray:
    """Ratings (list of lists, numpy array or DataFrame) as a 2-D items x annotators array; text as objects."""
    if isinstance(ratings, pd.DataFrame):
        arr = ratings.to_numpy()
    elif isinstance(ratings, np.ndarray):
        arr = ratings
    else:
        # dtype=object keeps None and NaN apart from strings (np.asarray would turn NaN into "nan").
        arr = np.array(ratings, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be 2-D (items x annotators), got shape {arr.shape}")
    if arr.dtype.kind in "US":
        arr = arr.astype(object)
    out: np.ndarray = arr
    return out


def _sorted_labels(labels: Sequence[Any]) -> list[Any]:
    labels = [v.item() if isinstance(v, np.generic) else v for v in labels]
    try:
        return sorted(labels)
    except TypeError:  # mixed ints and strings: a stable, documented order instead of a crash
        return sorted(labels, key=lambda v: (type(v).__name__, repr(v)))


def encode_labels(ratings: Any, order: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any]]:
    """Codes 0..k-1 as a float array (NaN where missing) and the k categories they stand for.

    Categories are ``order`` when given (a label outside it raises ValueError), else the sorted
    distinct labels; integral numeric labels come back as ints.
    """
    arr = as_ratings_array(ratings)
    flat = arr.ravel()
    numeric = arr.dtype.kind in "iuf"
    if numeric:
        flat = flat.astype(float)
        missing = np.isnan(flat)
    else:
        missing = np.asarray(pd.isna(flat), dtype=bool)
    present = flat[~missing]
    if order is None:
        if numeric:
            uniq = np.unique(present)
            integral = bool(np.all(uniq == np.round(uniq)))
            categories = [int(v) if integral else float(v) for v in uniq]
        else:
            categories = _sorted_labels(pd.unique(present))
    else:
        categories = list(order)
        if len(set(categories)) != len(categories):
            raise ValueError(f"order has repeated labels: {categories}")
    if numeric:
        index = pd.Index(np.asarray(categories, dtype=float))
    else:
        index = pd.Index(categories, dtype=object)
        present = pd.Index(present, dtype=object)
    found = index.get_indexer(present)
    if (found < 0).any():
        unknown = _sorted_labels(pd.unique(np.asarray(present, dtype=object)[found < 0]))
        raise ValueError(f"labels not in order: {unknown[:10]}")
    codes = np.full(flat.shape, np.nan)
    codes[~missing] = found
    return codes.reshape(arr.shape), categories


def category_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Items x categories matrix: how many annotators gave each category to each item."""
    codes = np.asarray(codes, dtype=float)
    n_items = codes.shape[0]
    rows = np.broadcast_to(np.arange(n_items)[:, None], codes.shape)
    mask = ~np.isnan(codes)
    flat = rows[mask] * n_categories + codes[mask].astype(np.int64)
    return np.bincount(flat, minlength=n_items * n_categories).reshape(n_items, n_categories).astype(float)


def _counts(ratings: Any, order: Sequence[Any] | None = None) -> tuple[np.ndarray, int]:
    codes, categories = encode_labels(ratings, order)
    return category_counts(codes, len(categories)), len(categories)


def item_agreement(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item: share of agreeing annotator pairs, and whether the item has >= 2 ratings."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    return np.where(pairable, agree, 0.0), pairable


def observed_agreement(ratings: Any) -> float:
    """Mean over items (>= 2 ratings) of the share of agreeing pairs: P-bar of Fleiss 1971, Psychol. Bull. 76:378-382."""
    agree, pairable = item_agreement(_counts(ratings)[0])
    if pairable.sum() < 2:
        return NAN
    return float(agree[pairable].mean())


def fleiss_kappa_from_counts(counts: Any) -> float:
    """Fleiss' kappa from an items x categories count table: Fleiss 1971, Psychol. Bull. 76:378-382."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        raise ValueError("counts must be 2-D (items x categories)")
    agree, pairable = item_agreement(counts)
    if pairable.sum() < 2:
        return NAN
    # Varying raters per item: P-bar over items, p_j pooled over all ratings of pairable items.
    kept = counts[pairable]
    p = kept.sum(axis=0) / kept.sum()
    pe = float((p**2).sum())
    if 1.0 - pe <= _EPS:
        return NAN
    return (float(agree[pairable].mean()) - pe) / (1.0 - pe)


def fleiss_kappa(ratings: Any) -> float:
    """Fleiss' kappa for many raters, items with < 2 ratings dropped: Fleiss 1971, Psychol. Bull. 76:378-382.

    Missing ratings: P-bar is the mean over pairable items of each item's share of agreeing pairs;
    p_j pools all ratings of those items, p_j = sum_i n_ij / sum_i m_i (an item weighs by its
    ratings). irrCAC instead averages each item's shares n_ij / m_i over every item with a rating
    (single-rated items too): items rated [a a a], [a b], [b b], [b]: pooled p = (4/7, 3/7) and
    kappa 23/72 = 0.319; irrCAC p = (3/8, 5/8) and 13/45 = 0.289. statsmodels' fleiss_kappa refuses
    such a table (unequal raters per item); on equal raters per item all three agree.
    """
    return fleiss_kappa_from_counts(_counts(ratings)[0])


def gwet_ac1(ratings: Any, categories: Sequence[Any] | None = None) -> float:
    """Gwet's AC1, many raters, missing allowed: Gwet 2008, Br. J. Math. Stat. Psychol. 61:29-48; Handbook 2014 ch. 4.

    ``categories`` is the full label set (q in Gwet's formula); by default the labels observed.
    Observed agreement uses items with >= 2 ratings; the chance term pi_k averages the category
    shares of every item with >= 1 rating, single-rated items included, as Gwet does.
    """
    counts, q = _counts(ratings, categories)
    agree, pairable = item_agreement(counts)
    if pairable.sum() < 2 or q < 2:
        return NAN
    m = counts.sum(axis=1)
    rated = m >= 1
    pa = float(agree[pairable].mean())
    pi = (counts[rated] / m[rated, None]).mean(axis=0)
    pe = float((pi * (1.0 - pi)).sum() / (q - 1))
    return (pa - pe) / (1.0 - pe)


def _pair_codes(a: Sequence[Any], b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} != {len(b)}")
    pair = np.empty((len(a), 2), dtype=object)
    pair[:, 0] = list(a)
    pair[:, 1] = list(b)
    both = ~np.asarray(pd.isna(pair), dtype=bool).any(axis=1)
    # Only the compared pairs define the label set: a label seen only beside a missing partner
    # would otherwise raise PABAK's k (and shift nothing else).
    codes, categories = encode_labels(pair[both]) if both.any() else (np.empty((0, 2)), [])
    return codes[:, 0].astype(np.int64), codes[:, 1].astype(np.int64), len(categories)


def _kappa_codes(x: np.ndarray, y: np.ndarray, k: int, pooled: bool = False) -> float:
    n = len(x)
    if n < 2:
        return NAN
    po = float(np.mean(x == y))
    px = np.bincount(x, minlength=k) / n
    py = np.bincount(y, minlength=k) / n
    pe = float((((px + py) / 2) ** 2).sum()) if pooled else float((px * py).sum())
    if 1.0 - pe <= _EPS:
        return NAN
    return (po - pe) / (1.0 - pe)


def _pabak_codes(x: np.ndarray, y: np.ndarray, k: int) -> float:
    if len(x) < 2:
        return NAN
    k = max(k, 2)
    return (k * float(np.mean(x == y)) - 1.0) / (k - 1.0)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's kappa, chance from each rater's own marginals: Cohen 1960, Educ. Psychol. Meas. 20:37-46."""
    x, y, k = _pair_codes(a, b)
    return _kappa_codes(x, y, k)


def scott_pi(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Scott's pi, chance from the pooled marginals: Scott 1955, Public Opin. Q. 19:321-325."""
    x, y, k = _pair_codes(a, b)
    return _kappa_codes(x, y, k, pooled=True)


def pabak(a: Sequence[Any], b: Sequence[Any], n_categories: int | None = None) -> float:
    """Prevalence- and bias-adjusted kappa (k*Po - 1)/(k - 1): Byrt, Bishop & Carlin 1993, J. Clin. Epidemiol. 46:423-429.

    k is ``n_categories`` when given (the scale's size, e.g. 2 for Correct/Incorrect), else the
    labels seen in the compared pairs but at least 2, so that a binary task where both raters
    used one label scores 1.0 (2*Po - 1). Pairs with a missing value take no part, also in k.
    """
    x, y, k = _pair_codes(a, b)
    return _pabak_codes(x, y, n_categories if n_categories is not None else k)


def alpha_values(categories: list[Any], level: str, order: Sequence[Any] | None) -> np.ndarray:
    """The number each category stands for in alpha's distances: itself if numeric, else its rank."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    numeric = all(isinstance(c, int | float | np.number) and not isinstance(c, bool) for c in categories)
    if not numeric and level != "nominal" and (level == "ratio" or order is None):
        raise ValueError(f"{level} alpha on non-numeric labels needs numeric labels or order=")
    if level == "ratio" and numeric and any(float(c) < 0 for c in categories):
        negative = sorted({float(c) for c in categories if float(c) < 0})
        # Ratio distances ((a-b)/(a+b))^2 assume a true zero and no negatives: with -1 and 1 the
        # sum is 0 and the pair counts as agreeing, so alpha can read 1.0 on data that disagree.
        raise ValueError(
            f"ratio alpha needs values >= 0, got {negative[:5]}; a code such as ProcessBench's -1 "
            "('no error') is a category: use level='nominal' (or 'interval' on a shifted scale)"
        )
    return np.asarray(categories, dtype=float) if numeric else np.arange(len(categories), dtype=float)


def krippendorff_alpha(ratings: Any, level: str = "nominal", order: Sequence[Any] | None = None) -> float:
    """Krippendorff's alpha via the ``krippendorff`` package: Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability".

    Numeric labels keep their values (interval and ratio distances use them). String labels need
    ``order`` for ordinal and interval (equal spacing by rank); ratio on strings raises ValueError.
    """
    codes, categories = encode_labels(ratings, order)
    values = alpha_values(categories, level, order)
    counts = category_counts(codes, len(categories))
    pairable = counts.sum(axis=1) >= 2
    if pairable.sum() < 2 or (counts[pairable].sum(axis=0) > 0).sum() < 2:
        return NAN
    data = np.full(codes.shape, np.nan)
    present = ~np.isnan(codes)
    data[present] = values[codes[present].astype(np.int64)]
    with np.errstate(divide="ignore", invalid="ignore"):
        result = krippendorff.alpha(
            reliability_data=data.T,
            value_domain=values,
            level_of_measurement=cast(Literal["nominal", "ordinal", "interval", "ratio"], level),
        )
    return float(result)


_PAIR_METRICS = {
    "agreement": lambda x, y, k: float(np.mean(x == y)) if len(x) >= 2 else NAN,
    "kappa": _kappa_codes,
    "scott_pi": lambda x, y, k: _kappa_codes(x, y, k, pooled=True),
    "pabak": _pabak_codes,
}


def pairwise_matrix(ratings: Any, metric: str = "agreement", min_items: int = 2) -> pd.DataFrame:
    """Annotator x annotator matrix of a two-rater coefficient over shared items (NaN below ``min_items``).

    ``metric``: agreement | kappa | scott_pi | pabak (k = the labels of the whole matrix).
    """
    if metric not in _PAIR_METRICS:
        raise ValueError(f"metric must be one of {sorted(_PAIR_METRICS)}, got {metric!r}")
    names = list(ratings.columns) if isinstance(ratings, pd.DataFrame) else None
    codes, categories = encode_labels(ratings)
    k = len(categories)
    n_annotators = codes.shape[1]
    fn = _PAIR_METRICS[metric]
    out = np.full((n_annotators, n_annotators), np.nan)
    present = ~np.isnan(codes)
    for i in range(n_annotators):
        for j in range(i, n_annotators):
            both = present[:, i] & present[:, j]
            if both.sum() >= max(min_items, 1):
                x = codes[both, i].astype(np.int64)
                y = codes[both, j].astype(np.int64)
                out[i, j] = out[j, i] = fn(x, y, k)
    labels = names if names is not None else list(range(n_annotators))
    return pd.DataFrame(out, index=labels, columns=labels)


def prevalence_skew(ratings: Any) -> float:
    """Share of all ratings that carry the most frequent label (NaN when there are no ratings)."""
    totals = _counts(ratings)[0].sum(axis=0)
    if totals.sum() == 0:
        return NAN
    return float(totals.max() / totals.sum())


def kappa_paradox(ratings: Any, threshold: float = 0.8, gap: float = 0.2) -> bool:
    """True when one label dominates and kappa understates agreement (Feinstein & Cicchetti 1990, J. Clin. Epidemiol. 43:543-549).

    Rule: the most frequent label holds >= ``threshold`` of all ratings, and Fleiss' kappa is either
    undefined (one label everywhere) or at least ``gap`` below observed agreement. PRMBench-V
    reports observed agreement in this situation.
    """
    return is_kappa_paradox(
        observed_agreement(ratings), fleiss_kappa(ratings), prevalence_skew(ratings), threshold, gap
    )


def is_kappa_paradox(oa: float, kappa: float, prevalence: float, threshold: float, gap: float) -> bool:
    """kappa_paradox's rule on figures already computed (observed agreement, Fleiss' kappa, prevalence)."""
    if np.isnan(oa) or not prevalence >= threshold:
        return False
    return bool(np.isnan(kappa) or oa - kappa >= gap)
