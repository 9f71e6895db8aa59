"""Composing the services: what app.py calls once, before anything is served or run.

Registers the default behaviour at the extension points (services/defaults.py into services.hooks)
and chooses the store's leases (services/leasing.py: in memory over DuckDB, in the database over
PostgreSQL).
"""

from __future__ import annotations

from services.defaults import register_defaults
from services.hooks import HOOKS, Hooks
from services.leasing import compose_leases
from store.db import Store

__all__ = ["compose"]


def compose(store: Store | None = None) -> Hooks:
    """Register the default follow-ups and job runners, and choose the store's leases; calling it again
    changes nothing."""
    if store is not None:
        compose_leases(store)
    return register_defaults(HOOKS)
