"""Who may do what: every role rule of the app, checked here once.

The panels and the HTTP API find the session user (ui/auth.py); the services call these checks
before they read or write anything, so a panel event called over HTTP by a script meets the same
rule as a click.
"""

from __future__ import annotations

from services.errors import NotAllowed
from store.users import Annotator

__all__ = ["require_admin", "require_reviewer"]


def require_reviewer(user: Annotator) -> Annotator:
    """Adjudicators and admins see other annotators' labels; annotators work blind."""
    if not user.can_see_labels:
        raise NotAllowed("Only adjudicators and admins can see other annotators' labels.")
    return user


def require_admin(user: Annotator) -> Annotator:
    if not user.is_admin:
        raise NotAllowed(f"{user.name} is an {user.role}: only an admin can do this.")
    return user
