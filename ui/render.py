"""Dataset text to safe Markdown, and two step chains compared: pure functions, tested without a browser.

Text from a dataset never reaches the browser as markup: every `<`, `>` and `&` is escaped, and
Markdown link syntax is broken up so a `javascript:` link cannot be clicked. Math survives because
KaTeX's auto-render reads the page's text, where the escaped characters are plain `<` again.
Every panel shows dataset text through safe_markdown, so they all read prices, products and
formulas the same way.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = [
    "CODE_DOLLAR",
    "LATEX_DELIMITERS",
    "LITERAL_DOLLAR",
    "MATH_DOLLAR",
    "StepRow",
    "align_steps",
    "close_fences",
    "escape_text",
    "safe_markdown",
    "separate_math",
    "step_body",
    "word_diff",
]

LATEX_DELIMITERS = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "$", "right": "$", "display": False},
    {"left": "\\(", "right": "\\)", "display": False},
    {"left": "\\[", "right": "\\]", "display": True},
]

# Markdown constructs that could smuggle a link or raw HTML past the escaping.
_LINK = re.compile(r"\]\s*\(")
_AUTOLINK_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data)\s*:")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_CODE = re.compile(r"(`{3,}.*?`{3,}|~{3,}.*?~{3,}|`[^`\n]*`)", re.DOTALL)
_DOLLAR = re.compile(r"\\\$|\$\$|\$")
_PRODUCT = re.compile(r"(?<=[0-9A-Za-z)\]}\ue000-\ue002])\*(?=[\ue000-\ue002]*[0-9A-Za-z(\[{])")
# Gradio pairs "$" signs by a plain regex over the whole Markdown, then KaTeX pairs them again in
# each run of page text. Prices ("$1.24 ... $1.82") would typeset the words between them as math,
# and a stray "$" in one step would pair with one in a later step and swallow the markup between.
# So a dollar that opens no math becomes an entity in its own element, which neither pass reads
# as a delimiter, and "\$" inside math becomes \char36, which neither pass pairs.
LITERAL_DOLLAR = '<span class="literal-dollar">&#36;</span>'
MATH_DOLLAR = "\\char36 "
CODE_DOLLAR = "\uff04"  # inside code an element would show as text: a fullwidth dollar looks the same
# word_diff's highlight markers: they survive escaping and become tags at the very end.
_INS, _DEL, _END = "\ue000", "\ue001", "\ue002"
_MARKERS = _INS + _DEL + _END


def escape_text(text: str | None) -> str:
    """Plain text for inline use (names, ids): HTML-escaped, no Markdown emphasis or links."""
    if text is None:
        return ""
    escaped = html.escape(str(text), quote=False)
    return re.sub(r"([\\`*_\[\]()#|])", r"\\\1", escaped)


def safe_markdown(text: str | None) -> str:
    """Dataset Markdown with math kept and every HTML tag, handler and script link made inert text;
    only math is math (prices and products stay text) and an unclosed code fence ends with the text."""
    if not text:
        return ""
    out = html.escape(str(text), quote=False)
    out = _LINK.sub("]&#40;", out)
    out = _AUTOLINK_SCHEME.sub(lambda m: m.group(1) + "&#58;", out)
    return separate_math(close_fences(out))


def close_fences(markdown: str) -> str:
    """An unclosed code fence would swallow everything shown after it: close it at the end of its text."""
    fences = _FENCE.findall(markdown)
    return markdown + f"\n{fences[-1]}" if len(fences) % 2 else markdown


def _closing(text: str, tokens: list[re.Match[str]], i: int) -> int | None:
    """Index of the token that closes the math tokens[i] opens (pandoc's rule), or None.

    The diff's highlight markers are invisible here, so a highlight never changes what is math.
    """
    if tokens[i].group() == "$$":
        return next((j for j in range(i + 1, len(tokens)) if tokens[j].group() == "$$"), None)
    following = _beside(text, tokens[i].end(), 1)
    if tokens[i].group() != "$" or not following or following.isspace():
        return None  # "$" opens math only before a non-space
    j = next((j for j in range(i + 1, len(tokens)) if tokens[j].group() != "\\$"), None)
    if j is None or tokens[j].group() != "$":
        return None
    before, after = _beside(text, tokens[j].start() - 1, -1), _beside(text, tokens[j].end(), 1)
    return None if before.isspace() or after.isdigit() else j  # closes after a non-space, not before a digit


def _beside(text: str, at: int, step: int) -> str:
    """The first character from `at` on in direction `step` that is not a highlight marker ("" at an end)."""
    while 0 <= at < len(text) and text[at] in _MARKERS:
        at += step
    return text[at] if 0 <= at < len(text) else ""


def _dollar_math(text: str) -> list[tuple[int, int]]:
    """Where the dollar-delimited formulas of a text (outside code) start and end."""
    tokens = list(_DOLLAR.finditer(text))
    spans, i = [], 0
    while i < len(tokens):
        j = _closing(text, tokens, i)
        if j is None:
            i += 1
        else:
            spans.append((tokens[i].start(), tokens[j].end()))
            i = j + 1
    return spans


def _plain(text: str) -> str:
    """Text outside math: a product such as 5*9^1 + 8*9^0 is not Markdown emphasis."""
    return _PRODUCT.sub(r"\\*", text)


def _inline(text: str) -> str:
    out, last = [], 0
    for start, end in _dollar_math(text):
        out.append(_plain(text[last:start]).replace("\\$", LITERAL_DOLLAR).replace("$", LITERAL_DOLLAR))
        out.append(text[start:end].replace("\\$", MATH_DOLLAR))
        last = end
    out.append(_plain(text[last:]).replace("\\$", LITERAL_DOLLAR).replace("$", LITERAL_DOLLAR))
    return "".join(out)


def separate_math(markdown: str) -> str:
    """Safe Markdown in which only math is math: prices, escaped dollars and products like 5*9 stay text."""
    parts = _CODE.split(markdown)
    return "".join(p.replace("$", CODE_DOLLAR) if k % 2 else _inline(p) for k, p in enumerate(parts))


_STEP_PREFIX = re.compile(r"^(\*\*)?step\s*\d+\s*[.:)]\s*(\*\*)?\s*", re.IGNORECASE)


def step_body(text: str | None) -> str:
    """A step as Markdown reads it: the generator's own "Step 3." dropped (the page numbers steps itself),
    and the indentation of the following lines undone so QwQ's eight spaces are not a code block."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    head, rest = lines[0].strip(), textwrap.dedent("\n".join(lines[1:]))
    return f"{_STEP_PREFIX.sub('', head, count=1)}\n{rest}".strip()


# --- two step chains compared (PRMBench's modifications insert, drop, move and rewrite steps) ---

_SIMILAR = 0.45  # two steps this similar (difflib ratio) are one step, edited; below, different steps
_WORD_DIFF_FLOOR = 0.3  # below this, marking single words is noise: the whole step is marked as rewritten
_PIECE = re.compile(r"\\\(.+?\\\)|\\\[.+?\\\]|\s+|\w+|[^\w\s]", re.DOTALL)
_BLOCK_MARK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+|>[ \t]*)*")


