"""The one error root of the services layer: every message says what went wrong and what to do.

The panels show a ServiceError's text as it is; the HTTP API returns it as the error message.
Nothing was stored when one is raised. A refusal of the store becomes one here, by its type, in one
place (from_store).
"""

from __future__ import annotations

from store.errors import StoreConflictError, StoreNotFoundError, StoreRequestError

__all__ = [
    "AlreadyLabelled",
    "Conflict",
    "InvalidInput",
    "NotAllowed",
    "NotFound",
    "ServiceError",
    "from_store",
]


class ServiceError(Exception):
    """A request a user made that cannot be done; the message is for that user."""


class NotAllowed(ServiceError):
    """The user's role (or the task's blindness) does not allow this."""


class NotFound(ServiceError):
    """The dataset, item, user or file named does not exist (or is not the user's to see)."""


class InvalidInput(ServiceError):
    """A field is missing, of the wrong type, too large or out of range."""


class Conflict(ServiceError):
    """The request clashes with the current state (an item changed, a request id reused)."""


class AlreadyLabelled(Conflict):
    """The page showed an item as new, but its annotator saved a label on it elsewhere (another tab)."""


def from_store(exc: StoreRequestError | StoreConflictError) -> ServiceError:
    """The store's refusal as the services' error of its kind, with its message for the user."""
    if isinstance(exc, StoreNotFoundError):
        return NotFound(str(exc))
    if isinstance(exc, StoreConflictError):
        return Conflict(str(exc))
    return InvalidInput(str(exc))
