"""What the Step review panel shows, as pure functions of an item: tested without a browser.

The side-by-side view pairs each original step with the modified step it became (PRMBench's
modifications insert, drop and rewrite steps, so numbers shift) and marks the changed words.
Every piece of dataset text is HTML-escaped before it is wrapped in the few tags made here;
math spans are diffed as whole tokens so a highlight never splits a formula KaTeX must read.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ui.render import escape_text, safe_markdown

__all__ = [
    "ERROR_DESCRIPTIONS",
    "INSTRUCTIONS",
    "StepRow",
    "align_steps",
    "answer_markdown",
    "difficulty_hint",
    "error_description",
    "info_markdown",
    "progress_markdown",
    "question_markdown",
    "sample_progress",
    "steps_html",
    "word_diff",
]

# The error types as PRMBench's generation prompts define them (PRMBench, Apache-2.0); the
# PRMBench-V tool shows the same text under "Error Description" (its Figure 13).
ERROR_DESCRIPTIONS: dict[str, str] = {
    "redundency": (
        "Redundancy refers to a process that is not the most concise or efficient, as it includes one or more "
        "redundant steps that can be removed without affecting the correctness of the overall solution path."
    ),
    "circular": (
        "Circular logic is a specific form of redundancy, characterized by a reasoning chain that starts at a "
        "step S, progresses through a sequence of steps, and ultimately loops back to S (S → A → B → S)."
    ),
    "counterfactual": (
        "A counterfactual step refers to a statement within a reasoning chain that contradicts established "
        "ground truth. Such contradictions can arise from relying on outdated theories, omitting critical "
        "constraints in a theory, or incorporating erroneous assumptions."
    ),
    "step_contradiction": (
        "Step contradiction refers to a conflict between a specific step and other steps within a reasoning "
        "path: two steps S_i and S_j (i ≠ j) of the same path contradict each other."
    ),
    "domain_inconsistency": (
        "Domain inconsistency is a special type of counterfactual. It refers to a step within the reasoning "
        "chain that uses a statement or theory valid in other domains or cases but is not valid within the "
        "current reasoning chain."
    ),
    "confidence": (
        "Confident hallucination is a special type of counterfactual. It refers to a statement within the "
        "reasoning chain that contradicts established ground truth and is presented with an overly confident "
        "tone: an incorrect statement stated with unwarranted certainty."
    ),
    "missing_condition": (
        "Missing condition or prerequisite refers to a flaw in the reasoning chain where critical premises, "
        "assumptions, or necessary conditions are absent. This omission results in logical gaps, incomplete "
        "reasoning, or biased conclusions."
    ),
    "deception": (
        "Deception or traps refer to statements that appear to be correct or align with ground truth but are "
        "subtly altered to introduce inaccuracies while maintaining the illusion of correctness."
    ),
    "multi_solutions": (
        "Multi-solution consistency: the modified process solves the problem by a different but valid path. "
        "It should contain no error; a reasonable modification keeps every step correct."
    ),
}
# Other spellings of the same types (PRMBench-V's category names, the corrected spelling).
_ALIASES = {
    "redundancy": "redundency", "non_redundancy": "redundency", "circular_logic": "circular",
    "non_circular_logic": "circular", "empirical_soundness": "counterfactual",
    "step_consistency": "step_contradiction", "domain_consistency": "domain_inconsistency",
    "confidence_invariance": "confidence", "prerequisite_sensitivity": "missing_condition",
    "deception_resistance": "deception", "multi_solution": "multi_solutions",
}  # fmt: skip

INSTRUCTIONS = """\
Please read the original steps and the modified steps carefully, and evaluate them.

**Original step quality**
- **Correct**: no calculation errors, the logic is basically sound, the reasoning is consistent with the final result.
- **Incorrect**: contains calculation errors or logical conflicts, or the reasoning is inconsistent with the result.

**Modified step quality**
- **Reasonable**: judged against the modification rationale and the error steps, the modification is reasonable and matches the error description.
- **Unreasonable**: the modification is unreasonable or does not match the error description.

