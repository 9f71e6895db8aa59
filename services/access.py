"""Who may do what: every role rule of the app, checked here once, for an explicit actor.

An actor is a user (an Annotator from the session or an API token) or OPERATOR: whoever runs
`python app.py` at the command line owns the database file, so every action is theirs. Each rule is
a named action with its policy (after argilla-server's policies); ``require(actor, action)`` is the
one check. The panels and the HTTP API find the session user (ui/auth.py); the services call the
check before they read or write anything, so a panel event called over HTTP by a script meets the
same rule as a click. require_admin, require_reviewer and require_uploader are that check for one
action each, under the names the panels call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from services.errors import NotAllowed
from store.users import Annotator

__all__ = [
    "AUDIENCES",
    "OPERATOR",
    "Action",
    "Actor",
    "Operator",
    "may_fetch_file",
    "may_open_panel",
    "may_see_archived",
    "require",
    "require_admin",
    "require_reviewer",
    "require_uploader",
]


class Action(StrEnum):
    """What a service may be asked to do that not every role may."""

    SEE_LABELS = "see other annotators' labels"  # adjudicators and admins; annotators work blind
    ADMINISTER = "administer"  # datasets, users, tokens, jobs, generators, studies: admins
    UPLOAD = "upload files"  # files sent to the server feed the Data panel's import: admins
    KEEP_DATASETS = "archive, restore or remove a dataset"  # admins


@dataclass(frozen=True)
class Operator:
    """The command line: the owner of the database file, who may do everything. No annotator row."""

    name: str = "command line"
    role: str = "operator"
    id: None = None

    @property
    def can_see_labels(self) -> bool:
        return True

    @property
    def is_admin(self) -> bool:
        return True


OPERATOR = Operator()
Actor = Annotator | Operator

# Per action: who may, and what a user who may not is told.
_POLICIES: dict[Action, tuple[Callable[[Annotator], bool], Callable[[Annotator], str]]] = {
    Action.SEE_LABELS: (
        lambda user: user.can_see_labels,
        lambda user: "Only adjudicators and admins can see other annotators' labels.",
    ),
    Action.ADMINISTER: (
        lambda user: user.is_admin,
        lambda user: f"{user.name} is an {user.role}: only an admin can do this.",
    ),
    Action.UPLOAD: (
        lambda user: user.is_admin,
        lambda user: f"{user.name} is an {user.role}: only admins upload files (the Data panel's import).",
    ),
    Action.KEEP_DATASETS: (
        lambda user: user.is_admin,
        lambda user: f"{user.name} is an {user.role}: only an admin archives or removes a dataset.",
    ),
}


def require(actor: Actor, action: Action) -> None:
    """Refuse (NotAllowed, with the reason for that user) unless this actor may do this action."""
    if isinstance(actor, Operator):
        return
    allowed, refusal = _POLICIES[action]
    if not allowed(actor):
        raise NotAllowed(refusal(actor))


def require_reviewer(user: Annotator) -> Annotator:
    """Adjudicators and admins see other annotators' labels; annotators work blind."""
    require(user, Action.SEE_LABELS)
    return user


def require_admin(user: Annotator) -> Annotator:
    require(user, Action.ADMINISTER)
    return user


def may_see_archived(user: Annotator) -> bool:
    """Archived datasets are hidden from everyone but admins (kept whole for them, exportable)."""
    return user.is_admin


def require_uploader(user: Annotator) -> Annotator:
    """Uploads feed the Data panel's import, an admin's task: nobody else may send files."""
    require(user, Action.UPLOAD)
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
