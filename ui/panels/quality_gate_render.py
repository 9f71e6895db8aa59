"""The quality gate's text: pure functions from items, labels and lineage to safe Markdown.

Dataset text (question, choices, answer, steps) goes through ui.render, so it never runs as HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tasks.quality_gate import CRITERIA
from ui.render import align_steps, escape_text, safe_markdown, word_diff

__all__ = [
    "FIRST_VERSION",
    "answer_markdown",
    "choices_markdown",
    "groups_markdown",
    "header",
    "lineage_markdown",
    "step_diff",
    "text_block",
    "verdict_words",
]


def text_block(text: str | None) -> str:
    return safe_markdown(text) or "*(no question text)*"


def choices_markdown(options: Sequence[str]) -> str:
    """Choices as the figure shows them: 'A. ...' lines (none when the item has no options)."""
    if not options:
        return ""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    lines = [f"{letters[i] if i < 26 else i + 1}. {safe_markdown(o)}" for i, o in enumerate(options)]
    return "**Choices**\n\n" + "  \n".join(lines)


def answer_markdown(answer: str | None, source: str | None) -> str:
    return (
        f"**Answer:** {safe_markdown(answer) or '*none given*'}  \n**Source:** {escape_text(source) or '—'}"
    )


def header(
    item: Any, position: int, total: int, state: str, mine: Mapping[str, Any], dataset: str = ""
) -> str:
    """Item id, 'Index i / N' of the dataset (1-based, as the slider), its version, and what the user did."""
    where = f"**Item {escape_text(item.external_id)}** · Index {position} / {total}"
    if dataset:
        where += f" of {escape_text(dataset)}"
    if item.version > 1:
        where += f" · version {item.version}"
    if state == "done":
        verdict = mine.get("verdict")
        return where + (
            f" · you {verdict}ed it; saving again records a correction" if verdict else " · settled"
        )
    if state == "resumed":
        return where + " · resumed"
    return where


def verdict_words(payload: Mapping[str, Any]) -> str:
    if payload.get("verdict") == "accept":
        return "accepted"
    failed = [k for k, held in (payload.get("criteria") or {}).items() if not held]
    return "rejected (" + ", ".join(f"{k.upper()} {CRITERIA[k].name}" for k in failed) + " failed)"


def groups_markdown(groups: Sequence[Any] | None) -> str:
    """Candidate steps that say the same thing (phase-2 clustering); nothing while grouping is off."""
    if groups is None:
        return ""
    if not groups:
        return "*No two candidate steps say the same thing.*"
    lines = [" ≈ ".join(f"**{n}**" if n == g.representative else str(n) for n in g.steps) for g in groups]
    return "**Steps that say the same thing** (bold: the representative): " + "; ".join(lines)


def step_diff(before: Sequence[str], after: Sequence[str]) -> list[str]:
    """What changed between two step lists, aligned (an inserted step does not renumber the rest)."""
    lines = []
    for row in align_steps(before, after):
        if row.kind == "paired":
            assert row.original is not None and row.modified is not None
            if before[row.original] != after[row.modified]:
                old, new = word_diff(before[row.original], after[row.modified])
                lines.append(f"- step {row.original + 1} → {row.modified + 1}: {old} → {new}")
        elif row.kind in ("inserted", "moved_in"):
            assert row.modified is not None
            verb = "added" if row.kind == "inserted" else "moved here"
            lines.append(f"- step {row.modified + 1} {verb}: <ins>{safe_markdown(after[row.modified])}</ins>")
        elif row.kind == "removed":
            assert row.original is not None
            lines.append(
                f"- step {row.original + 1} deleted: <del>{safe_markdown(before[row.original])}</del>"
            )
    return lines


FIRST_VERSION = "Version 1, as imported: no edits or regenerations yet."


def lineage_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """Versions oldest first (number, from, why, who, when) and each one's step diff from its parent."""
    if not rows:
        return ""
    table = ["| version | from | why | who | when |", "| --- | --- | --- | --- | --- |"]
    for v in rows:
        table.append(
            f"| {v['version']} | {v['parent'] or '—'} | {escape_text(v['reason'])} | "
            f"{escape_text(v.get('created_by')) or '—'} | {escape_text(str(v['created_at'])[:19])} |"
        )
    by_number = {v["version"]: v for v in rows}
    parts = ["\n".join(table)]
    for v in rows:
        parent = by_number.get(v["parent"])
        if parent is None:
            continue
        changes = step_diff(parent.get("steps", []), v.get("steps", [])) or ["- no change in the steps"]
        parts.append(
            f"**Version {v['version']} from {v['parent']}** ({escape_text(v['reason'])})\n\n"
            + "\n".join(changes)
        )
    return "\n\n".join(parts)