**Difficulty** of the modified steps
- **Easy**: the process clearly shows that the step is wrong, and there are at most 3 error steps.
- **Medium**: the process clearly shows that the step is wrong, and there are more than 3 error steps.
- **Hard**: the process does not clearly show that the step is wrong.

**Keys** (when no text box has the cursor): `C` / `I` original correct / incorrect · `R` / `U` reasonable /
unreasonable · `E` / `M` / `H` difficulty · `S` or `Ctrl+Enter` save · `N` next · `P` previous · `K` skip ·
`/` jump box, `Esc` leaves a text box.
"""

_SIMILAR = 0.45  # two steps this similar (difflib ratio) are one step, edited; below, different steps
_WORD_DIFF_FLOOR = 0.3  # below this, marking single words is noise: the whole step is marked as rewritten
_TOKEN = re.compile(
    r"\$\$.+?\$\$|\$[^$\n]+?\$|\\\(.+?\\\)|\\\[.+?\\\]|\s+|\w+|[^\w\s]", re.DOTALL
)  # math spans first, so that a formula is one token


def error_description(error_type: str | None) -> str | None:
    if not error_type:
        return None
    key = re.sub(r"[\s-]+", "_", error_type.strip().lower())
    return ERROR_DESCRIPTIONS.get(_ALIASES.get(key, key))


def _norm(step: str) -> str:
    """Steps compare without layout: PRMBench copies differ in spacing and stray quotes."""
    return " ".join(step.split()).strip("\"' ")


def _words(step: str) -> tuple[str, ...]:
    """A step as the words and formulas it says, for comparing steps (layout and case ignored)."""
    return tuple(t for t in _TOKEN.findall(_norm(step).lower()) if not t.isspace())


def _similarity(a: tuple[str, ...], bag_a: Counter, b: tuple[str, ...], bag_b: Counter) -> float:
    """Word-level difflib ratio; a cheap bag-of-words bound first, since most pairs are unrelated."""
    if a == b:
        return 1.0
    total = len(a) + len(b)
    if not total or 2 * sum((bag_a & bag_b).values()) / total < _SIMILAR:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass(frozen=True)
class StepRow:
    """One row of the side-by-side view: an original step, the modified step it became, or one alone."""

    original: int | None  # 0-based position in the original steps
    modified: int | None  # 0-based position in the modified steps

    @property
    def kind(self) -> str:
        if self.original is None:
            return "inserted"
        if self.modified is None:
            return "removed"
        return "paired"


def align_steps(original: Sequence[str], modified: Sequence[str]) -> list[StepRow]:
    """Pair the steps that stayed (edited or not) in order, maximising total similarity.

    Unchanged steps anchor the alignment first (most of a PRMBench modification is copied); only
    the stretches between them are compared step by step. Steps left over between two pairs share
    rows (a rewrite shows beside what it replaced); extra ones stand alone as inserted or removed.
    """
    a, b = [_words(s) for s in original], [_words(s) for s in modified]
    rows: list[StepRow] = []
    i = j = 0
    for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        rows += _align_stretch(a, b, range(i, block.a), range(j, block.b))
        rows += [StepRow(block.a + k, block.b + k) for k in range(block.size)]
        i, j = block.a + block.size, block.b + block.size
    return rows


def _align_stretch(
    a: list[tuple[str, ...]], b: list[tuple[str, ...]], rows_a: range, rows_b: range
) -> list[StepRow]:
    """Needleman-Wunsch over one stretch without unchanged steps: pairs only steps similar enough."""
    n, m = len(rows_a), len(rows_b)
    bags_a, bags_b = [Counter(a[x]) for x in rows_a], [Counter(b[y]) for y in rows_b]
    sim = [
        [_similarity(a[rows_a[x]], bags_a[x], b[rows_b[y]], bags_b[y]) for y in range(m)] for x in range(n)
    ]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for x in range(n - 1, -1, -1):
        for y in range(m - 1, -1, -1):
            take = best[x + 1][y + 1] + sim[x][y] if sim[x][y] >= _SIMILAR else -1.0
            best[x][y] = max(take, best[x + 1][y], best[x][y + 1])
    rows: list[StepRow] = []
    gap_a: list[int] = []
    gap_b: list[int] = []

    def flush() -> None:
        for k in range(max(len(gap_a), len(gap_b))):
            rows.append(StepRow(gap_a[k] if k < len(gap_a) else None, gap_b[k] if k < len(gap_b) else None))
        gap_a.clear()
        gap_b.clear()

    x = y = 0
    while x < n or y < m:
        if x < n and y < m and sim[x][y] >= _SIMILAR and best[x][y] == best[x + 1][y + 1] + sim[x][y]:
            flush()
            rows.append(StepRow(rows_a[x], rows_b[y]))
            x, y = x + 1, y + 1
        elif x < n and (y == m or best[x][y] == best[x + 1][y]):
            gap_a.append(rows_a[x])
            x += 1
        else:
            gap_b.append(rows_b[y])
            y += 1
    flush()
    return rows


def _html_text(text: str) -> str:
    # A blank line would end the HTML block in Markdown, so line breaks become <br>.
    return html.escape(text, quote=True).replace("\r\n", "\n").replace("\n", "<br>")


def word_diff(before: str, after: str) -> tuple[str, str]:
    """Both steps as safe HTML: removed words in <del> on the left, new words in <ins> on the right."""
    left, right = _TOKEN.findall(before), _TOKEN.findall(after)
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    if matcher.ratio() < _WORD_DIFF_FLOOR:
        return (
            f'<del class="sr-del">{_html_text(before)}</del>',
            f'<ins class="sr-ins">{_html_text(after)}</ins>',
        )
    out_left, out_right = [], []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = "".join(left[i1:i2]), "".join(right[j1:j2])
        if op == "equal":
            out_left.append(_html_text(old))
            out_right.append(_html_text(new))
            continue
        if old.strip():
            out_left.append(f'<del class="sr-del">{_html_text(old)}</del>')
        else:
            out_left.append(_html_text(old))
        if new.strip():
            out_right.append(f'<ins class="sr-ins">{_html_text(new)}</ins>')
        else:
            out_right.append(_html_text(new))
    return "".join(out_left), "".join(out_right)


def _cell(number: int | None, body: str, classes: list[str], badges: list[str]) -> str:
    if number is None:
        return f'<div class="{" ".join(["sr-cell", *classes])}">{body}</div>'
    tags = "".join(f'<span class="sr-badge sr-badge-{b.split()[0]}">{b}</span>' for b in badges)
    return (
        f'<div class="{" ".join(["sr-cell", *classes])}">'
        f'<div class="sr-num">Step {number + 1}{tags}</div><div class="sr-text">{body}</div></div>'
    )


def steps_html(
    original: Sequence[str],
    modified: Sequence[str],
    error_steps: Sequence[int],
    modified_steps: Sequence[int],
) -> str:
    """The original and modified chains side by side, one HTML block (no blank lines) for gr.Markdown."""
    errors, listed = set(error_steps), set(modified_steps)
    parts = [
        '<div class="sr-diff">',
        f'<div class="sr-head">Original steps ({len(original)})</div>',
        f'<div class="sr-head">Modified steps ({len(modified)}) · '
        '<ins class="sr-ins">new</ins> <del class="sr-del">removed</del></div>',
    ]
    for row in align_steps(original, modified):
        badges = []
        if row.modified is not None:
            if row.modified in errors:
                badges.append("error step")
            if row.modified in listed:
                badges.append("modified")
        if row.kind == "inserted":
            assert row.modified is not None
            left = _cell(None, "(no original step here)", ["sr-gap"], [])
            body = f'<ins class="sr-ins">{_html_text(modified[row.modified])}</ins>'
            right = _cell(
                row.modified, body, ["sr-changed", *(["sr-error"] if row.modified in errors else [])], badges
            )
        elif row.kind == "removed":
            assert row.original is not None
            left = _cell(row.original, f'<del class="sr-del">{_html_text(original[row.original])}</del>',
                         ["sr-changed"], [])  # fmt: skip
            right = _cell(None, "(removed in the modified steps)", ["sr-gap"], [])
        else:
            assert row.original is not None and row.modified is not None
            before, after = original[row.original], modified[row.modified]
            same = _norm(before) == _norm(after)
            if same:
                left_body, right_body = _html_text(before), _html_text(after)
            else:
                left_body, right_body = word_diff(before, after)
            changed = [] if same else ["sr-changed"]
            left = _cell(row.original, left_body, list(changed), [])
            right = _cell(row.modified, right_body,
                          [*changed, *(["sr-error"] if row.modified in errors else [])], badges)  # fmt: skip
        parts += [left, right]
    parts.append("</div>")
    return "".join(parts)


def _numbers(positions: Sequence[int]) -> str:
    return ", ".join(str(p + 1) for p in positions) if positions else "none listed"


def info_markdown(external_id: str, source: str | None, error_type: str | None, version: int) -> str:
    """The "Sample information" block: id, source, error type and its description."""
    lines = [
        f"**ID** {escape_text(external_id)} · **Source** {escape_text(source or 'not given')} · "
        f"**Error type** {escape_text(error_type or 'not given')}"
        + (f" · **Version** {version}" if version > 1 else ""),
    ]
    description = error_description(error_type)
    # The descriptions are this module's own text, not dataset text: no escaping, so "(S → A)" stays readable.
    lines.append(f"**Error description** {description}" if description
                 else "**Error description** none known for this error type.")  # fmt: skip
    return "\n\n".join(lines)


def question_markdown(question: str, questions: dict[str, Any] | None) -> str:
    """The question the modified steps answer; the original too when the modification changed it."""
    questions = questions or {}
    original, modified = questions.get("original_question"), questions.get("modified_question")
    # The same test as the PRMBench importer: only a real change of wording counts, not escaping.
    if isinstance(original, str) and isinstance(modified, str) and _norm(original) != _norm(modified):
        return (
            "**Question** (modified for this error type)\n\n" + safe_markdown(question)
            + "\n\n**Original question**\n\n" + safe_markdown(original)
        )  # fmt: skip
    return "**Question**\n\n" + safe_markdown(question)


def answer_markdown(reference_answer: str | None, error_steps: Sequence[int], modified_steps: Sequence[int],
                    dropped: dict[str, Any] | None = None) -> str:  # fmt: skip
    """Reference answer and error steps, 1-based as annotators count."""
    answer = safe_markdown(reference_answer) if reference_answer else "*not given in the data*"
    out = (
        f"**Reference answer** {answer}\n\n"
        f"**Error steps** (in the modified steps): {_numbers(error_steps)} · "
        f"**Modified steps**: {_numbers(modified_steps)}"
    )
    if dropped:
        said = "; ".join(
            f"{escape_text(k)} {escape_text(', '.join(map(str, v)))}" for k, v in dropped.items()
        )
        out += (
            f"\n\n*The source file also listed step numbers past the last step ({said}); they were dropped.*"
        )
    return out


def difficulty_hint(error_steps: Sequence[int]) -> str:
    n = len(error_steps)
    if n == 0:
        return "No error steps listed: Hard if no error is clearly shown"
    word = "step" if n == 1 else "steps"
    clear = "Easy" if n <= 3 else "Medium"
    return f"{n} error {word}: {clear} if clearly shown, else Hard"


def progress_markdown(progress: dict[str, int], position: int | None) -> str:
    """Overall progress of the dataset and where this sample sits in it."""
    total, settled, mine = progress.get("total", 0), progress.get("settled", 0), progress.get("mine", 0)
    share = 100.0 * settled / total if total else 0.0
    sample = f"**Sample {position} / {total}**" if position else "**No sample open**"
    return (
        f"{sample} · Overall progress: {settled}/{total} ({share:.1f}%) · you labelled {mine} "
        f'<progress class="sr-progress" value="{settled}" max="{max(total, 1)}"></progress>'
    )


def sample_progress(chosen: int, state: str | None, *, dirty: bool = False) -> str:
    """Current-sample progress: how many of the three assessments are made, and whether they are saved."""
    if state is None:
        return ""
    if state == "saved" and not dirty:
        saved = "saved"
    elif state == "done" and not dirty:
        saved = "your saved label"
    else:
        saved = "not saved yet"
    return f"Current sample: {chosen}/3 assessments ({100 * chosen // 3}%) · {saved}"
