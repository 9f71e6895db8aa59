"""Who may do what: every role rule of the app, checked here once.

The panels and the HTTP API find the session user (ui/auth.py); the services call these checks
before they read or write anything, so a panel event called over HTTP by a script meets the same
rule as a click.
"""

from __future__ import annotations

from services.errors import NotAllowed
from store.users import Annotator

__all__ = [
    "AUDIENCES",
    "may_fetch_file",
    "may_open_panel",
    "may_see_archived",
    "require_admin",
    "require_dataset_keeper",
    "require_reviewer",
    "require_uploader",
]


def require_reviewer(user: Annotator) -> Annotator:
    """Adjudicators and admins see other annotators' labels; annotators work blind."""
    if not user.can_see_labels:
        raise NotAllowed("Only adjudicators and admins can see other annotators' labels.")
    return user


def require_admin(user: Annotator) -> Annotator:
    if not user.is_admin:
        raise NotAllowed(f"{user.name} is an {user.role}: only an admin can do this.")
    return user


def require_dataset_keeper(actor: Annotator | None) -> None:
    """Archive, restore or remove a dataset: admins, and the operator at the command line (None)."""
    if actor is not None and not actor.is_admin:
        raise NotAllowed(f"{actor.name} is an {actor.role}: only an admin archives or removes a dataset.")


def may_see_archived(user: Annotator) -> bool:
    """Archived datasets are hidden from everyone but admins (kept whole for them, exportable)."""
    return user.is_admin


def require_uploader(user: Annotator) -> Annotator:
    """Uploads feed the Data panel's import, an admin's task: nobody else may send files."""
    if not user.is_admin:
        raise NotAllowed(
            f"{user.name} is an {user.role}: only admins upload files (the Data panel's import)."
        )
    return user


def may_fetch_file(user: Annotator, owner: str) -> bool:
    """A file made for a user (export, report) goes to that user and to admins only."""
    return user.name == owner or user.is_admin


AUDIENCES = ("everyone", "reviewers", "admins")


def may_open_panel(user: Annotator, audience: str) -> bool:
    """Which tabs a user sees: the ones whose work their role may do (the handlers check again)."""
    if audience == "admins":
        return user.is_admin
    if audience == "reviewers":
        return user.can_see_labels
    return True
