"""A solution as a numbered, clickable step list: pure functions from dataset text to safe Markdown.

Each step becomes a `<div class="ee-step ee-pos-N">` around its own safe Markdown, so the page's
script can tell which step was clicked while Gradio's Markdown still renders the math. The
position travels in a class because Gradio's HTML sanitizer drops `data-*` attributes. Dataset
text passes through ui.render.safe_markdown first: it can never close a wrapper or open a tag.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

# Dollar and product handling is shared by every panel; ui.render keeps it, these names stay importable here.
from ui.render import CODE_DOLLAR, LITERAL_DOLLAR, MATH_DOLLAR, safe_markdown, separate_math

__all__ = [
    "ALL_CORRECT",
    "CODE_DOLLAR",
    "LITERAL_DOLLAR",
    "MATH_DOLLAR",
    "choice_options",
    "label_title",
    "parse_choice",
    "question_markdown",
    "reference_markdown",
    "separate_math",
    "step_title",
    "steps_markdown",
    "tidy_step",
]

ALL_CORRECT = -1  # ProcessBench's label for "all steps are correct"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def step_title(position: int) -> str:
    """Positions are 0-based inside stepgate; people count steps from 1."""
    return f"Step {position + 1}"


def label_title(label: int | None) -> str:
    if label is None:
        return "nothing chosen yet"
    return "All steps are correct" if label == ALL_CORRECT else step_title(label)


def choice_options(n_steps: int) -> list[tuple[str, int]]:
    """The radio's choices: "All steps are correct" (-1), then one per step."""
    return [("All steps are correct", ALL_CORRECT)] + [(step_title(i), i) for i in range(n_steps)]


def parse_choice(value: object, n_steps: int) -> int | None:
    """A choice from the browser (radio value or stored draft) as a label, or None when not a valid one."""
    if value is None or isinstance(value, bool) or value == "":
        return None
    try:
        label = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return label if ALL_CORRECT <= label < n_steps else None


def _close_fences(markdown: str) -> str:
    """An unclosed code fence would swallow every later step: close it inside its own step."""
    fences = _FENCE.findall(markdown)
    return markdown + f"\n{fences[-1]}" if len(fences) % 2 else markdown


def _safe(text: str | None) -> str:
    return separate_math(_close_fences(safe_markdown(text)))


def tidy_step(text: str | None, position: int) -> str:
    """Step text as Markdown reads it: the generator's own "Step 3." prefix dropped, indentation undone.

    QwQ solutions indent every line after the first by eight spaces, which Markdown would show as
    a code block; the common indentation of the following lines is removed, relative nesting kept.
    """
    lines = (text or "").replace("\r\n", "\n").split("\n")
    head, rest = lines[0].strip(), textwrap.dedent("\n".join(lines[1:]))
    prefix = re.compile(rf"^(\*\*)?step\s*{position + 1}\s*[.:)]\s*(\*\*)?\s*", re.IGNORECASE)
    return f"{prefix.sub('', head, count=1)}\n{rest}".strip()


def steps_markdown(steps: Sequence[str]) -> str:
    """The solution as clickable blocks, "Step 1" for position 0; empty when there are no steps."""
    return "\n\n".join(
        f'<div class="ee-step ee-pos-{position}" role="button" tabindex="-1" title="Mark as the earliest error">\n'
        f'<div class="ee-step-title">{step_title(position)}</div>\n\n'
        f"{_safe(tidy_step(text, position)) or '*(empty step)*'}\n\n</div>"
        for position, text in enumerate(steps)
    )


def question_markdown(question: str | None) -> str:
    return _safe(question) or "*(no question text)*"


def reference_markdown(
    reference_steps: Sequence[str] | None, reference_solution: str | None, reference_answer: str | None
) -> str:
    """The reference answer and solution, for the annotator to compare with (never clickable)."""
    parts = [f"**Reference answer:** {_safe(reference_answer) or '*none given*'}"]
    if reference_steps:
        parts += [
            f'<div class="ee-ref-step">\n<div class="ee-step-title">Reference step {position + 1}</div>\n\n'
            f"{_safe(tidy_step(text, position))}\n\n</div>"
            for position, text in enumerate(reference_steps)
        ]
    elif reference_solution:
        parts.append(f'<div class="ee-ref-step">\n\n{_safe(reference_solution)}\n\n</div>')
    else:
        parts.append("*This item has no reference solution.*")
    return "\n\n".join(parts)
