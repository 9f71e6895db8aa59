"""The panels, in tab order: one module per panel, each with a build(ctx), and who sees its tab.

A tab is shown to the roles that can use it (services.access.may_open_panel); every handler
checks the role again, since Gradio exposes each event over HTTP.
"""

from __future__ import annotations

from types import ModuleType

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

__all__ = ["PANELS", "tab_elem_id", "tab_key"]

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


def tab_key(module: ModuleType) -> str:
    """A panel's tab id (a link's `?tab=`): its module's name."""
    return module.__name__.rsplit(".", 1)[-1]


def tab_elem_id(module: ModuleType) -> str:
    """The HTML id of a panel's tab, which its script and the roles' pages find it by."""
    return f"tab-{tab_key(module)}"
