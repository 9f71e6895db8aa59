"""Quality gate: CRYSTAL's phase-4 human gate (its Figure S3) over multimodal items.

An annotator reads the item (image, question, options, answer, source), marks each candidate step
correct or incorrect, edits the steps where needed (edit, add, delete, reorder), checks the four
criteria of CRYSTAL's supplement (C1-C4, 004 l.247-257) and accepts or rejects the item. Accept only
when all four hold; a reject names the failed criteria and a reason (docs/PROTOCOLS.md E2, "beyond the
papers").

What the paper leaves open (docs/PROTOCOLS.md E5) is a dataset setting: the share of items that get two blind
annotators (drawn from the item id and a seed, so the same items every time), and what steps count
as the same when candidate steps are grouped. Two annotators who differ in verdict or in their edited
steps send the item to an adjudicator, whose verdict and steps are final.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tasks.base import ANNOTATOR_DEFAULTS, Choice, Decision, Item, NumberSetting, PayloadError, TaskSpec

__all__ = [
    "CRITERIA",
    "MAX_STEPS",
    "MAX_STEP_CHARS",
    "NUMBERS",
    "OPTIONS",
    "RULING",
    "RULINGS",
    "SPEC",
    "STEP_ROLE",
    "Criterion",
    "annotators_needed",
    "failed_criteria",
    "is_dual",
    "is_dual_item",
    "parse_steps_text",
    "validate_ruling",
]


@dataclass(frozen=True)
class Criterion:
    name: str  # the supplement's name
    asks: str  # its definition, as the annotator reads it


# CRYSTAL supplement's four criteria, in its order (004 l.247-257; docs/PROTOCOLS.md E1 Phase 3).
CRITERIA: dict[str, Criterion] = {
    "c1": Criterion("Logical soundness", "no contradictions between steps"),
    "c2": Criterion("Sequential coherence", "no unexplained reasoning jumps"),
    "c3": Criterion("Visual grounding", "every perceptual claim can be verified in the image"),
    "c4": Criterion("Answer consistency", "executing the steps yields the answer"),
}
VERDICT = Choice("Verdict", ("accept", "reject"))
STEP_MARKS = ("correct", "incorrect")
STEP_ROLE = "candidate"  # the step list a CRYSTAL item carries (importers.crystal)
RULING = "adjudication"  # the payload key of an adjudicator's ruling (as in step review)
RULINGS = VERDICT.values
MAX_STEPS = 200  # the paper's chains have 3-42 reference steps (Table 1)
MAX_STEP_CHARS = 2_000
MAX_REASON_CHARS = 1_000

NUMBERS: dict[str, NumberSetting] = {
    # Not in the paper ("dual-annotation on a subset", 004 l.263): the sheet's recommended 10 % (E5).
    "dual_percent": NumberSetting(
        10,
        0,
        100,
        whole=False,
        why="share of items (percent) that get two blind annotators; CRYSTAL gives none",
    ),
    "dual_seed": NumberSetting(0, 0, 2**31 - 1, why="which items are dual-annotated (same seed, same items)"),
    # tau_cluster of phase 2 (004 l.237): above the evaluation tau 0.35 so only strong paraphrases merge.
    "cluster_threshold": NumberSetting(
        0.45,
        0,
        1,
        whole=False,
        why="cosine similarity at which two candidate steps are grouped (CRYSTAL 0.45)",
    ),
}
# Grouping candidate steps needs the sentence encoder: off by default, so the gate never waits on it.
OPTIONS: dict[str, tuple[str, ...]] = {"step_groups": ("off", "encoder")}


def is_dual(external_id: str, percent: float, seed: int = 0) -> bool:
    """The item gets two blind annotators: a stable draw from its id and the seed (not from its place)."""
    if percent <= 0:
        return False
    digest = hashlib.sha256(f"{int(seed)}:{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 * 100 < percent


def is_dual_item(external_id: str, settings: Mapping[str, Any]) -> bool:
    """is_dual with the dataset's settings (or their defaults)."""
    return is_dual(
        external_id,
        float(settings.get("dual_percent", NUMBERS["dual_percent"].default)),
        int(settings.get("dual_seed", NUMBERS["dual_seed"].default)),
    )


def annotators_needed(external_id: str, settings: Mapping[str, Any]) -> int:
    """How many annotators an item takes: two for a dual item, else the dataset's annotators_per_item."""
    return max(int(settings.get("annotators_per_item", 1)), 2 if is_dual_item(external_id, settings) else 1)


def parse_steps_text(text: str) -> list[str]:
    """One step per line (the figure's text area): lines trimmed, empty ones dropped, order kept."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def failed_criteria(criteria: Mapping[str, bool]) -> list[str]:
    """The criteria that do not hold, in the supplement's order."""
    return [key for key in CRITERIA if not criteria.get(key)]


def _criteria(payload: Mapping[str, Any]) -> dict[str, bool]:
    given = payload.get("criteria", {})
    if not isinstance(given, Mapping) or any(
        k not in CRITERIA or not isinstance(v, bool) for k, v in given.items()
    ):
        raise PayloadError(f"criteria: an object of {', '.join(CRITERIA)} to true or false")
    return {key: bool(given.get(key, False)) for key in CRITERIA}


def _steps(value: Any, item: Item | None) -> list[str] | None:
    """The edited step list, or None when there is none or it equals the item's own steps."""
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(s, str) for s in value):
        raise PayloadError("edited steps: a list of step texts")
    steps = [s.strip() for s in value if s.strip()]
    if not steps:
        raise PayloadError("edited steps: at least one step; to throw the chain away, reject the item")
    if len(steps) > MAX_STEPS:
        raise PayloadError(f"edited steps: at most {MAX_STEPS} steps, not {len(steps)}")
    long = [i + 1 for i, s in enumerate(steps) if len(s) > MAX_STEP_CHARS]
    if long:
        raise PayloadError(f"edited steps: step {long[0]} is longer than {MAX_STEP_CHARS:,} characters")
    if item is not None and steps == list(item.steps.get(STEP_ROLE, [])):
        return None
    return steps


