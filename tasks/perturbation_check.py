"""Perturbation check: ConfProBench's quality control of perturbed steps and images.

A checker compares an original with its perturbed version against the type's checklist and
passes or fails the variant. The panel is still to come; until then a label is its verdict.
"""

from __future__ import annotations

from tasks.base import Choice, choices_spec

__all__ = ["CHOICES", "SPEC"]

CHOICES = {"verdict": Choice("Verdict", ("pass", "fail"))}
SPEC = choices_spec("perturbation_check", "Perturbation check", CHOICES)
