"""The panels, in tab order: one module per panel, each with a build(ctx), and who sees its tab.

A tab is shown to the roles that can use it (services.access.may_open_panel); every handler
checks the role again, since Gradio exposes each event over HTTP.
"""

from __future__ import annotations

from ui.panels import (
    browse,
    dashboard,
    data,
    earliest_error,
    home,
    jobs,
    perturbation_check,
    quality_gate,
    scores,
    step_match,
    step_review,
)

__all__ = ["PANELS"]

# (title, module, audience): "everyone", "reviewers" (adjudicators and admins) or "admins".
PANELS = [
    ("Home", home, "everyone"),
    ("Step review", step_review, "everyone"),
    ("Earliest error", earliest_error, "everyone"),
    ("Quality gate", quality_gate, "everyone"),
    ("Perturbation check", perturbation_check, "everyone"),
    ("Step-match study", step_match, "everyone"),
    ("QC dashboard", dashboard, "reviewers"),
    ("Browse", browse, "everyone"),  # annotators: their own finished work only (services.browse)
    ("Scores", scores, "reviewers"),
    ("Data", data, "admins"),
    ("Jobs", jobs, "admins"),
]
