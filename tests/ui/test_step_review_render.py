"""What the Step review panel shows, as pure functions: the side-by-side steps, sample info, hints."""

from __future__ import annotations

import re

from tests.ui.test_render import FIGURE_13_MODIFIED, FIGURE_13_ORIGINAL, HOSTILE
from ui.panels.step_review_render import (
    ERROR_DESCRIPTIONS,
    ERROR_TYPES,
    INSTRUCTIONS,
    KEYS,
    answer_markdown,
    difficulty_hint,
    error_description,
    error_type_info,
    info_markdown,
    progress_markdown,
    question_markdown,
    sample_progress,
    steps_html,
)

CELL = re.compile(
    r'<div class="sr-cell([^"]*)"><div class="sr-num">Step (\d+)(.*?)</div>\n\n(.*?)\n\n</div>', re.DOTALL
)


def cells(html: str) -> list[tuple[str, str, str, str]]:
    """(classes, number, badges, Markdown body) of each numbered cell, left to right, top to bottom."""
    return CELL.findall(html)


def test_steps_are_numbered_from_one_with_error_modified_added_and_shifted_marks() -> None:
    html = steps_html(FIGURE_13_ORIGINAL, FIGURE_13_MODIFIED, error_steps=[1], modified_steps=[1])
    found = cells(html)
    assert [c[1] for c in found] == [
        "1",
        "1",
        "2",
        "2",
        "3",
        "3",
        "4",
        "4",
        "5",
    ]  # both sides, counted from 1
    (inserted,) = [c for c in found if "According to physics" in c[3]]
    classes, number, badges, _ = inserted
    assert number == "2" and "sr-error" in classes and "sr-inserted" in classes
    assert "error step" in badges and "modified" in badges and "added" in badges
    assert [c[1] for c in found if "sr-error" in c[0]] == ["2"]
    # The steps after the inserted one kept their text, but their number shifted: said on the right.
    assert [re.findall(r"was Step \d", c[2]) for c in found[3:]] == [
        [],
        ["was Step 2"],
        [],
        ["was Step 3"],
        [],
        ["was Step 4"],
    ]
    assert "(no original step here)" in html
    assert "Original steps (4)" in html and "Modified steps (5)" in html


def test_a_moved_step_is_marked_on_both_sides_with_where_it_went() -> None:
    original = [
        "Let x be the price of a pencil.",
        "Five pencils cost 1.82.",
        "Three pencils cost 1.24.",
        "So x = 29.",
    ]
    modified = [
        "Three pencils cost 1.24.",
        "Let x be the price of a pencil.",
        "Five pencils cost 1.82.",
        "So x = 29.",
    ]
    html = steps_html(original, modified, [], [])
    moved = [c for c in cells(html) if "sr-moved" in c[0]]
    assert [(c[1], re.sub("<[^>]+>", "", c[2])) for c in moved] == [
        ("1", "moved from Step 3"),
        ("3", "moved to Step 1 ↑"),
    ]
    assert "↓ original Step 3 moved here" in html and "↑ now Step 1 of the modified steps" in html
    assert "removed" not in re.sub(
        r"<del>removed</del>", "", html
    )  # not shown as a removal plus an insertion


def test_steps_render_as_markdown_with_formulas_and_changed_words_marked() -> None:
    original = [
        "Step 1. The problem states:\n\n        - three pencils cost $1.24\n\n        # Answer\n\n        29"
    ]
    modified = [
        "Step 1. The problem states:\n\n        - four pencils cost $1.24\n\n        # Answer\n\n        58"
    ]
    (left, right) = cells(steps_html(original, modified, [0], [0]))
    assert left[3].startswith(
        "The problem states:\n\n- <del>three</del> pencils cost <span"
    )  # no "Step 1." twice
    assert "# Answer\n\n<ins>58</ins>" in right[3] and "sr-changed" in right[0]


def test_step_text_cannot_inject_html() -> None:
    html = steps_html(["plain step", HOSTILE], ["plain step", HOSTILE + " changed", "</div><div>"], [1], [1])
    assert "<script" not in html and "<img" not in html and "javascript:" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert html.count("<div") == html.count("</div>")  # dataset text cannot close or open a cell


def test_error_descriptions_cover_prmbench_types_and_prmbench_v_names() -> None:
    assert error_description("domain_inconsistency").startswith("Domain inconsistency is a special type")
    assert error_description("Domain Consistency") == error_description("domain_inconsistency")
    assert error_description("redundancy") == error_description("redundency")
    assert error_description("no-such-type") is None
    text = info_markdown("mmk12_test_<b>", "MMK12", "domain_inconsistency", 1)
    assert "&lt;b&gt;" in text and "<b>" not in text
    assert "none known" in info_markdown("x", None, "odd", 1)


