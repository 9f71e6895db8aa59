"""API tokens for scripts (migration 11): stored as a SHA-256 hash, shown once, revoked, never edited.

A token is 32 random bytes, so a fast hash is as safe as scrypt here and costs microseconds on
every scripted request; a leaked database does not hand out working tokens.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from store.errors import StoreNotFoundError, StoreRequestError
from store.users import Annotator, get_user_by_id

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "PREFIX",
    "ApiToken",
    "TokenError",
    "UnknownTokenError",
    "create_token",
    "list_tokens",
    "revoke_token",
    "token_owner",
]

PREFIX = "sgt_"  # says what the secret is when it turns up in a script or a log someone pastes
_SHOWN = 12  # characters of the token kept in clear, to tell tokens apart in a list
_COLUMNS = "t.id, t.name, a.name, a.role, t.prefix, t.created_by, t.created_at, t.revoked_at"


class TokenError(StoreRequestError):
    """A token request that cannot be done, said in words the admin can act on."""


class UnknownTokenError(TokenError, StoreNotFoundError):
    """The token a request names (by id) does not exist."""


@dataclass(frozen=True)
class ApiToken:
    id: int
    name: str
    owner: str
    role: str
    prefix: str
    created_by: str | None
    created_at: datetime
    revoked_at: datetime | None


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(store: Store, owner: Annotator, name: str, created_by: str | None) -> tuple[ApiToken, str]:
    """A new token acting as `owner`; returns its record and the token itself (shown once)."""
    token = PREFIX + secrets.token_urlsafe(32)
    with store.writing() as tx:
        tx.execute(
            "INSERT INTO api_tokens (annotator_id, name, token_hash, prefix, created_by) VALUES (?, ?, ?, ?, ?)",
            [owner.id, name, _hash(token), token[:_SHOWN], created_by],
        )
        row = tx.fetchone(
            f"SELECT {_COLUMNS} FROM api_tokens t JOIN annotators a ON a.id = t.annotator_id "
            "WHERE t.token_hash = ?",
            [_hash(token)],
        )
    if row is None:
        raise TokenError("the token was not stored; try again")
    return ApiToken(*row), token


def list_tokens(db: Store | Tx) -> list[ApiToken]:
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM api_tokens t JOIN annotators a ON a.id = t.annotator_id ORDER BY t.id"
    )
    return [ApiToken(*row) for row in rows]


def revoke_token(store: Store, token_id: int) -> ApiToken:
    with store.writing() as tx:
        row = tx.fetchone("SELECT revoked_at FROM api_tokens WHERE id = ?", [token_id])
        if row is None:
            raise UnknownTokenError(f"no API token with id {token_id} (see `tokens list`)")
        if row[0] is None:
            tx.execute("UPDATE api_tokens SET revoked_at = current_timestamp WHERE id = ?", [token_id])
        found = tx.fetchone(
            f"SELECT {_COLUMNS} FROM api_tokens t JOIN annotators a ON a.id = t.annotator_id WHERE t.id = ?",
            [token_id],
        )
    if found is None:
        raise UnknownTokenError(f"no API token with id {token_id}")
    return ApiToken(*found)


def token_owner(db: Store | Tx, token: str) -> Annotator | None:
    """The annotator a live token acts for (their current role), or None: unknown, revoked, or its
    owner removed. Read each time, so a revoke counts from the next request, on every replica."""
    if not token.startswith(PREFIX):
        return None
    row = db.fetchone(
        "SELECT t.annotator_id FROM api_tokens t JOIN annotators a ON a.id = t.annotator_id "
        "WHERE t.token_hash = ? AND t.revoked_at IS NULL AND a.removed_at IS NULL",
        [_hash(token)],
    )
    return get_user_by_id(db, int(row[0])) if row is not None else None
