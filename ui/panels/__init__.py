"""The panels, in tab order: one module per panel, each with a build(ctx)."""

from __future__ import annotations

from ui.panels import dashboard, data, earliest_error, planned, step_match, step_review

__all__ = ["PANELS"]

PANELS = [
    ("Step review", step_review),
    ("Earliest error", earliest_error),
    ("Quality gate", planned.quality_gate),
    ("Perturbation check", planned.perturbation_check),
    ("Step-match study", step_match),
    ("QC dashboard", dashboard),
    ("Browse", planned.browse),
    ("Data", data),
]