def _atoms(text: str) -> list[str]:
    """Words, spaces and punctuation, with every formula and code span one atom, cut where
    separate_math cuts: a highlight can then never split a formula KaTeX must read."""
    cuts: list[tuple[int, int]] = []
    last = 0
    for code in _CODE.finditer(text):
        cuts += [(last + s, last + e) for s, e in _dollar_math(text[last : code.start()])]
        cuts.append(code.span())
        last = code.end()
    cuts += [(last + s, last + e) for s, e in _dollar_math(text[last:])]
    atoms, last = [], 0
    for start, end in cuts:
        atoms += _PIECE.findall(text[last:start])
        atoms.append(text[start:end])
        last = end
    return atoms + _PIECE.findall(text[last:])


def _norm(step: str) -> str:
    """Steps compare without layout: PRMBench copies differ in spacing and stray quotes."""
    return " ".join(step.split()).strip("\"' ")


def _words(step: str) -> tuple[str, ...]:
    """A step as the words and formulas it says, for comparing steps (layout and case ignored)."""
    return tuple(t for t in _atoms(_norm(step_body(step)).lower()) if not t.isspace())


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
    """One row of a side-by-side view: an original step, the modified step it became, or one alone.

    A step that moved shows twice: where it was (`original` only, `moved` = where it went in the
    modified steps) and where it is now (`modified` only, `moved` = where it was in the original).
    `repeats` marks an added step that says the same as an original step that is still there.
    """

    original: int | None  # 0-based position in the original steps
    modified: int | None  # 0-based position in the modified steps
    moved: int | None = None
    repeats: int | None = None

    @property
    def kind(self) -> str:
        """paired | inserted | removed | moved_in (the step's new place) | moved_out (its old place)."""
        if self.original is not None and self.modified is not None:
            return "paired"
        if self.moved is not None:
            return "moved_in" if self.original is None else "moved_out"
        return "inserted" if self.original is None else "removed"


