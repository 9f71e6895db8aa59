"""What the Step review panel shows, as pure functions of an item: tested without a browser.

The side-by-side view pairs each original step with the modified step it became (PRMBench's
modifications insert, drop, move and rewrite steps, so numbers shift) and marks the changed words;
the pairing and the word diff are ui.render's. Every step is safe Markdown (ui.render.safe_markdown)
inside the few tags made here, so formulas, lists and emphasis render and no dataset text is markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ui.kit.keymap import keys_line
from ui.render import StepRow, align_steps, escape_text, safe_markdown, step_body, word_diff

__all__ = [
    "DIFFICULTY_RULE",
    "ERROR_DESCRIPTIONS",
    "ERROR_TYPES",
    "INSTRUCTIONS",
    "KEYS",
    "KEYS_BAR",
    "NOTICES",
    "ErrorType",
    "annotators_text",
    "answer_markdown",
    "difficulty_hint",
    "error_description",
    "error_type_info",
    "image_caption",
    "info_markdown",
    "progress_markdown",
    "question_markdown",
    "sample_progress",
    "steps_html",
]


# PRMBench-V's nine error types (its §3.1.3 and the columns of every results table, in that order), then
# PRMBench's ninth, which PRMBench-V leaves out. `key` is the spelling of the data's `classification`
# (PRMBench's own keys; PRMBench-V prints only `domain_inconsistency`, and none for Visual Perception).
# `catch` is what the paper asks the judge to catch: its §3.1.3 words in quotes, then the rubric of its
# Figure 17 in plain words. See docs/PROTOCOLS.md A2.
@dataclass(frozen=True)
class ErrorType:
    key: str
    name: str
    abbr: str
    catch: str
    in_prmbench_v: bool = True


ERROR_TYPES: dict[str, ErrorType] = {
    t.key: t
    for t in (
        ErrorType(
            "redundency",
            "Non-Redundancy",
            "NR.",
            "“identify and justify which step(s) are logically superfluous”: redundant steps that could be "
            "removed.",
        ),
        ErrorType(
            "circular",
            "Non-Circular Logic",
            "NCL.",
            "“self-referential loops where step S_n relies on step S_{n+k} that ultimately depends on S_n”: "
            "circular references.",
        ),
        ErrorType(
            "counterfactual",
            "Empirical Soundness",
            "ES.",
            "“grounding verification against facts”: counterfactual statements, claims that contradict "
            "established facts or theorems.",
        ),
        ErrorType(
            "step_contradiction",
            "Step Consistency",
            "SC.",
            "“internal consistency”: steps that contradict each other, or logical gaps between steps.",
        ),
        ErrorType(
            "domain_inconsistency",
            "Domain Consistency",
            "DC.",
            "“domain-specific rules”: a statement or theory valid in other domains or cases but not within "
            "the current reasoning chain.",
        ),
        ErrorType(
            "confidence",
            "Confidence Invariance",
            "CI.",
            "“overconfident unsupported claims”: misaligned confidence, wrong statements made with certainty.",
        ),
        ErrorType(
            "missing_condition",
            "Prerequisite Sensitivity",
            "PS.",
            "“contextual gap-filling”: conditions or premises the reasoning needs that are missing.",
        ),
        ErrorType(
            "deception",
            "Deception Resistance",
            "DR.",
            "“adversarial pattern recognition”: subtle traps or misleading steps.",
        ),
        ErrorType(
            "visual_perception",
            "Visual Perception",
            "VP.",
            "“visual misperceptions arising within reasoning processes”: mistakes in extracting information "
            "from the image.",
        ),
        ErrorType(
            "multi_solutions",
            "Multi-Solution Consistency",
            "MS.",
            "consistent judgements of a different but valid solution path: it holds no error to catch, "
            "and every step should be judged correct.",
            in_prmbench_v=False,
        ),
    )
}

# What the generator was told to insert, shown under "Error description" as PRMBench-V's tool does (its
# Figure 13). Domain Consistency is the paper's text (000 l.728) and Non-Circular Logic its detection text
# (000 l.974), each without its closing "Your task is ..." sentence; the others are PRMBench's (Apache-2.0).
# Neither paper prints one for Visual Perception: that text is stepgate's own, and says so.
ERROR_DESCRIPTIONS: dict[str, str] = {
    "redundency": (
        "Redundancy refers to a process that is not the most concise or efficient, as it includes one or more "
        "redundant steps that can be removed without affecting the correctness of the overall solution path."
    ),
    "circular": (
        "Circular logic is a specific form of redundancy, characterized by a reasoning chain that starts at a "
        "step S, progresses through a sequence of steps, and ultimately loops back to S. Symbolically, this "
        "can be expressed as S → A → B → S, where S, A, and B represent individual reasoning steps."
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
    "visual_perception": (
        "(Written for stepgate: the paper prints no description for this type.) A visual perception error is "
        "a step that misreads the image, stating a value, label, shape, position or relation the image does "
        "not show, so that the reasoning builds on what is not there."
    ),
    "multi_solutions": (
        "Multi-solution consistency: the modified process solves the problem by a different but valid path. "
        "It should contain no error; a reasonable modification keeps every step correct."
    ),
}
# Other spellings of the same types: PRMBench-V's names, its abbreviations, the corrected spelling.
_ALIASES = {
    "redundancy": "redundency",
    "non_redundancy": "redundency",
    "circular_logic": "circular",
    "non_circular_logic": "circular",
    "empirical_soundness": "counterfactual",
    "step_consistency": "step_contradiction",
    "domain_consistency": "domain_inconsistency",
    "confidence_invariance": "confidence",
    "prerequisite_sensitivity": "missing_condition",
    "deception_resistance": "deception",
    "visual": "visual_perception",
    "visual_misperception": "visual_perception",
    "multi_solution": "multi_solutions",
    "multi_solution_consistency": "multi_solutions",
    **{t.abbr.rstrip(".").lower(): t.key for t in ERROR_TYPES.values()},
}

KEYS = "**Keys** (outside text boxes; **?** shows them all): " + keys_line("Step review")
# The bar's reminder: one line at 1366 px (the full list is in the instructions and behind "?").
KEYS_BAR = (
    "**Keys** (**?** shows all): **c / i** original · **r / u** modification · **e / m / h** difficulty · "
    "**z** image · **s** or **Ctrl+Enter** save · **n / p** next / previous · **x** skip · **g** jump"
)


def _type_line(t: ErrorType) -> str:
    return f"- **{t.name} ({t.abbr})**: {t.catch}"


INSTRUCTIONS = f"""\
Please carefully read the original steps and modified steps, and evaluate them:

