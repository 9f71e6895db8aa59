"""One keymap for every annotation panel, shown in one help overlay (press ?).

The moves are the same keys in every panel that offers them (PANEL_MOVES names one that offers fewer);
each panel adds only its own choices. The panels' key lines and the overlay are rendered from these
tables, so what the overlay says is what the keys do (ui/js/*.js implement them, on ui/js/keys.js; the
browser tests press every key listed here).
"""

from __future__ import annotations

import html

__all__ = [
    "EARLIEST_ERROR_GUIDANCE",
    "MOVES",
    "PANEL_KEYS",
    "PANEL_MOVES",
    "help_html",
    "keys_line",
    "keys_reminder",
    "moves_of",
]

MOVES: list[tuple[str, str]] = [
    ("s  or  Ctrl+Enter", "save"),
    ("n", "next item"),
    ("p", "previous item (your own labels)"),
    ("x", "skip: give the item back; it returns to you after the rest"),
    ("g  or  /", "jump to an item by its number or its id"),
    ("?", "this help; Esc closes it"),
]
PANEL_KEYS: dict[str, list[tuple[str, str]]] = {
    "Step review": [
        ("c / i", "original steps correct / incorrect"),
        ("r / u", "modification reasonable / unreasonable"),
        ("e / m / h", "difficulty easy / medium / hard"),
        ("z", "enlarge the image"),
    ],
    "Earliest error": [
        ("1 2 …", "the step of that number (type 1 2 for step 12)"),
        ("a", "all steps are correct"),
        ("j / k  or  ↓ / ↑", "move the cursor; Enter marks that step"),
        ("r", "show or hide the reference solution"),
        ("v", "statistics"),
    ],
    "Quality gate": [
        ("1 2 3 4", "criterion C1-C4 holds / does not (toggle)"),
        ("a", "accept (all four criteria hold)"),
        ("r", "reject: the unchecked criteria fail; type the reason first"),
        ("e", "edit the steps as text, one per line"),
        ("l", "versions of the item (lineage)"),
        ("z", "enlarge the image"),
    ],
    "Perturbation check": [("1 2 …", "tick or untick the checklist's items in order (a ticked item holds)")],
    "Step-match study": [("m / n", "match / no match")],
}
# A panel that offers only some of the moves, by their keys: a step-match study shows one pair at a time,
# blind, with no labels of one's own to page back through (and there n answers "no match").
PANEL_MOVES: dict[str, tuple[str, ...]] = {"Step-match study": ("s  or  Ctrl+Enter", "x", "?")}
# ProcessBench's guidance to its annotators (what counts as an error), "typically but non-inclusively".
EARLIEST_ERROR_GUIDANCE = [
    ("Mathematical error", "a wrong calculation, algebraic manipulation or wrongly applied formula"),
    ("Logical error", "an invalid deduction, unwarranted assumption or flawed reasoning"),
    ("Conceptual error", "a misunderstood or misapplied mathematical concept or concept of the problem"),
    (
        "Completeness error",
        "a missing crucial condition, constraint or justification, only when it affects the solution's validity",
    ),
]


def moves_of(panel: str) -> list[tuple[str, str]]:
    """The shared moves the panel offers (all of them unless PANEL_MOVES names fewer)."""
    offered = PANEL_MOVES.get(panel)
    return [move for move in MOVES if offered is None or move[0] in offered]


def keys_line(panel: str) -> str:
    """The one-line reminder under a panel: its choices, then its moves."""
    keys = [*PANEL_KEYS.get(panel, []), *moves_of(panel)]
    return " · ".join(f"**{html.escape(k)}** {html.escape(what.split(':')[0])}" for k, what in keys)


def keys_reminder(panel: str) -> str:
    """The key line a panel shows under its controls, as most panels word it."""
    return "**Keys** (**?** shows them all): " + keys_line(panel)


def _table(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><td><kbd>{html.escape(k)}</kbd></td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table class='stepgate-keys'>{body}</table>"


def help_html() -> str:
    """The overlay: the shared moves, each panel's choices, and ProcessBench's error guidance."""
    parts = [
        "<div class='stepgate-help-box' role='dialog' aria-label='Keys and guidance'>",
        f"<h3>Keys (every annotation panel{''.join(f', except the {html.escape(p)}' for p in PANEL_MOVES)})</h3>",
        _table(MOVES),
    ]
    for panel, rows in PANEL_KEYS.items():
        own = moves_of(panel) if panel in PANEL_MOVES else []  # a panel with fewer moves lists its own
        parts += [f"<h4>{html.escape(panel)}</h4>", _table([*rows, *own])]
    guidance = "".join(
        f"<li><b>{html.escape(a)}</b>: {html.escape(b)}</li>" for a, b in EARLIEST_ERROR_GUIDANCE
    )
    parts += [
        "<h4>Earliest error: what counts as an error (ProcessBench)</h4>",
        f"<ul>{guidance}</ul><p>Beyond these, judge by your own expertise. Mark the <b>earliest</b> wrong "
        "step; a step that only builds on an earlier wrong one is not the earliest.</p>",
        "<p class='stepgate-help-close'>Esc or ? closes this.</p></div>",
    ]
    return "".join(parts)
