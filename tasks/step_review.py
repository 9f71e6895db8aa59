"""Step review: PRMBench-V's process reward annotation tool (its Figure 13).

An annotator marks the original chain Correct/Incorrect, the modification Reasonable/Unreasonable
and the difficulty Easy/Medium/Hard. What the paper leaves open is a dataset setting whose default is
docs/PROTOCOLS.md A4's: which judgements retain an item (original correct and modification
reasonable), when difficulty is required (only for an item that would be retained), and, with several
annotators, how they are combined (the majority decides and a tie goes to an adjudicator).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import (
    ANNOTATOR_DEFAULTS,
    Choice,
    Decision,
    Item,
    PayloadError,
    TaskSpec,
    choose,
    majority_vote,
)
from tasks.view import AnnotatorView

__all__ = ["CHOICES", "FEATURES", "OPTIONS", "RULING", "RULINGS", "SPEC"]

CHOICES = {
    "original": Choice("Original", ("correct", "incorrect")),
    "modification": Choice("Modification", ("reasonable", "unreasonable")),
    "difficulty": Choice("Difficulty", ("easy", "medium", "hard")),
}


# The open choices of PRMBench-V's tool (docs/PROTOCOLS.md A4, rows 1, 4 and 7): each a dataset setting, the
# first value its default.
OPTIONS: dict[str, tuple[str, ...]] = {
    # 1: retain <=> original correct and modification reasonable; or the modification alone.
    "retain_rule": ("correct_and_reasonable", "reasonable"),
    # 4: difficulty asked only where the item would be retained; or always; or never required.
    "difficulty_required": ("when_retained", "always", "optional"),
    # 7: several annotators: majority (a tie to an adjudicator), every one must retain, or any
    # disagreement to an adjudicator.
    "disagreement_policy": ("majority", "unanimous", "adjudicate"),
}
# "Select applicable features" above each chain (A1 #11, #13): options are a dataset setting (a list of
# tags), the control is hidden while the list is empty; stored with the label, never used to retain.
FEATURES = {"original_features": "Original steps", "modified_features": "Modified steps"}
MAX_FEATURES = 40


def _retained(label: Mapping[str, Any], rule: str) -> bool:
    reasonable = label.get("modification") == "reasonable"
    return reasonable if rule == "reasonable" else reasonable and label.get("original") == "correct"


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    """The values given, each one of its choices; what must be given is _check_settings' question."""
    clean: dict[str, Any] = {}
    for key, choice in CHOICES.items():
        value = payload.get(key)
        if value not in (None, ""):
            clean.update(choose({key: value}, {key: choice}))
    for key, title in FEATURES.items():
        tags = payload.get(key)
        if tags in (None, [], ()):
            continue
        if not isinstance(tags, list | tuple) or not all(
            isinstance(t, str) and 0 < len(t) <= 80 for t in tags
        ):
            raise PayloadError(f"{title} features: a list of feature names")
        if len(tags) > MAX_FEATURES:
            raise PayloadError(f"{title} features: at most {MAX_FEATURES}")
        clean[key] = sorted(set(tags))
    return clean


def _check_settings(clean: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    """What must be given under the dataset's rules: both assessments, difficulty when its setting asks
    (for "when_retained": while the item could still be retained), and only the dataset's features."""
    need = settings.get("difficulty_required", OPTIONS["difficulty_required"][0])
    rule = settings.get("retain_rule", OPTIONS["retain_rule"][0])
    missing = [CHOICES[k].title for k in ("original", "modification") if k not in clean]
    could_retain = _retained({**{"original": "correct", "modification": "reasonable"}, **clean}, rule)
    if "difficulty" not in clean and (need == "always" or (need == "when_retained" and could_retain)):
        missing.append(CHOICES["difficulty"].title)
    if missing:
        raise PayloadError("please choose: " + ", ".join(missing))
    offered = set(settings.get("features") or ())
    for key, title in FEATURES.items():
        unknown = sorted(set(clean.get(key, ())) - offered)
        if unknown:
            raise PayloadError(f"{title} features: {', '.join(unknown)} not among this dataset's features")


RULING = "adjudication"  # the payload key of an adjudicator's ruling on a disputed item
RULINGS = ("keep", "reject")


def _difficulty(labels: list[dict[str, Any]]) -> str | None:
    """The majority's difficulty among those who gave one; a tie goes to the harder level (A4 row 7)."""
    vote = majority_vote(p.get("difficulty") for p in labels)
    if vote.status != "tie":
        return None if vote.label is None else str(vote.label)
    top = max(vote.counts.values())
    levels = CHOICES["difficulty"].values
    return str(max((d for d, n in vote.counts.items() if n == top), key=levels.index))


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item) -> Decision:
    rulings = [p for p in labels if RULING in p]
    labels = [p for p in labels if RULING not in p]
    if len(labels) < target:
        return Decision(target, "open", None, None)
    rule = settings.get("retain_rule", OPTIONS["retain_rule"][0])
    policy = settings.get("disagreement_policy", OPTIONS["disagreement_policy"][0])
    votes = [_retained(p, rule) for p in labels]
    keep = majority_vote(votes)
    decision: dict[str, Any] = {"labels": len(labels), "keep": keep.label, "difficulty": _difficulty(labels)}
    if rulings:  # a dispute went to an adjudicator: the latest ruling decides
        ruled = rulings[-1][RULING] == "keep"
        decision.update(keep=ruled, adjudicated=True)
        return Decision(target, "complete" if ruled else "rejected", decision, len(labels))
    if policy == "unanimous":
        decision["keep"] = all(votes)
    elif keep.status == "tie" or (policy == "adjudicate" and len(set(votes)) > 1):
        return Decision(target, "disputed", decision, len(labels))
    return Decision(target, "complete" if decision["keep"] else "rejected", decision, len(labels))


SPEC = TaskSpec(
    name="step_review",
    title="Step review",
    choices=CHOICES,
    defaults=dict(ANNOTATOR_DEFAULTS),
    export_formats=("prmbench",),
    validate_label=_validate,
    decide_item=_decide,
    check_settings=_check_settings,
    options=OPTIONS,
    list_settings=("features",),
    # The sample's sub-questions and the steps a rewrite dropped (ui/panels/step_review_sample.py).
    annotator_view=AnnotatorView(meta_keys=("questions", "dropped_step_numbers")),
)