**Original Step Quality Assessment**: is the original reasoning chain, as a whole, correct and logically sound?
- **Correct**: No calculation errors, logical reasoning is basically sound, reasoning process is consistent with final result.
- **Incorrect**: Contains calculation errors, logical conflicts, or reasoning process is inconsistent with result.

A slip of wording is fine; any logical conflict, or a final answer other than the reference answer, is Incorrect.

**Modified Step Assessment**: is the modification reasonable, judged from the modification rationale?
- **Reasonable**: Referring to modification rationale and error steps, the step modification is reasonable and matches the error description.
- **Unreasonable**: Modification is unreasonable, modification does not match error description.

Reasonable only when all four hold:
- (a) the flawed reasoning is genuinely incorrect;
- (b) the error sits at the listed error steps, as the rationale says;
- (c) the inserted error correctly matches the intended error type (its error description);
- (d) it is appropriately and seamlessly integrated into the flawed reasoning flow: later steps follow coherently from it, and the chain still reads as plausible.

**Difficulty Assessment**: also please select the difficulty level of this step (Easy/Medium/Hard); with several error steps, rate the error as a whole.
- **Easy**: The process clearly indicates this step has errors, and total error steps ≤ 3 (at most 3).
- **Medium**: The process clearly indicates this step has errors, and total error steps > 3 (more than 3).
- **Hard**: Does not clearly indicate this step has errors, however many error steps there are.