# PRMBench-V's nine types in the order of its results tables (000 l.70), and the data key of each.
PAPER_TYPES = [
    ("Non-Redundancy", "NR.", "redundency"),
    ("Non-Circular Logic", "NCL.", "circular"),
    ("Empirical Soundness", "ES.", "counterfactual"),
    ("Step Consistency", "SC.", "step_contradiction"),
    ("Domain Consistency", "DC.", "domain_inconsistency"),
    ("Confidence Invariance", "CI.", "confidence"),
    ("Prerequisite Sensitivity", "PS.", "missing_condition"),
    ("Deception Resistance", "DR.", "deception"),
    ("Visual Perception", "VP.", "visual_perception"),
]


def test_the_nine_error_types_are_prmbench_v_s_with_its_names_and_abbreviations_in_its_order() -> None:
    nine = [t for t in ERROR_TYPES.values() if t.in_prmbench_v]
    assert [(t.name, t.abbr, t.key) for t in nine] == PAPER_TYPES
    assert all(t.catch and error_description(t.key) for t in ERROR_TYPES.values())
    assert set(ERROR_DESCRIPTIONS) == set(ERROR_TYPES)
    # PRMBench's ninth type is kept for PRMBench data, but never counted among PRMBench-V's nine.
    (ms,) = [t for t in ERROR_TYPES.values() if not t.in_prmbench_v]
    assert (ms.name, ms.abbr, ms.key) == ("Multi-Solution Consistency", "MS.", "multi_solutions")
    # What the judge must catch is in the paper's words (000 l.107-117).
    assert "logically superfluous" in ERROR_TYPES["redundency"].catch
    assert "S_n relies on step S_{n+k}" in ERROR_TYPES["circular"].catch
    assert "overconfident unsupported claims" in ERROR_TYPES["confidence"].catch
    assert (
        "visual misperceptions arising within reasoning processes" in ERROR_TYPES["visual_perception"].catch
    )
    # The paper prints DC's generation text (l.728) and NCL's detection text (l.974); VP has none, and says so.
    assert error_description("domain_inconsistency").endswith("not valid within the current reasoning chain.")
    assert "where S, A, and B represent individual reasoning steps" in error_description("circular")
    assert "Written for stepgate" in error_description("visual_perception")


def test_classification_values_map_to_the_paper_types_in_any_known_spelling() -> None:
    for name, abbr, key in PAPER_TYPES:
        for spelling in (key, name, name.upper(), abbr, abbr.lower().rstrip("."), f"  {key}  "):
            found = error_type_info(spelling)
            assert found is not None and found.key == key, spelling
    for spelling in (
        "deception_resistance",
        "Prerequisite-Sensitivity",
        "redundancy",
        "visual",
        "Non Circular Logic",
    ):
        assert error_type_info(spelling) is not None, spelling
    assert error_type_info("multi_solution").key == error_type_info("MS.").key == "multi_solutions"
    for unknown in ("one_question_multi_answers", "no-such-type", "", "   ", None):
        assert error_type_info(unknown) is None and error_description(unknown) is None


def test_sample_information_names_the_type_as_the_paper_does_and_what_to_catch() -> None:
    text = info_markdown("mmk12_test_domain_inconsistency_0", "MMK12", "domain_inconsistency", 1)
    assert "**Error type** Domain Consistency (DC.) · data: domain\\_inconsistency" in text
    assert "**What PRMBench-V asks the judge to catch** “domain-specific rules”" in text
    assert "**Error description** Domain inconsistency is a special type of counterfactual." in text
    vp = info_markdown("x", None, "Visual Perception", 1)
    assert "Visual Perception (VP.)" in vp and "visual misperceptions" in vp
    # A PRMBench type that PRMBench-V drops is shown as PRMBench's, never as one of PRMBench-V's nine.
    ms = info_markdown("7:multi_solutions", "PRMBench", "multi_solutions", 1)
    assert "Multi-Solution Consistency (MS.)" in ms
    assert "PRMBench's type, not one of PRMBench-V's nine error types" in ms
    assert "**What PRMBench (not PRMBench-V) asks the judge to catch**" in ms
    assert "What PRMBench-V asks" not in ms
    odd = info_markdown("x", None, "one_question_multi_answers", 1)
    assert "(not one of PRMBench-V's error types)" in odd and "to catch" not in odd
    assert "none known" in odd
    # The data's value is dataset text: escaped, whether or not it names a known type.
    hostile = info_markdown("x", None, "<img src=x onerror=alert(1)>", 1)
    assert "<img" not in hostile and "&lt;img" in hostile
    assert "**Error type** not given ·" in info_markdown("x", None, "  ", 1)


