"""Step match: CRYSTAL's metric validation (supplementary S5): does a predicted step match a reference step?

Annotators label sampled pairs match / no-match, blind to the encoder's similarity and decision.
"""

from __future__ import annotations

from tasks.base import Choice, choices_spec

__all__ = ["CHOICES", "SPEC"]

CHOICES = {"match": Choice("Match", ("match", "no_match"))}
SPEC = choices_spec("step_match", "Step-match study", CHOICES)