def align_steps(original: Sequence[str], modified: Sequence[str]) -> list[StepRow]:
    """Pair the steps that stayed (edited or not) in order, maximising total similarity; then find the
    steps that moved: a removed step and an added one that say (nearly) the same thing.

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
    return _mark_moves(a, b, rows)


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


def _mark_moves(a: list[tuple[str, ...]], b: list[tuple[str, ...]], rows: list[StepRow]) -> list[StepRow]:
    """A step the in-order alignment could only call removed here and inserted there has moved.

    Alone on its row, each side gets its own row (a moved step never sits beside another step);
    the most similar pairs are matched first.
    """
    alone_a = [r.original for r in rows if r.original is not None and r.modified is None]
    alone_b = [r.modified for r in rows if r.modified is not None and r.original is None]
    bags_a, bags_b = {x: Counter(a[x]) for x in alone_a}, {y: Counter(b[y]) for y in alone_b}
    pairs = sorted(
        ((_similarity(a[x], bags_a[x], b[y], bags_b[y]), x, y) for x in alone_a for y in alone_b),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    went: dict[int, int] = {}
    came: dict[int, int] = {}
    for score, x, y in pairs:
        if score >= _SIMILAR and x not in went and y not in came:
            went[x], came[y] = y, x
    kept = {r.original: r.modified for r in rows if r.original is not None and r.modified is not None}
    out: list[StepRow] = []
    for row in rows:
        if row.original in went or row.modified in came:
            if row.original is not None:
                out.append(StepRow(row.original, None, moved=went.get(row.original)))
            if row.modified is not None:
                out.append(StepRow(None, row.modified, moved=came.get(row.modified)))
        elif row.original is None and row.modified is not None:
            same = next((x for x in kept if a[x] == b[row.modified] and kept[x] != row.modified), None)
            out.append(StepRow(None, row.modified, repeats=same))
        else:
            out.append(row)
    return out


def _marked(text: str, marker: str, at_line_start: bool) -> str:
    """Changed text between markers, line by line, with a line's heading or list mark and the spaces
    around the words left outside, so Markdown still reads them (a highlight never spans a paragraph)."""
    out = []
    for k, line in enumerate(text.split("\n")):
        lead = _BLOCK_MARK.match(line).group() if k or at_line_start else ""  # type: ignore[union-attr]
        body = line[len(lead) :]
        words = body.strip()
        if words:
            start = body.index(words)
            body = f"{body[:start]}{marker}{words}{_END}{body[start + len(words) :]}"
        out.append(lead + body)
    return "\n".join(out)


def _marked_step(atoms: list[str], changes: list[tuple[int, int]], marker: str) -> str:
    """The step's Markdown with the atoms in `changes` (index ranges) wrapped in markers."""
    out, last = "", 0
    for start, end in changes:
        out += "".join(atoms[last:start])
        out += _marked("".join(atoms[start:end]), marker, not out or out.endswith("\n"))
        last = end
    return out + "".join(atoms[last:])


def _with_tags(markdown: str, tag: str) -> str:
    return markdown.replace(_INS, "<ins>").replace(_DEL, "<del>").replace(_END, f"</{tag}>")


def word_diff(before: str, after: str) -> tuple[str, str]:
    """Both steps as safe Markdown: removed words in <del> on the left, new words in <ins> on the right.

    Formulas and code spans change as a whole; a step rewritten through and through is marked whole.
    """
    before, after = (re.sub(f"[{_MARKERS}]", "", s) for s in (before, after))
    left, right = _atoms(before), _atoms(after)
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    if matcher.ratio() < _WORD_DIFF_FLOOR:
        removed, added = [(0, len(left))], [(0, len(right))]
    else:
        ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        removed = [(i1, i2) for _, i1, i2, _, _ in ops if "".join(left[i1:i2]).strip()]
        added = [(j1, j2) for _, _, _, j1, j2 in ops if "".join(right[j1:j2]).strip()]
    return (
        _with_tags(safe_markdown(_marked_step(left, removed, _DEL)), "del"),
        _with_tags(safe_markdown(_marked_step(right, added, _INS)), "ins"),
    )