def test_instructions_give_the_criteria_of_the_tool_and_of_a2_in_the_paper_s_order() -> None:
    tool_words = [  # Figure 13 (000 l.695-709), verbatim, in its order
        "Please carefully read the original steps and modified steps, and evaluate them:",
        "**Original Step Quality Assessment**",
        "**Correct**: No calculation errors, logical reasoning is basically sound, reasoning process is "
        "consistent with final result.",
        "**Incorrect**: Contains calculation errors, logical conflicts, or reasoning process is inconsistent "
        "with result.",
        "**Modified Step Assessment**",
        "**Reasonable**: Referring to modification rationale and error steps, the step modification is "
        "reasonable and matches the error description.",
        "**Unreasonable**: Modification is unreasonable, modification does not match error description.",
        "please select the difficulty level of this step (Easy/Medium/Hard)",
        "**Easy**: The process clearly indicates this step has errors, and total error steps ≤ 3 (at most 3)",
        "**Medium**: The process clearly indicates this step has errors, and total error steps > 3 "
        "(more than 3)",
        "**Hard**: Does not clearly indicate this step has errors",
        "**Reading the steps**",
        KEYS,
    ]
    at = [INSTRUCTIONS.find(words) for words in tool_words]
    assert -1 not in at and at == sorted(at), dict(zip(tool_words, at, strict=True))
    # A.2's checklist for Reasonable, "seamlessly integrated" included, sits under the modified assessment.
    checklist = [
        "genuinely incorrect",
        "at the listed error steps",
        "correctly matches the intended error type",
        "appropriately and seamlessly integrated into the flawed reasoning flow",
    ]
    where = [INSTRUCTIONS.find(words) for words in checklist]
    assert -1 not in where and where == sorted(where)
    assert at[6] < where[0] and where[-1] < at[7]
    assert "correct and logically sound" in INSTRUCTIONS[at[1] : at[2]]
    # The nine types are listed with their names and abbreviations; PRMBench's multi-solution type is not.
    for name, abbr, _ in PAPER_TYPES:
        assert f"**{name} ({abbr})**" in INSTRUCTIONS
    assert "Multi-Solution" not in INSTRUCTIONS and "MS." not in INSTRUCTIONS
    assert INSTRUCTIONS.rstrip().endswith(KEYS + ".")


def test_the_sample_says_how_many_blind_annotators_label_it_and_nothing_more() -> None:
    assert "**Annotators** 1 (you)" in info_markdown("x", None, None, 1, 1)
    assert "**Annotators** you are 1 of 2, blind to each other" in info_markdown("x", None, None, 1, 2)


def test_difficulty_shows_the_rule_and_suggests_from_the_error_step_count() -> None:
    assert difficulty_hint([1]).startswith(
        "Easy: clear, ≤ 3 error steps · Medium: clear, > 3 · Hard: unclear."
    )
    assert difficulty_hint([1, 2, 3]).endswith("Suggested (3 error steps): Easy, Hard if unclear.")
    assert difficulty_hint([0, 1, 2, 3]).endswith("Suggested (4 error steps): Medium, Hard if unclear.")
    assert difficulty_hint([4]).endswith("Suggested (1 error step): Easy, Hard if unclear.")
    assert difficulty_hint([]).endswith("No error steps listed: Hard if no error is clear.")
    assert difficulty_hint([4], "when_retained").endswith("Hard if unclear. Needed if retained.")


def test_question_shows_the_original_only_when_its_wording_changed() -> None:
    same = {
        "original_question": "Cost $1.24?",
        "modified_question": "Cost  $1.24?",
        "question": "Cost $\\$1.24$?",
    }
    assert "Original question" not in question_markdown("Cost $\\$1.24$?", same)
    changed = {"original_question": "If x = 2, find y.", "modified_question": "Find y."}
    text = question_markdown("Find y.", changed)
    assert "modified for this error type" in text and "If x = 2, find y." in text
    assert "&lt;script&gt;" in question_markdown("<script>x</script>", None)


def test_answer_and_progress_lines_count_from_one() -> None:
    text = answer_markdown("B", [1, 4], [1], {"error_steps": [9]})
    assert "(in the modified steps): 2, 5" in text and "**Modified steps**: 2" in text and "9" in text
    assert "not given" in answer_markdown(None, [], [])
    line = progress_markdown({"total": 394, "settled": 4, "mine": 2}, 5)
    assert "Sample 5 / 394" in line and "4/394 (1.0%)" in line and "you labelled 2" in line
    assert sample_progress(2, "new") == "Current sample: 2/3 assessments (66%) · not saved yet"
    assert sample_progress(3, "saved").endswith("saved")
    assert sample_progress(3, "saved", dirty=True).endswith("not saved yet")