def _reason(payload: Mapping[str, Any]) -> str:
    reason = payload.get("reason") or ""
    if not isinstance(reason, str):
        raise PayloadError("reason: must be text")
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise PayloadError(f"reason: at most {MAX_REASON_CHARS:,} characters, not {len(reason):,}")
    return reason


def _verdict(verdict: Any, criteria: dict[str, bool], reason: str) -> list[str]:
    """The failed criteria, after checking the verdict agrees with them."""
    if verdict not in VERDICT.values:
        raise PayloadError(f"Verdict: choose one of {', '.join(VERDICT.values)}")
    failed = failed_criteria(criteria)
    if verdict == "accept" and failed:
        names = ", ".join(f"{k.upper()} {CRITERIA[k].name}" for k in failed)
        raise PayloadError(
            f"Accept needs all four criteria to hold; not checked: {names}. Check them or reject"
        )
    if verdict == "reject" and not failed:
        raise PayloadError("Reject: uncheck the criteria that fail (C1-C4)")
    if verdict == "reject" and not reason:
        raise PayloadError("Reject: give a reason (what is wrong, for whoever regenerates the item)")
    return failed


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    criteria = _criteria(payload)
    reason = _reason(payload)
    verdict = payload.get("verdict")
    failed = _verdict(verdict, criteria, reason)
    edited = _steps(payload.get("edited_steps"), item)
    n_steps = len(edited if edited is not None else item.steps.get(STEP_ROLE, []))
    marks = payload.get("steps", {}) or {}
    if not isinstance(marks, Mapping):
        raise PayloadError("steps: an object of step number to 'correct' or 'incorrect'")
    clean_marks: dict[str, str] = {}
    for key, mark in marks.items():
        if mark not in STEP_MARKS:
            raise PayloadError(f"step {key}: {mark!r} is not 'correct' or 'incorrect'")
        if not str(key).isdigit() or not 1 <= int(key) <= n_steps:
            raise PayloadError(f"step {key}: there are steps 1 to {n_steps}")
        clean_marks[str(int(key))] = mark
    clean: dict[str, Any] = {"verdict": verdict, "criteria": criteria, "failed": failed, "steps": clean_marks}
    if reason:
        clean["reason"] = reason
    if edited is not None:
        clean["edited_steps"] = edited
    return clean


def validate_ruling(payload: Mapping[str, Any], item: Item | None = None) -> dict[str, Any]:
    """An adjudicator's ruling on a disputed item: accept or reject, the criteria, a reason, and the
    steps that stand (an annotator's edit, the adjudicator's own, or none for the item's own)."""
    criteria = _criteria(payload)
    reason = _reason(payload)
    ruling = payload.get(RULING)
    failed = _verdict(ruling, criteria, reason)
    clean: dict[str, Any] = {RULING: ruling, "criteria": criteria, "failed": failed}
    if reason:
        clean["reason"] = reason
    edited = _steps(payload.get("edited_steps"), item)
    if edited is not None:
        clean["edited_steps"] = edited
    return clean


def _edit_of(label: Mapping[str, Any]) -> tuple[str, ...] | None:
    steps = label.get("edited_steps")
    return tuple(steps) if steps else None


def _outcome(verdict: str, labels: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    failed = [k for k in CRITERIA if any(k in (p.get("failed") or []) for p in labels)]
    reasons = [str(p["reason"]) for p in labels if p.get("reason")]
    edit = _edit_of(labels[-1]) if labels else None
    decision: dict[str, Any] = {"verdict": verdict, "failed": failed, "reasons": reasons}
    if edit is not None:
        decision["edited_steps"] = list(edit)
    return decision


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item) -> Decision:
    """Open until the item has its annotators (two for a dual item); then accepted or rejected when
    they agree on the verdict and on the steps, else disputed; an adjudicator's ruling is final."""
    rulings = [p for p in labels if RULING in p]
    labels = [p for p in labels if RULING not in p]
    dual = is_dual_item(str(getattr(item, "external_id", "")), settings)
    target = max(target, 2 if dual else 1)
    if len(labels) < target:
        return Decision(target, "open", None, None)
    if rulings:
        ruling = rulings[-1]
        decision = {**_outcome(ruling[RULING], [ruling]), "labels": len(labels), "adjudicated": True}
        return Decision(target, f"{ruling[RULING]}ed", decision, len(labels))
    verdicts = {p["verdict"] for p in labels}
    edits = {_edit_of(p) for p in labels}
    differ = [name for name, seen in (("verdict", verdicts), ("steps", edits)) if len(seen) > 1]
    if differ:
        return Decision(target, "disputed", {"labels": len(labels), "differ": differ}, len(labels))
    verdict = verdicts.pop()
    decision = {**_outcome(verdict, labels), "labels": len(labels), "dual": dual}
    return Decision(target, f"{verdict}ed", decision, len(labels))


SPEC = TaskSpec(
    name="quality_gate",
    title="Quality gate",
    choices={"verdict": VERDICT},
    defaults=dict(ANNOTATOR_DEFAULTS),
    export_formats=("crystal",),
    validate_label=_validate,
    decide_item=_decide,
    options=OPTIONS,
    numbers=NUMBERS,
    regenerate_on_reject=True,
    versions_from_edits=True,
)