The panel suggests Easy or Medium from the number of error steps; whether the error is clearly shown is yours to judge.

**PRMBench-V's nine error types**, and what each asks a judge to catch:
{chr(10).join(_type_line(t) for t in ERROR_TYPES.values() if t.in_prmbench_v)}

**Reading the steps**: <ins>new words</ins> and <del>removed words</del> are marked inside a step; a step
added, removed or moved has its own colour and a label; "was Step 3" means the step kept its text but its
number shifted.

{KEYS}.
"""


def _key(error_type: str | None) -> str | None:
    if not error_type or not error_type.strip():
        return None
    key = re.sub(r"[\s-]+", "_", error_type.strip().lower()).rstrip(".")
    return _ALIASES.get(key, key)


def error_type_info(error_type: str | None) -> ErrorType | None:
    """The paper's type behind a `classification` value (any known spelling), or None if there is none."""
    key = _key(error_type)
    return ERROR_TYPES.get(key) if key else None


def error_description(error_type: str | None) -> str | None:
    key = _key(error_type)
    return ERROR_DESCRIPTIONS.get(key) if key else None


def _badges(*badges: tuple[str, str] | None) -> str:
    return "".join(
        f'<span class="sr-badge sr-badge-{kind}">{text}</span>' for kind, text in filter(None, badges)
    )


def _cell(number: int | None, body: str, classes: Sequence[str], badges: str = "") -> str:
    """One step: a one-line HTML head, then its Markdown between blank lines (so Markdown renders it)."""
    if number is None:  # the empty side of a row: one line of plain words
        return f'<div class="{" ".join(["sr-cell", *classes])}">{body}</div>\n'
    return (
        f'<div class="{" ".join(["sr-cell", *classes])}"><div class="sr-num">Step {number + 1}{badges}</div>\n\n'
        f"{body or '*(empty step)*'}\n\n</div>\n"
    )


def _arrow(here: int, there: int) -> str:
    return "↓" if there > here else "↑"


def steps_html(
    original: Sequence[str],
    modified: Sequence[str],
    error_steps: Sequence[int],
    modified_steps: Sequence[int],
) -> str:
    """The original and modified chains side by side (a grid for gr.Markdown), changes marked at a glance:
    edited words, added, removed and moved steps, and the steps whose number shifted."""
    errors, listed = set(error_steps), set(modified_steps)
    before, after = [step_body(s) for s in original], [step_body(s) for s in modified]
    rows = align_steps(original, modified)
    row_of_original = {r.original: k for k, r in enumerate(rows) if r.original is not None}
    row_of_modified = {r.modified: k for k, r in enumerate(rows) if r.modified is not None}
    parts = [
        '<div class="sr-diff"><div class="sr-head">Original steps '
        f'({len(original)})</div><div class="sr-head">Modified steps ({len(modified)}) · <ins>new</ins> '
        '<del>removed</del> <span class="sr-legend-moved">moved</span></div>\n'
    ]
    for k, row in enumerate(rows):
        parts += _row(k, row, before, after, errors, listed, row_of_original, row_of_modified)
    parts.append("</div>")
    return "".join(parts)


