"""The default behaviour behind the extension points (services/hooks.py), registered per task.

What follows a decision: the quality gate's accepted edit becomes a new item version
(services/gate_versions.py) and its reject goes back to generation (services/regeneration.py); a
failed perturbation check makes a new variant (services/perturbation.py). What runs each job kind:
regenerate and judge (regeneration), perturb (perturbation). Each registration follows its task's
spec (tasks/): versions_from_edits, regenerate_on_reject.
"""

from __future__ import annotations

from services import gate_versions, perturbation, regeneration
from services.hooks import Hooks
from tasks import PERTURBATION_CHECK, QUALITY_GATE, spec_for

__all__ = ["register_defaults"]


def register_defaults(hooks: Hooks) -> Hooks:
    """Register the default behaviour; registering twice changes nothing."""
    if spec_for(QUALITY_GATE).versions_from_edits:
        hooks.revise_decision(QUALITY_GATE, gate_versions.follow_up)
    if spec_for(QUALITY_GATE).regenerate_on_reject:
        hooks.after_decision(QUALITY_GATE, regeneration.on_reject)
    if spec_for(PERTURBATION_CHECK).regenerate_on_reject:
        hooks.after_decision(PERTURBATION_CHECK, perturbation.on_failed_check)
    hooks.run_job("regenerate", regeneration.run_regenerate)
    hooks.run_job("judge", regeneration.run_judge)
    hooks.run_job("perturb", perturbation.run_job)
    hooks.run_job(perturbation.TEXT_JOB, perturbation.run_job)
    return hooks
