"""The step-review rule under each setting PRMBench-V leaves open (docs/PROTOCOLS.md A4)."""

from __future__ import annotations

import pytest

from tasks.step_review import SPEC

RETAIN = {"original": "correct", "modification": "reasonable", "difficulty": "easy"}
BAD_ORIGINAL = {"original": "incorrect", "modification": "reasonable", "difficulty": "hard"}
UNREASONABLE = {"original": "correct", "modification": "unreasonable"}


class _Item:
    def __init__(self) -> None:
        self.steps = {"original": ["a"], "modified": ["b"]}
        self.final_answer_correct = None


def decide(labels: list[dict], **settings: str):
    return SPEC.decide(labels, len(labels), settings, _Item())


def test_the_default_keeps_an_item_whose_original_is_correct_and_modification_reasonable() -> None:
    assert decide([RETAIN]).status == "complete"
    assert decide([BAD_ORIGINAL]).status == "rejected"
    assert decide([UNREASONABLE]).status == "rejected"


def test_the_modification_alone_can_retain_an_item_when_the_dataset_says_so() -> None:
    assert decide([BAD_ORIGINAL], retain_rule="reasonable").status == "complete"
    assert decide([UNREASONABLE], retain_rule="reasonable").status == "rejected"


@pytest.mark.parametrize(
    ("policy", "labels", "status"),
    [
        ("majority", [RETAIN, RETAIN, UNREASONABLE], "complete"),
        ("majority", [RETAIN, UNREASONABLE], "disputed"),  # a tie goes to an adjudicator
        ("unanimous", [RETAIN, RETAIN, UNREASONABLE], "rejected"),
        ("unanimous", [RETAIN, UNREASONABLE], "rejected"),
        ("unanimous", [RETAIN, RETAIN], "complete"),
        ("adjudicate", [RETAIN, RETAIN, UNREASONABLE], "disputed"),
        ("adjudicate", [RETAIN, RETAIN], "complete"),
    ],
)
def test_several_annotators_are_combined_by_the_disagreement_policy(policy, labels, status) -> None:
    assert decide(labels, disagreement_policy=policy).status == status


def test_an_adjudicators_ruling_settles_a_dispute_under_every_policy() -> None:
    ruling = {"adjudication": "keep"}
    assert decide([RETAIN, UNREASONABLE], disagreement_policy="adjudicate").status == "disputed"
    found = SPEC.decide([RETAIN, UNREASONABLE, ruling], 2, {"disagreement_policy": "adjudicate"}, _Item())
    assert found.status == "complete" and found.decision is not None and found.decision["adjudicated"]


def test_difficulty_is_the_majority_of_those_given_and_a_tie_goes_to_the_harder_level() -> None:
    medium = {**RETAIN, "difficulty": "medium"}
    hard = {**RETAIN, "difficulty": "hard"}
    assert decide([RETAIN, medium, medium]).decision["difficulty"] == "medium"
    assert decide([RETAIN, hard]).decision["difficulty"] == "hard"
    assert decide([RETAIN, UNREASONABLE]).decision["difficulty"] == "easy"  # UNREASONABLE gave none


def test_a_numeric_task_setting_takes_numbers_or_their_text_within_its_range() -> None:
    from tasks.base import NumberSetting

    share = NumberSetting(default=10, low=0, high=100)
    assert share.check("dual_percent", "25") == 25
    assert share.check("dual_percent", 0) == 0
    threshold = NumberSetting(default=0.45, low=0, high=1, whole=False)
    assert threshold.check("cluster_threshold", "0.6") == 0.6
    for bad in ("2.5", 101, -1, "many", True, float("nan")):
        with pytest.raises(ValueError, match=r"dual_percent.*whole number from 0 to 100"):
            share.check("dual_percent", bad)
    with pytest.raises(ValueError, match="a number from 0 to 1"):
        threshold.check("cluster_threshold", 1.5)
    assert NumberSetting(default=0, low=0, high=None).accepts() == "a whole number of at least 0"