def _row(
    k: int,
    row: StepRow,
    before: list[str],
    after: list[str],
    errors: set[int],
    listed: set[int],
    row_of_original: dict[int, int],
    row_of_modified: dict[int, int],
) -> list[str]:
    o, m = row.original, row.modified
    if row.kind == "moved_out":
        if o is None or row.moved is None:
            raise ValueError(f"alignment row {k}: a moved-out step needs its place on both sides")
        arrow = _arrow(k, row_of_modified[row.moved])
        return [
            _cell(
                o,
                safe_markdown(before[o]),
                ["sr-moved"],
                _badges(("moved", f"moved to Step {row.moved + 1} {arrow}")),
            ),
            _cell(None, f"{arrow} now Step {row.moved + 1} of the modified steps", ["sr-gap"]),
        ]
    if o is None:
        if m is None:
            raise ValueError(f"alignment row {k}: a row with neither an original nor a modified step")
        mark = ["sr-error"] if m in errors else []
        flags = (
            ("error", "error step") if m in errors else None,
            ("listed", "modified") if m in listed else None,
        )
        if row.kind == "moved_in":
            if row.moved is None:
                raise ValueError(f"alignment row {k}: a moved-in step needs its original place")
            arrow = _arrow(k, row_of_original[row.moved])
            same = " ".join(before[row.moved].split()) == " ".join(after[m].split())
            body = safe_markdown(after[m]) if same else word_diff(before[row.moved], after[m])[1]
            return [
                _cell(None, f"{arrow} original Step {row.moved + 1} moved here", ["sr-gap"]),
                _cell(
                    m,
                    body,
                    ["sr-moved", *mark],
                    _badges(*flags, ("moved", f"moved from Step {row.moved + 1}")),
                ),
            ]
        repeats = ("repeat", f"repeats Step {row.repeats + 1}") if row.repeats is not None else None
        return [
            _cell(None, "(no original step here)", ["sr-gap"]),
            _cell(
                m,
                safe_markdown(after[m]),
                ["sr-inserted", *mark],
                _badges(*flags, ("added", "added"), repeats),
            ),
        ]
    if m is None:
        return [
            _cell(o, safe_markdown(before[o]), ["sr-removed"], _badges(("removed", "removed"))),
            _cell(None, "(removed in the modified steps)", ["sr-gap"]),
        ]
    same = " ".join(before[o].split()) == " ".join(after[m].split())
    left, right = (
        (safe_markdown(before[o]), safe_markdown(after[m])) if same else word_diff(before[o], after[m])
    )
    changed = [] if same else ["sr-changed"]
    flags = (
        ("error", "error step") if m in errors else None,
        ("listed", "modified") if m in listed else None,
        ("shift", f"was Step {o + 1}") if o != m else None,
    )
    return [
        _cell(o, left, changed),
        _cell(m, right, [*changed, *(["sr-error"] if m in errors else [])], _badges(*flags)),
    ]


def _numbers(positions: Sequence[int]) -> str:
    return ", ".join(str(p + 1) for p in positions) if positions else "none listed"


def annotators_text(target: int | None) -> str:
    """How many annotators label this sample: never who they are or what they chose (blind)."""
    if not target or target <= 1:
        return "**Annotators** 1 (you)"
    return f"**Annotators** you are 1 of {target}, blind to each other"


def info_markdown(
    external_id: str, source: str | None, error_type: str | None, version: int, target: int | None = 1
) -> str:
    """The "Sample information" block: id, source, error type with the paper's name and what it asks to
    catch, its description, how many annotators."""
    known = error_type_info(error_type)
    if error_type is not None and not error_type.strip():
        error_type = None
    if known is None:
        named = escape_text(error_type or "not given") + (
            " (not one of PRMBench-V's error types)" if error_type else ""
        )
    elif known.in_prmbench_v:
        named = f"{known.name} ({known.abbr}) · data: {escape_text(error_type or '')}"
    else:
        named = (
            f"{known.name} ({known.abbr}) · data: {escape_text(error_type or '')} · PRMBench's type, not one "
            "of PRMBench-V's nine error types"
        )
    lines = [
        f"**ID** {escape_text(external_id)} · **Source** {escape_text(source or 'not given')} · "
        f"**Error type** {named}"
        + (f" · **Version** {version}" if version > 1 else "")
        + f" · {annotators_text(target)}",
    ]
    if known is not None:
        who = "PRMBench-V asks" if known.in_prmbench_v else "PRMBench (not PRMBench-V) asks"
        lines.append(f"**What {who} the judge to catch** {known.catch}")
    description = error_description(error_type)
    # The descriptions are this module's own text, not dataset text: no escaping, so "(S → A)" stays readable.
    lines.append(
        f"**Error description** {description}"
        if description
        else "**Error description** none known for this error type."
    )
    return "\n\n".join(lines)


