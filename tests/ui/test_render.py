"""ui.render: dataset text made safe for every panel, and two step chains compared."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from tests.conftest import PRMBENCH_FILE
from ui.render import (
    CODE_DOLLAR,
    LITERAL_DOLLAR,
    MATH_DOLLAR,
    StepRow,
    align_steps,
    escape_text,
    safe_markdown,
    separate_math,
    step_body,
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
HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) <javascript:alert(4)>"
)


def test_html_and_script_links_in_dataset_text_stay_text() -> None:
    markdown = safe_markdown(HOSTILE)
    assert "<script" not in markdown and "<img" not in markdown and "](" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown and "javascript&#58;" in markdown
    assert escape_text("<b>a_b</b>") == "&lt;b&gt;a\\_b&lt;/b&gt;"


def test_every_panel_reads_prices_products_and_formulas_the_same_way() -> None:
    prices = safe_markdown("Three pencils cost $1.24. Five cost $1.82.")
    assert "$" not in prices and prices.count(LITERAL_DOLLAR) == 2
    assert safe_markdown(r"cost $\$1.24$.") == f"cost ${MATH_DOLLAR}1.24$."
    assert safe_markdown("5*9^1 + 8*9^0 and $a*b$") == r"5\*9^1 + 8\*9^0 and $a*b$"
    assert safe_markdown("$$\\frac12$$ and \\(x\\) and \\[y\\]") == "$$\\frac12$$ and \\(x\\) and \\[y\\]"
    assert safe_markdown("`echo $HOME`") == f"`echo {CODE_DOLLAR}HOME`"
    assert (
        separate_math(separate_math("$x$ costs $5")) == f"$x$ costs {LITERAL_DOLLAR}5"
    )  # applying twice is harmless


def test_an_unclosed_code_fence_ends_with_its_own_text() -> None:
    assert safe_markdown("```python\nx = 1").count("```") == 2


def test_a_step_loses_the_generators_number_and_indentation() -> None:
    text = "Step 12. The problem states:\n\n        - three pencils\n\n        - five pencils\n        "
    assert step_body(text) == "The problem states:\n\n- three pencils\n\n- five pencils"
    assert step_body("**Step 3:** So $x=2$.") == "So $x=2$."


def test_an_inserted_step_stands_alone_and_the_rest_stay_paired() -> None:
    rows = align_steps(FIGURE_13_ORIGINAL, FIGURE_13_MODIFIED)
    assert rows == [StepRow(0, 0), StepRow(None, 1), StepRow(1, 2), StepRow(2, 3), StepRow(3, 4)]
    assert [r.kind for r in rows] == ["paired", "inserted", "paired", "paired", "paired"]


def test_a_removed_step_and_a_rewritten_step_are_shown_beside_what_they_replaced() -> None:
    original = [
        "Let x be the price.",
        "Then 2x = 10.",
        "Completely unrelated sentence about apples.",
        "So x = 5.",
    ]
    modified = ["Let x be the price.", "Then 2x = 12.", "Quantum chromodynamics says otherwise!", "So x = 6."]
    assert align_steps(original, modified) == [StepRow(0, 0), StepRow(1, 1), StepRow(2, 2), StepRow(3, 3)]
    assert align_steps(["a step", "gone step here", "last one"], ["a step", "last one"]) == [
        StepRow(0, 0),
        StepRow(1, None),
        StepRow(2, 1),
    ]


def test_a_moved_step_is_marked_as_moved_where_it_was_and_where_it_is() -> None:
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
    rows = align_steps(original, modified)
    assert StepRow(2, None, moved=0) in rows and StepRow(None, 0, moved=2) in rows
    assert {r.kind for r in rows if r.moved is not None} == {"moved_in", "moved_out"}
    assert [r for r in rows if r.kind in ("inserted", "removed")] == []
    # A step added that says what a kept step says (circular logic, redundancy) repeats it.
    repeated = align_steps(
        ["First we note x = 2.", "Then y = 4."],
        ["First we note x = 2.", "Then y = 4.", "First we note x = 2."],
    )
    assert repeated[-1] == StepRow(None, 2, repeats=0) and repeated[-1].kind == "inserted"


def test_word_diff_marks_only_the_changed_words_and_keeps_formulas_whole() -> None:
    left, right = word_diff(
        "This simplifies to $2p=0.58$. So $p=0.29$.", "This simplifies to $2p=0.58$. So $p=0.58$."
    )
    assert left == "This simplifies to $2p=0.58$. So <del>$p=0.29$</del>."
    assert right == "This simplifies to $2p=0.58$. So <ins>$p=0.58$</ins>."
    _, moved = word_diff("so \\(x = 1\\) holds", "so \\(x = 2\\) holds")
    assert moved == "so <ins>\\(x = 2\\)</ins> holds"


def test_word_diff_keeps_markdown_readable_and_dataset_html_inert() -> None:
    left, right = word_diff(
        "The problem states:\n\n- Three pencils\n\n# Answer\n\n29",
        "The problem states:\n\n- Four pencils\n\n# Final Answer\n\n58",
    )
    assert (
        right
        == "The problem states:\n\n- <ins>Four</ins> pencils\n\n# <ins>Final</ins> Answer\n\n<ins>58</ins>"
    )
    assert "- <del>Three</del> pencils" in left
    left, right = word_diff("<b>bold</b> 5*9 " + HOSTILE, "<b>bolder</b> 5*8 " + HOSTILE + " more")
    assert "<b>" not in left + right and "<script" not in right and "<img" not in right
    assert (
        "&lt;b&gt;<del>bold</del>&lt;/b&gt; 5\\*<del>9</del>" in left
    )  # a product next to a change stays text
    assert right.endswith("<ins>more</ins>")
    whole, _ = word_diff("abc def", "totally different words here now")
    assert whole == "<del>abc def</del>"


def test_every_step_of_the_real_prmbench_items_is_shown_once_in_order() -> None:
    for line in PRMBENCH_FILE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        original, modified = (
            json.loads(s) if isinstance(s, str) else s
            for s in (row["original_process"], row["modified_process"])
        )
        rows = align_steps(original, modified)
        assert [r.original for r in rows if r.original is not None] == list(range(len(original)))
        assert [r.modified for r in rows if r.modified is not None] == list(range(len(modified)))
        assert all(r.original is not None or r.modified is not None for r in rows)


# The item fields that hold dataset text: shown through safe_markdown only (issue 29).
_DATASET_TEXT = {"question", "steps", "rationale", "reference_answer", "options", "answer"}


def test_every_panel_shows_dataset_text_through_the_one_renderer() -> None:
    """escape_text is for names and ids: on dataset text it shows LaTeX raw (its `\\(` is backslashed) and
    lets "$5 and $10" pair as math. A panel that hands an item's text to it would read differently."""
    root = Path(__file__).resolve().parents[2] / "ui"
    found = []
    for path in [*(root / "panels").glob("*.py"), *(root / "kit").glob("*.py"), root / "step_list.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "escape_text":
                fields = {a.attr for arg in node.args for a in ast.walk(arg) if isinstance(a, ast.Attribute)}
                if fields & _DATASET_TEXT:
                    found.append(f"{path.name}:{node.lineno}")
    assert not found
