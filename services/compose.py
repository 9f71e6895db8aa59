"""Composing the services: what app.py (and a test's app) calls once, before anything is served.

Registers the default behaviour at the extension points (services/defaults.py into services.hooks).
"""

from __future__ import annotations

from services.defaults import register_defaults
from services.hooks import HOOKS, Hooks

__all__ = ["compose"]


def compose() -> Hooks:
    """Register the default follow-ups and job runners; calling it again changes nothing."""
    return register_defaults(HOOKS)
