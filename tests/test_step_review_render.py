"""What the Step review panel shows, as pure functions: alignment, diff, escaping, hints."""

from __future__ import annotations

import json
import re

from tests.conftest import PRMBENCH_FILE
from ui.panels.step_review_render import (
    StepRow,
    align_steps,
    answer_markdown,
    difficulty_hint,
    error_description,
    info_markdown,
    progress_markdown,
    question_markdown,
    sample_progress,
    steps_html,
    word_diff,
)

# PRMBench-V's Figure 13: a domain-inconsistency step inserted as step 2; the originals carry stray quotes.
FIGURE_13_ORIGINAL = [
    'Analyze each geometric solid to determine their views. The cube (1) has identical side views."',
    'The cylinder (2) has two identical circular views when viewed from the top or bottom."',
    'Consider the cone (3). It has a single circular view from the top."',
    "The option that pairs cylinder and cone is B. 2,3.",
]
FIGURE_13_MODIFIED = [
    "Analyze each geometric solid to determine their views. The cube (1) has identical side views.",
    "According to physics, forces applied in orthogonal directions usually result in different observable "
    "properties.",
    "The cylinder (2) has two identical circular views when viewed from the top or bottom.",
    "Consider the cone (3). It has a single circular view from the top.",
    "The option that pairs cylinder and cone is B. 2,3.",
]


def test_an_inserted_step_stands_alone_and_the_rest_stay_paired() -> None:
    rows = align_steps(FIGURE_13_ORIGINAL, FIGURE_13_MODIFIED)
    assert rows == [StepRow(0, 0), StepRow(None, 1), StepRow(1, 2), StepRow(2, 3), StepRow(3, 4)]
    assert [r.kind for r in rows] == ["paired", "inserted", "paired", "paired", "paired"]


def test_a_removed_step_and_a_rewritten_step_are_shown_beside_what_they_replaced() -> None:
    original = ["Let x be the price.", "Then 2x = 10.", "Completely unrelated sentence about apples.", "So x = 5."]
    modified = ["Let x be the price.", "Then 2x = 12.", "Quantum chromodynamics says otherwise!", "So x = 6."]
    rows = align_steps(original, modified)
    assert rows == [StepRow(0, 0), StepRow(1, 1), StepRow(2, 2), StepRow(3, 3)]
    assert align_steps(["a step", "gone step here", "last one"], ["a step", "last one"]) == [
        StepRow(0, 0), StepRow(1, None), StepRow(2, 1),
    ]  # fmt: skip


def test_word_diff_marks_only_the_changed_words_and_keeps_formulas_whole() -> None:
    left, right = word_diff("This simplifies to $2p=0.58$. So $p=0.29$.", "This simplifies to $2p=0.58$. So $p=0.58$.")
    assert '<del class="sr-del">$p=0.29$</del>' in left
    assert '<ins class="sr-ins">$p=0.58$</ins>' in right
    assert "This simplifies to $2p=0.58$. So " in right  # unchanged text, formula intact, not highlighted
    assert right.count("<ins") == 1


def test_step_text_cannot_inject_html() -> None:
    evil = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"
    html = steps_html(["plain step", evil], ["plain step", evil + " changed"], [1], [1])
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    left, right = word_diff("<b>bold</b>", "<b>bolder</b>")
    assert "<b>" not in left + right


def test_steps_are_numbered_from_one_with_error_and_modified_badges() -> None:
    html = steps_html(FIGURE_13_ORIGINAL, FIGURE_13_MODIFIED, error_steps=[1], modified_steps=[1])
    cells = re.findall(r'<div class="([^"]*)"><div class="sr-num">Step (\d+)(.*?)</div>'
                       r'<div class="sr-text">(.*?)</div></div>', html)  # fmt: skip
    assert [c[1] for c in cells] == ["1", "1", "2", "2", "3", "3", "4", "4", "5"]  # both sides, counted from 1
    (inserted,) = [c for c in cells if "According to physics" in c[3]]
    classes, number, heading, _ = inserted
    assert number == "2" and "sr-error" in classes and "sr-changed" in classes
    assert "error step" in heading and "modified" in heading
    assert [c[1] for c in cells if "sr-error" in c[0]] == ["2"]
    assert "(no original step here)" in html
    assert "Original steps (4)" in html and "Modified steps (5)" in html
    assert "\n\n" not in html  # a blank line would end the HTML block inside Markdown


def test_error_descriptions_cover_prmbench_types_and_prmbench_v_names() -> None:
    assert error_description("domain_inconsistency").startswith("Domain inconsistency is a special type")
    assert error_description("Domain Consistency") == error_description("domain_inconsistency")
    assert error_description("redundancy") == error_description("redundency")
    assert error_description("no-such-type") is None
    text = info_markdown("mmk12_test_<b>", "MMK12", "domain_inconsistency", 1)
    assert "&lt;b&gt;" in text and "<b>" not in text
    assert "none known" in info_markdown("x", None, "odd", 1)


def test_difficulty_hint_follows_the_three_step_rule() -> None:
    assert difficulty_hint([1, 2, 3]).startswith("3 error steps: Easy")
    assert difficulty_hint([0, 1, 2, 3]).startswith("4 error steps: Medium")
    assert difficulty_hint([4]).startswith("1 error step: Easy")
    assert "Hard" in difficulty_hint([])


def test_question_shows_the_original_only_when_its_wording_changed() -> None:
    same = {"original_question": "Cost $1.24?", "modified_question": "Cost  $1.24?", "question": "Cost $\\$1.24$?"}
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


def test_every_step_of_the_real_prmbench_items_is_shown_once_in_order() -> None:
    for line in PRMBENCH_FILE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        original, modified = (json.loads(s) if isinstance(s, str) else s
                              for s in (row["original_process"], row["modified_process"]))  # fmt: skip
        rows = align_steps(original, modified)
        assert [r.original for r in rows if r.original is not None] == list(range(len(original)))
        assert [r.modified for r in rows if r.modified is not None] == list(range(len(modified)))
        assert all(r.original is not None or r.modified is not None for r in rows)
