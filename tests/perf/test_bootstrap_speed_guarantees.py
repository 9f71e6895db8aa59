"""The bootstrap counts labelling patterns instead of items: the same draws give the same numbers.

Every per-item column is a function of the item's row of labels, so a replicate's sums over items
equal its sums over the distinct rows weighted by how often each was drawn. Integer-valued columns
(counts, pairs) sum exactly either way: the statistics built from them alone are bit for bit those
of the per-item path; the few fractional columns (shares, 1/(m-1) weights) differ by rounding only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from qc.agreement import encode_labels
from qc.bootstrap import percentile_interval, resample_indices
from qc.report import (
    FAST_STATISTICS,
    _blocks_from_codes,
    _Coded,
    _pattern_weights,
    _Plan,
    _replicates,
    agreement_report,
    ratings_matrix,
)


def _item_weights(draws: np.ndarray, n_items: int) -> np.ndarray:
    """The per-item path's weights: how often each item was drawn, per replicate."""
    return np.stack([np.bincount(row, minlength=n_items) for row in draws]).astype(float)


def _per_item_replicates(wide: pd.DataFrame, level: str, n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """The bootstrap as it was: one column row per item, one weight per item."""
    codes, categories = encode_labels(wide)
    plan = _Plan(_blocks_from_codes(codes, categories, FAST_STATISTICS, level, None))
    parts: dict[str, list[np.ndarray]] = {name: [] for name in FAST_STATISTICS}
    for draws in resample_indices(len(codes), n_boot, seed):
        for name, values in plan.evaluate(_item_weights(draws, len(codes))).items():
            parts[name].append(values)
    return {name: np.concatenate(v) for name, v in parts.items()}


def _long_ratings(items: int, annotators: int, missing: float, seed: int, k: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, items)
    noisy = np.where(
        rng.random((items, annotators)) < 0.75, truth[:, None], rng.integers(0, k, (items, annotators))
    ).astype(float)
    noisy[rng.random(noisy.shape) < missing] = np.nan
    return pd.DataFrame(
        {
            "item": np.repeat(np.arange(items), annotators),
            "annotator": np.tile(np.arange(annotators), items),
            "field": "f",
            "value": noisy.ravel(),
        }
    ).dropna()


@pytest.mark.parametrize(("n_items", "n_boot"), [(1, 3), (7, 25), (1000, 40), (20_000, 9)])
def test_pattern_weights_are_the_item_weights_summed_by_pattern(n_items: int, n_boot: int) -> None:
    rng = np.random.default_rng(n_items)
    pattern = rng.integers(0, 5, n_items)
    for draws in resample_indices(n_items, n_boot, seed=4):
        got = _pattern_weights(draws, pattern, 5)
        items = _item_weights(draws, n_items)
        by_pattern = np.stack([items[:, pattern == p].sum(axis=1) for p in range(5)], axis=1)
        assert got.dtype == np.float64 and np.array_equal(got, by_pattern)
        assert (got.sum(axis=1) == n_items).all()


def test_items_with_the_same_labels_share_one_pattern() -> None:
    wide = pd.DataFrame([[0, 1, np.nan], [0, 1, np.nan], [np.nan, 1, 0], [0, 1, 1]], dtype=float)
    coded = _Coded.of(wide, None)
    assert len(coded.unique) == 3 and coded.multiplicity.sum() == 4
    assert np.array_equal(coded.unique[coded.pattern], coded.codes, equal_nan=True)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize(
    ("items", "annotators", "missing", "k"), [(1500, 4, 0.15, 3), (400, 8, 0.5, 6), (120, 30, 0.85, 3)]
)
def test_replicates_by_pattern_are_the_replicates_by_item(
    level: str, items: int, annotators: int, missing: float, k: int
) -> None:
    wide = ratings_matrix(_long_ratings(items, annotators, missing, seed=11, k=k), "f")
    _, fast = _replicates(wide, FAST_STATISTICS, 200, 7, level, None)
    slow = _per_item_replicates(wide, level, 200, 7)
    for name in FAST_STATISTICS:
        # pairwise counts are integers: exact; elsewhere fractional columns round differently
        if name in ("pabak", "mean_cohen_kappa"):
            assert np.array_equal(fast[name], slow[name], equal_nan=True), name
        else:
            np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-13, err_msg=name)
        low, high = percentile_interval(fast[name])
        assert (low, high) == pytest.approx(percentile_interval(slow[name]), abs=1e-13)


def test_same_seed_same_report_bit_for_bit() -> None:
    frame = _long_ratings(1500, 4, 0.15, seed=11)
    first = agreement_report(frame, {"f": "ordinal"}, n_boot=300, seed=7)
    again = agreement_report(frame.sample(frac=1.0, random_state=3), {"f": "ordinal"}, n_boot=300, seed=7)
    pd.testing.assert_frame_equal(first, again, check_exact=True)


@pytest.mark.parametrize("kind", ["int", "float", "text", "bool", "float_nan"])
def test_ratings_matrix_is_the_pivot_table(kind: str) -> None:
    rng = np.random.default_rng(len(kind))
    for _ in range(40):
        n = int(rng.integers(1, 60))
        values = {
            "int": rng.integers(0, 4, n),
            "float": rng.random(n),
            "text": rng.choice(["x", "y", None], n),
            "bool": rng.integers(0, 2, n).astype(bool),
            "float_nan": np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 5, n).astype(float)),
        }[kind]
        annotators = rng.choice([3, 1, 2], n) if kind == "float" else rng.choice(["a", "b", "zed", "B"], n)
        frame = pd.DataFrame(
            {"item": rng.integers(0, 15, n), "annotator": annotators, "field": rng.choice(["f", "g"], n)}
        )
        frame["value"] = values
        rows = frame.loc[frame["field"] == "f", ["item", "annotator", "value"]]
        pivot = rows.drop_duplicates(["item", "annotator"], keep="last").pivot(
            index="item", columns="annotator", values="value"
        )
        pd.testing.assert_frame_equal(ratings_matrix(frame, "f"), pivot.sort_index().sort_index(axis=1))


def test_the_usual_levels_normal_quantiles_are_scipys() -> None:
    from scipy.special import ndtri

    from qc.bootstrap import _NORMAL_QUANTILES, normal_quantile

    for ci in (0.90, 0.95, 0.99):
        p = 1.0 - (1.0 - ci) / 2.0
        assert p in _NORMAL_QUANTILES and normal_quantile(p) == float(ndtri(p))
    assert normal_quantile(0.8) == float(ndtri(0.8))


def test_the_report_at_95_percent_imports_no_scipy() -> None:
    import subprocess
    import sys

    script = (
        "import sys, pandas as pd\n"
        "from qc.report import agreement_report\n"
        "frame = pd.DataFrame({'item': [1, 1, 2, 2, 3, 3], 'annotator': ['a', 'b'] * 3, 'field': 'f',"
        " 'value': [0, 0, 1, 0, 1, 1]})\n"
        "agreement_report(frame, {'f': 'nominal'}, n_boot=20)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
