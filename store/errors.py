"""The store's one error root: what a caller may catch, and what it means for the user.

StoreUnavailableError: the database cannot be used (locked by another process, missing folder,
full disk, closed); nothing was stored. StoreRequestError: a request the store refuses (an unknown
name, a bad setting, a bad line of an import); its message names what is wrong and where. Its
kinds say which refusal it is, so that the services turn each into their own error by its type
(services.errors.from_store), never by its text: StoreNotFoundError (the row named does not exist),
StoreStateError (the row is not in a state that allows the request).
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")

__all__ = [
    "StoreClosedError",
    "StoreConflictError",
    "StoreError",
    "StoreExclusiveNeeded",
    "StoreLockedError",
    "StoreNotFoundError",
    "StoreOpenError",
    "StoreRequestError",
    "StoreStateError",
    "StoreUnavailableError",
    "written",
]


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class StoreUnavailableError(StoreError):
    """The database file cannot be read or written just now; nothing was stored."""


class StoreLockedError(StoreUnavailableError):
    """Another process holds the database file."""


class StoreOpenError(StoreUnavailableError):
    """The database file cannot be opened or written (missing folder, read-only, disk full)."""


class StoreClosedError(StoreUnavailableError):
    """The store was used after close()."""


class StoreConflictError(StoreError):
    """A write the database refused as it stands (a unique key already taken, a concurrent write):
    the transaction is unusable and is rolled back; nothing of it was stored."""


class StoreExclusiveNeeded(StoreError):
    """A shared write (a label, Store.writing(shared=True)) found it must do what only an exclusive one
    may (what follows a decision, a nested exclusive write): it is rolled back, nothing of it stored, and
    its caller runs it again exclusively. Never reaches a user."""


class StoreRequestError(StoreError, ValueError):
    """A request the store refuses; the message is for the user who made it."""


class StoreNotFoundError(StoreRequestError):
    """The row a request names (a job, an item, a dataset) does not exist."""


class StoreStateError(StoreRequestError):
    """The row a request names is not in a state that allows it (e.g. a retry of a job that is not failed)."""


def written(value: T | None, what: str) -> T:
    """A row read back inside the transaction that wrote it: missing means the write did not land."""
    if value is None:
        raise StoreError(f"{what} was written but cannot be read back; nothing was stored")
    return value
