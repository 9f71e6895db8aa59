"""The panels, in tab order: one module per panel, each with a build(ctx)."""

from __future__ import annotations

from ui.panels import planned

__all__ = ["PANELS"]

PANELS = [
    ("Step review", planned.step_review),
    ("Earliest error", planned.earliest_error),
    ("Quality gate", planned.quality_gate),
    ("Perturbation check", planned.perturbation_check),
    ("Step-match study", planned.step_match),
    ("QC dashboard", planned.dashboard),
    ("Browse", planned.browse),
    ("Data", planned.data),
]
