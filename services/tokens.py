"""API tokens for scripts: an admin creates, lists and revokes them; a request bearing one acts as its
owner, with the owner's current role, through the same checks (services.access) as a session user.

`acting` is the session user when the request comes from the app, or OPERATOR at the command line
(services.access: whoever owns the database file). A token is shown once, at creation; only its hash
is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.access import OPERATOR, Action, Actor, require
from services.errors import InvalidInput, NotFound, ServiceError, from_store
from store import tokens, users
from store.tokens import ApiToken, TokenError
from store.users import Annotator

if TYPE_CHECKING:
    from store import Store

__all__ = ["ApiToken", "TokenRefused", "create", "list_all", "owners", "revoke", "user_for_token"]

MAX_NAME = 80


class TokenRefused(ServiceError):
    """No usable token came with the request (HTTP 401); nothing was done."""


def _check(acting: Actor) -> None:
    require(acting, Action.ADMINISTER)


def create(store: Store, acting: Actor, owner: str, name: str) -> tuple[ApiToken, str]:
    """A token acting as `owner`; returns its record and the token, which is never shown again."""
    _check(acting)
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME:
        raise InvalidInput(f"Give the token a name of 1 to {MAX_NAME} characters (what the script is for).")
    user = users.get_user(store, (owner or "").strip())
    if user is None:
        raise NotFound(f"There is no annotator named {owner!r}: a token acts as an existing annotator.")
    return tokens.create_token(store, user, name, None if acting is OPERATOR else acting.name)


def list_all(store: Store, acting: Actor) -> list[ApiToken]:
    _check(acting)
    return tokens.list_tokens(store)


def owners(store: Store, acting: Actor) -> list[str]:
    """The annotators a new token may act as (not removed), by name."""
    _check(acting)
    return [u.name for u in users.list_users(store)]


def revoke(store: Store, acting: Actor, token_id: int) -> ApiToken:
    _check(acting)
    try:
        return tokens.revoke_token(store, token_id)
    except TokenError as exc:
        raise from_store(exc) from exc


def user_for_token(store: Store, authorization: str | None) -> Annotator:
    """The annotator an `Authorization: Bearer TOKEN` header acts for; TokenRefused otherwise."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenRefused(
            "Send an API token as 'Authorization: Bearer TOKEN' (an admin makes one with "
            "`python app.py tokens create`), or log in."
        )
    user = tokens.token_owner(store, token.strip())
    if user is None:
        raise TokenRefused(
            "This API token is unknown or revoked (or its annotator was removed); nothing "
            "was done. Ask an admin for a new one."
        )
    return user
