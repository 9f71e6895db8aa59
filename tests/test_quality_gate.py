"""The quality gate (CRYSTAL's human gate): its rule on hand-made labels, then its use cases on a real store."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tasks import QUALITY_GATE, PayloadError, spec_for
from tasks.quality_gate import CRITERIA, NUMBERS, RULING, failed_criteria, is_dual, parse_steps_text

SPEC = spec_for(QUALITY_GATE)
ALL = {k: True for k in CRITERIA}


@dataclass
class FakeItem:
    external_id: str = "mv-1"
    steps: dict[str, list[str]] = field(default_factory=lambda: {"candidate": ["a", "b", "c"]})
    final_answer_correct: bool | None = None


def accept(**extra):
    return {"verdict": "accept", "criteria": dict(ALL), **extra}


def reject(*failed, reason="step 2 contradicts step 1", **extra):
    return {
        "verdict": "reject",
        "criteria": {k: k not in failed for k in CRITERIA},
        "reason": reason,
        **extra,
    }


def test_criteria_are_the_supplements_four_in_its_order():
    assert list(CRITERIA) == ["c1", "c2", "c3", "c4"]
    assert [c.name for c in CRITERIA.values()] == [
        "Logical soundness",
        "Sequential coherence",
        "Visual grounding",
        "Answer consistency",
    ]


def test_accept_needs_all_four_criteria():
    item = FakeItem()
    assert SPEC.validate(accept(), item)["failed"] == []
    with pytest.raises(PayloadError, match="C3 Visual grounding"):
        SPEC.validate({"verdict": "accept", "criteria": {**ALL, "c3": False}}, item)


def test_reject_names_the_failed_criteria_and_needs_a_reason():
    item = FakeItem()
    clean = SPEC.validate(reject("c1", "c4"), item)
    assert clean["failed"] == ["c1", "c4"] and clean["reason"] == "step 2 contradicts step 1"
    with pytest.raises(PayloadError, match="reason"):
        SPEC.validate(reject("c1", reason="  "), item)
    with pytest.raises(PayloadError, match="uncheck"):
        SPEC.validate({"verdict": "reject", "criteria": dict(ALL), "reason": "x"}, item)


def test_unknown_criterion_or_mark_is_refused():
    item = FakeItem()
    with pytest.raises(PayloadError, match="criteria"):
        SPEC.validate({"verdict": "accept", "criteria": {**ALL, "c5": True}}, item)
    with pytest.raises(PayloadError, match="steps 1 to 3"):
        SPEC.validate(accept(steps={"4": "correct"}), item)
    with pytest.raises(PayloadError, match="not 'correct'"):
        SPEC.validate(accept(steps={"1": "maybe"}), item)


def test_step_marks_refer_to_the_edited_steps():
    item = FakeItem()
    clean = SPEC.validate(accept(edited_steps=["a", "b", "c", " d "], steps={"4": "incorrect"}), item)
    assert clean["edited_steps"] == ["a", "b", "c", "d"] and clean["steps"] == {"4": "incorrect"}


def test_an_edit_equal_to_the_items_steps_is_no_edit():
    assert "edited_steps" not in SPEC.validate(accept(edited_steps=["a", "b", "c"]), FakeItem())
    with pytest.raises(PayloadError, match="at least one step"):
        SPEC.validate(accept(edited_steps=["", "  "]), FakeItem())


def test_one_step_per_line_parsing_trims_and_drops_empty_lines():
    assert parse_steps_text(" one \n\n two\r\n  \nthree ") == ["one", "two", "three"]


def test_failed_criteria_keep_the_supplements_order():
    assert failed_criteria({"c4": False, "c1": False, "c2": True, "c3": True}) == ["c1", "c4"]


def test_dual_draw_is_stable_and_near_its_share():
    ids = [f"item-{i}" for i in range(2000)]
    drawn = [i for i in ids if is_dual(i, 10, seed=0)]
    assert drawn == [i for i in ids if is_dual(i, 10, seed=0)]
    assert 160 <= len(drawn) <= 240
    assert drawn != [i for i in ids if is_dual(i, 10, seed=1)]
    assert not any(is_dual(i, 0) for i in ids) and all(is_dual(i, 100) for i in ids)


def test_settings_defaults():
    assert NUMBERS["dual_percent"].default == 10
    assert NUMBERS["cluster_threshold"].default == 0.45


def _decide(labels, settings=None, item=None, target=1):
    return SPEC.decide(labels, target, settings or {"dual_percent": 0}, item or FakeItem())


def test_one_annotator_decides_a_single_item():
    item = FakeItem()
    labels = [SPEC.validate(accept(), item)]
    d = _decide(labels)
    assert (d.status, d.target, d.decision["verdict"]) == ("accepted", 1, "accept")
    d = _decide([SPEC.validate(reject("c2", reason="jumps"), item)])
    assert d.status == "rejected" and d.decision["failed"] == ["c2"] and d.decision["reasons"] == ["jumps"]


def test_a_dual_item_waits_for_its_second_annotator():
    item = FakeItem()
    one = [SPEC.validate(accept(), item)]
    d = _decide(one, {"dual_percent": 100})
    assert (d.status, d.target) == ("open", 2)
    d = _decide(one * 2, {"dual_percent": 100})
    assert d.status == "accepted" and d.decision["dual"] is True


def test_two_annotators_who_differ_in_verdict_or_steps_dispute():
    item = FakeItem()
    a = SPEC.validate(accept(), item)
    b = SPEC.validate(reject("c3"), item)
    c = SPEC.validate(accept(edited_steps=["a", "b"]), item)
    assert _decide([a, b], {"dual_percent": 100}).decision["differ"] == ["verdict"]
    assert _decide([a, c], {"dual_percent": 100}).decision["differ"] == ["steps"]
    same = _decide([c, dict(c)], {"dual_percent": 100})
    assert same.status == "accepted" and same.decision["edited_steps"] == ["a", "b"]


def test_the_adjudicators_ruling_is_final():
    item = FakeItem()
    a = SPEC.validate(accept(), item)
    b = SPEC.validate(reject("c3"), item)
    ruling = {RULING: "reject", "criteria": {**ALL, "c4": False}, "failed": ["c4"], "reason": "wrong answer"}
    d = _decide([a, b, ruling], {"dual_percent": 100})
    assert d.status == "rejected" and d.decision["adjudicated"] and d.decision["failed"] == ["c4"]
