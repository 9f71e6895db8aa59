"""Stratified samples for agreement studies: sizes per stratum, seeds, small strata."""

from __future__ import annotations

import pandas as pd
import pytest

from qc.sampling import MISSING_STRATUM, allocate, stratified_sample


def _items(sizes: dict[str, int]) -> pd.DataFrame:
    rows, next_id = [], 1
    for name, size in sizes.items():
        for _ in range(size):
            rows.append({"item_id": next_id, "error_type": name})
            next_id += 1
    return pd.DataFrame(rows)


def test_allocation_is_proportional_and_sums_to_n() -> None:
    counts = allocate({"a": 50, "b": 30, "c": 20}, 10)
    assert counts == {"a": 5, "b": 3, "c": 2}


def test_every_stratum_gets_one_even_when_its_share_rounds_to_zero() -> None:
    counts = allocate({"big": 96, "rare1": 2, "rare2": 2}, 10)
    assert counts["rare1"] == 1 and counts["rare2"] == 1
    assert counts["big"] == 8


def test_a_small_stratum_gives_all_it_has_and_the_rest_goes_elsewhere() -> None:
    counts = allocate({"big": 10, "tiny": 1}, 10)
    assert counts == {"big": 9, "tiny": 1}
    counts = allocate({"a": 2, "b": 2, "c": 20}, 23)
    assert counts["a"] <= 2 and counts["b"] <= 2 and sum(counts.values()) == 23


def test_fewer_draws_than_strata_go_to_the_largest_strata() -> None:
    counts = allocate({"a": 10, "b": 5, "c": 1}, 2)
    assert counts == {"a": 1, "b": 1, "c": 0}


def test_sample_sizes_per_stratum_follow_the_allocation() -> None:
    items = _items({"circular": 48, "confidence": 48, "multi_solutions": 10})
    drawn = stratified_sample(items, 20, by="error_type", seed=3)
    assert len(drawn) == 20 and drawn["item_id"].is_unique
    per = drawn["stratum"].value_counts().to_dict()
    assert per == allocate({"circular": 48, "confidence": 48, "multi_solutions": 10}, 20)
    # Every drawn item really belongs to the stratum it is listed under.
    truth = items.set_index("item_id")["error_type"]
    assert all(truth[i] == s for i, s in zip(drawn["item_id"], drawn["stratum"], strict=True))


def test_same_seed_same_sample_whatever_the_row_order() -> None:
    items = _items({"a": 30, "b": 20, "c": 5})
    first = stratified_sample(items, 12, by="error_type", seed=7)
    shuffled = items.sample(frac=1.0, random_state=1)
    again = stratified_sample(shuffled, 12, by="error_type", seed=7)
    assert first["item_id"].tolist() == again["item_id"].tolist()
    other = stratified_sample(items, 12, by="error_type", seed=8)
    assert other["item_id"].tolist() != first["item_id"].tolist()


def test_never_more_than_a_stratum_holds() -> None:
    items = _items({"a": 3, "b": 40})
    for n in range(1, 44):
        drawn = stratified_sample(items, n, by="error_type", seed=n)
        assert len(drawn) == n
        assert (drawn["stratum"] == "a").sum() <= 3


def test_the_whole_population_when_n_equals_its_size_and_an_error_beyond() -> None:
    items = _items({"a": 3, "b": 4})
    assert sorted(stratified_sample(items, 7, by="error_type")["item_id"]) == list(range(1, 8))
    with pytest.raises(ValueError, match="only 7"):
        stratified_sample(items, 8, by="error_type")


def test_missing_values_form_their_own_stratum_and_no_field_means_one_stratum() -> None:
    items = pd.DataFrame({"item_id": [1, 2, 3, 4], "final_answer_correct": [True, False, None, True]})
    drawn = stratified_sample(items, 3, by="final_answer_correct", seed=0)
    assert set(drawn["stratum"]) == {"True", "False", MISSING_STRATUM}
    plain = stratified_sample(items, 2, seed=0)
    assert set(plain["stratum"]) == {"all"} and len(plain) == 2
    with pytest.raises(ValueError, match="no 'source' column"):
        stratified_sample(items, 2, by="source")