def _words(text: str) -> str:
    """Text without layout: PRMBench copies differ in spacing and stray quotes."""
    return " ".join(text.split()).strip("\"' ")


def question_markdown(question: str, questions: dict[str, Any] | None) -> str:
    """The question the modified steps answer; the original too when the modification changed it."""
    questions = questions or {}
    original, modified = questions.get("original_question"), questions.get("modified_question")
    # The same test as the PRMBench importer: only a real change of wording counts, not escaping.
    if isinstance(original, str) and isinstance(modified, str) and _words(original) != _words(modified):
        return (
            "**Question** (modified for this error type)\n\n"
            + safe_markdown(question)
            + "\n\n**Original question**\n\n"
            + safe_markdown(original)
        )
    return "**Question**\n\n" + safe_markdown(question)


def answer_markdown(
    reference_answer: str | None,
    error_steps: Sequence[int],
    modified_steps: Sequence[int],
    dropped: dict[str, Any] | None = None,
) -> str:
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


DIFFICULTY_RULE = "Easy: clear, ≤ 3 error steps · Medium: clear, > 3 · Hard: unclear."


REQUIRED = {  # the dataset's difficulty_required setting, said beside the choice
    "when_retained": " Needed if retained.",
    "always": "",
    "optional": " Optional.",
}


def difficulty_hint(error_steps: Sequence[int], required: str = "always") -> str:
    """The rule, and a suggestion from the count of error steps: only the annotator sees if it is clear."""
    n = len(error_steps)
    need = REQUIRED.get(required, "")
    if n == 0:
        return f"{DIFFICULTY_RULE} No error steps listed: Hard if no error is clear.{need}"
    word = "step" if n == 1 else "steps"
    clear = "Easy" if n <= 3 else "Medium"
    return f"{DIFFICULTY_RULE} Suggested ({n} error {word}): {clear}, Hard if unclear.{need}"


def progress_markdown(progress: dict[str, int], position: int | None) -> str:
    """Where this sample sits in the dataset, and the progress this user may see: their own labels, and
    for roles that see labels the dataset's settled share."""
    total, settled, mine = progress.get("total", 0), progress.get("settled", 0), progress.get("mine", 0)
    sample = f"**Sample {position} / {total}**" if position else "**No sample open**"
    if (
        "settled" not in progress
    ):  # an annotator: their own work (the settled share moves with others' labels)
        bar = f'<progress class="sr-progress" value="{mine}" max="{max(total, 1)}"></progress>'
        return f"{sample} · you labelled {mine} of {total} {bar}"
    share = 100.0 * settled / total if total else 0.0
    return (
        f"{sample} · Overall progress: {settled}/{total} ({share:.1f}%) · you labelled {mine} "
        f'<progress class="sr-progress" value="{settled}" max="{max(total, 1)}"></progress>'
    )


NOTICES = {  # what the status line says on opening a sample, by how it was opened
    "new": "",
    "resumed": "You were working on this sample; here it is again.",
    "done": "You already labelled this sample: change a choice and save again to update your label.",
    "draft": "Your unsaved choices on this sample are back (kept on the server until you save).",
}


def image_caption(index: int, count: int) -> str:
    return "Click to enlarge (Z)" if count == 1 else f"Image {index + 1} of {count} · click to enlarge (Z)"


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
