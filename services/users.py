"""Managing annotators: add, list, set a password or role, remove. Only admins do it from the UI.

`acting` is the session user when the request comes from the app, or OPERATOR at the command line
(services.access: whoever owns the database file); admins only. A refusal of the store (an unknown
name, a short password) becomes the services' error by its type (services.errors.from_store). Every
change that touches a password, a role or an account also ends that annotator's open sessions
(store.users moves their session epoch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.access import OPERATOR, Action, Actor, require
from services.errors import InvalidInput, from_store
from store import users
from store.users import MIN_PASSWORD, Annotator, UserError

if TYPE_CHECKING:
    from store import Store

__all__ = ["MIN_PASSWORD", "add", "check_login", "find", "list_all", "remove", "set_password", "set_role"]


def _check(acting: Actor) -> None:
    require(acting, Action.ADMINISTER)


def add(store: Store, acting: Actor, name: str, role: str, password: str | None) -> Annotator:
    """``password`` None: an account without one (the command line's `--no-password`, local mode only)."""
    _check(acting)
    try:
        return users.add_user(store, (name or "").strip(), role, password)
    except UserError as exc:
        raise from_store(exc) from exc


def list_all(store: Store, acting: Actor) -> list[Annotator]:
    _check(acting)
    return users.list_users(store)


def set_password(store: Store, acting: Actor, name: str, password: str) -> None:
    _check(acting)
    try:
        users.set_password(store, name, password or "")
    except UserError as exc:
        raise from_store(exc) from exc


def set_role(store: Store, acting: Actor, name: str, role: str) -> None:
    _check(acting)
    if acting is not OPERATOR and acting.name == name and role != "admin":
        raise InvalidInput("You cannot take away your own admin role; ask another admin.")
    try:
        users.set_role(store, name, role)
    except UserError as exc:
        raise from_store(exc) from exc


def remove(store: Store, acting: Actor, name: str) -> None:
    _check(acting)
    if acting is not OPERATOR and acting.name == name:
        raise InvalidInput("You cannot remove yourself; ask another admin.")
    target = users.get_user(store, name)
    if target is not None and target.is_admin and sum(u.is_admin for u in users.list_users(store)) == 1:
        raise InvalidInput(f"{name} is the last admin; make someone else admin first.")
    try:
        users.remove_user(store, name)
    except UserError as exc:
        raise from_store(exc) from exc


def find(store: Store, name: str) -> Annotator | None:
    """The annotator of a session, by name (from the store's read cache)."""
    return users.get_user(store, name) if name else None


def check_login(store: Store, local: bool, name: str, password: str) -> bool:
    """A login. Team mode checks the password; local mode also lets a new name in.

    In local mode a new name creates the annotator with the password typed, which follows the one
    password rule (InvalidInput says so: never an account without one), so the name stays theirs;
    the first person on a fresh local database is its admin. A name an operator created without a
    password (`users add --no-password`) logs in with any password on this machine; a name that has a
    password keeps it even there.
    """
    name = (name or "").strip()
    existing = users.get_user(store, name)
    if not local:
        return users.authenticate(store, name, password or "") is not None
    if existing is not None:
        return not existing.has_password or users.authenticate(store, name, password or "") is not None
    if len(password or "") < MIN_PASSWORD:
        raise InvalidInput(
            f"A new name needs a password of at least {MIN_PASSWORD} characters: nothing was created."
        )
    try:
        role = "admin" if not users.list_users(store) else "annotator"
        users.add_user(store, name, role, password)
    except UserError:
        return False
    return True
