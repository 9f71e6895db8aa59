"""Perturbation check: ConfProBench's quality control of perturbed steps and images (docs/PROTOCOLS.md D3-D4).

A checker compares an original with its perturbed version against the checklist of its type (S1-S5
synonym, T1-T4 syntactic, I1-I2 image) and confirms or denies each item; the variant passes when every
item holds. A failed variant is re-perturbed (same type, same step or image) and comes back as a new
version of the item; the paper sets no cap, a team may set one (max_attempts), past which the item is
"failed" with its history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.base import ANNOTATOR_DEFAULTS, Choice, Decision, Item, NumberSetting, PayloadError, TaskSpec
from tasks.view import AnnotatorView

__all__ = ["CHECKLISTS", "CHOICES", "PERTURBATION_TYPES", "SPEC", "checklist_of", "perturbation_of"]

PERTURBATION_TYPES = ("synonym", "syntactic", "image")

# D3, the paper's items only (001 l.109, l.114); wording paraphrased as the sheet gives it.
CHECKLISTS: dict[str, dict[str, str]] = {
    "synonym": {
        "S1": "at least one non-technical term was replaced",
        "S2": "the original syntactic structure and semantic information are preserved",
        "S3": "technical terms and domain-specific vocabulary are unchanged",
        "S4": "numerical values and mathematical expressions are not modified",
        "S5": "the rewritten step is grammatically correct and fluent",
    },
    "syntactic": {
        "T1": "no mathematical derivation, intermediate step or key expression was omitted",
        "T2": "all numerical and symbolic content is intact",
        "T3": "the sentence keeps its original meaning",
        "T4": "the target structural transformation was appropriately applied",
    },
    "image": {
        "I1": "the modification introduced no semantic information drift",
        "I2": "the modification did not obscure essential visual information",
    },
}
CHOICES = {"verdict": Choice("Verdict", ("pass", "fail"))}


def perturbation_of(item: Item) -> dict[str, Any]:
    """The item's perturbation record (type, operation or transformation, parameters, seed, attempt)."""
    meta = getattr(item, "meta", None) or {}
    found = meta.get("perturbation")
    return found if isinstance(found, dict) else {}


def checklist_of(item: Item) -> dict[str, str]:
    kind = perturbation_of(item).get("type")
    if kind not in CHECKLISTS:
        raise PayloadError(f"this item has no perturbation type ({kind!r}); it cannot be checked")
    return CHECKLISTS[kind]


def _validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
    checklist = checklist_of(item)
    checks = payload.get("checks")
    if not isinstance(checks, dict):
        raise PayloadError(f"checks: an object of {', '.join(checklist)} to true or false")
    unknown = sorted(set(checks) - set(checklist))
    if unknown:
        raise PayloadError(f"checks: {', '.join(map(str, unknown))} are not items of this checklist")
    missing = [key for key in checklist if not isinstance(checks.get(key), bool)]
    if missing:
        raise PayloadError(f"please confirm or deny every item: {', '.join(missing)} left open")
    clean = {key: bool(checks[key]) for key in checklist}
    verdict = "pass" if all(clean.values()) else "fail"
    given = payload.get("verdict")
    if given not in (None, "", verdict):
        raise PayloadError(f"Verdict: {given!r} contradicts the checklist, which gives {verdict!r}")
    return {"checks": clean, "verdict": verdict}


def _decide(labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item) -> Decision:
    """One checker by default (D3); with more, every checker must pass the variant (all items hold)."""
    if len(labels) < target:
        return Decision(target, "open", None, None)
    failed = sorted({key for p in labels for key, ok in (p.get("checks") or {}).items() if not ok})
    if failed or any(p.get("verdict") != "pass" for p in labels):
        return Decision(target, "rejected", {"labels": len(labels), "failed": failed}, len(labels))
    return Decision(target, "accepted", {"labels": len(labels)}, len(labels))


SPEC = TaskSpec(
    name="perturbation_check",
    title="Perturbation check",
    choices=CHOICES,
    defaults=dict(ANNOTATOR_DEFAULTS),
    export_formats=(),
    validate_label=_validate,
    decide_item=_decide,
    # the checker sees how the variant was made, never which attempt it is (its seed follows the attempt)
    annotator_view=AnnotatorView(meta_keys=("perturbation",), inner_cut=("attempt", "seed")),
    # D4: re-apply = regenerate all candidates and draw again (the literal reading), or draw another of
    # the remaining candidates. D1.4: one operation drawn per problem (all its images), or per image.
    options={"reapply": ("regenerate", "remaining"), "image_draw": ("per_problem", "per_image")},
    numbers={
        "max_attempts": NumberSetting(
            0, 0, why="variants per step or image before it is marked failed; 0: no cap, as in the paper (D4)"
        ),
        "warn_after_attempts": NumberSetting(
            5, 1, why="admins are warned about a unit past this many variants"
        ),
        "candidates": NumberSetting(5, 1, 20, why="candidate rewrites asked per step; one is drawn (D2: 5)"),
        "seed": NumberSetting(
            0, 0, why="the seed every draw starts from (operations, candidates, parameters)"
        ),
        "scale_low": NumberSetting(0.5, 0.1, 1.0, whole=False, why="smallest scale factor (not published)"),
        "scale_high": NumberSetting(1.5, 1.0, 3.0, whole=False, why="largest scale factor (not published)"),
        "rotate_max": NumberSetting(
            180, 1, 180, whole=False, why="largest rotation, degrees, canvas enlarged"
        ),
        "noise_low": NumberSetting(
            5, 0.5, 64, whole=False, why="smallest Gaussian noise sigma (0-255 scale)"
        ),
        "noise_high": NumberSetting(
            25, 0.5, 128, whole=False, why="largest Gaussian noise sigma (0-255 scale)"
        ),
    },
    regenerate_on_reject=True,
)
