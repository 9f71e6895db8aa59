"""The annotator view (tasks.view) is the one way an item reaches an annotator (issue 32, by construction).

The view cuts what an annotator receives to what the task lets them see; the kit and the HTTP API build
their replies from it, and no panel calls its renderer past the kit (a meta-test over ui/panels).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tasks import SPECS, spec_for
from tasks.view import AnnotatorView

PANELS = Path(__file__).resolve().parents[2] / "ui" / "panels"


@dataclass(frozen=True)
class _Item:
    item_id: int = 7
    version_id: int = 9
    external_id: str = "x-7"
    question: str = "Q"
    steps: dict = field(default_factory=lambda: {"modified": ["a"]})
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Work:
    item: Any
    state: str
    my_label: Any
    position: int
    progress: dict


def test_an_annotator_receives_the_tasks_meta_keys_and_their_own_progress_only() -> None:
    meta = {"questions": ["q1"], "dropped_step_numbers": [2], "similarity": 0.91, "variant": 3, "gold": True}
    counts = {"total": 10, "mine": 4, "settled": 6, "discarded": 1}
    work = _Work(_Item(meta=meta), "done", {"original": "correct"}, 3, counts)
    seen = spec_for("step_review").annotator_view.seen(work)
    assert seen.item.meta == {"questions": ["q1"], "dropped_step_numbers": [2]}
    assert seen.progress == {"total": 10, "mine": 4}
    assert spec_for("step_match").annotator_view.seen(work).item.meta == {}  # never the encoder's score
    reply = AnnotatorView().reply(AnnotatorView().seen(work))
    assert (
        "settled" not in str(reply)
        and "0.91" not in str(reply)
        and reply["my_label"] == {"original": "correct"}
    )
    assert AnnotatorView().seen(work, reviewer=True) is work  # reviewers are not blind


def test_a_state_named_after_the_decision_never_reaches_an_annotator() -> None:
    with pytest.raises(ValueError, match="new, resumed or done"):
        AnnotatorView().seen(_Work(_Item(), "accepted", None, 1, {}))


def test_every_task_has_an_annotator_view() -> None:
    assert all(isinstance(spec.annotator_view, AnnotatorView) for spec in SPECS.values())


def _renderers(trees: dict[Path, ast.Module]) -> set[str]:
    """The names of the renderers handed to an AnnotationKit (its third argument, or render=)."""
    names = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "AnnotationKit":
                given = (
                    node.args[2]
                    if len(node.args) > 2
                    else next(k.value for k in node.keywords if k.arg == "render")
                )
                names.add(given.id if isinstance(given, ast.Name) else ast.unparse(given))
    return names


def test_no_panel_renders_an_item_past_the_kits_view() -> None:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PANELS.glob("*.py"))}
    renderers = _renderers(trees)
    assert renderers == {"_show", "show"}  # the five annotation panels name theirs so
    calls = [
        f"{path.name}:{node.lineno}"
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in renderers)
            or (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in renderers
                and ast.unparse(node.func.value) != "KIT"
            )
        )
    ]
    assert calls == [], f"call KIT.show instead (the task's annotator view): {calls}"
