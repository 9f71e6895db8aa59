"""Annotators, their roles and password hashes (scrypt, from the standard library)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from store.cache import MISS
from store.errors import StoreNotFoundError, StoreRequestError, written

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "MIN_PASSWORD",
    "ROLES",
    "Annotator",
    "UnknownUserError",
    "UserError",
    "add_user",
    "authenticate",
    "get_user",
    "hash_password",
    "list_users",
    "remove_user",
    "set_password",
    "set_role",
    "verify_password",
]

ROLES = ("annotator", "adjudicator", "admin")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
# scrypt parameters: n=2**14, r=8 costs ~30 ms per check here, slow enough for offline guessing.
_N, _R, _P = 2**14, 8, 1
MIN_PASSWORD = 8  # characters: one rule for every password, local and team mode alike
# Checked against an unknown name so that a wrong name costs the same scrypt work as a wrong password.
_DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
_COLUMNS = "id, name, role, password_hash, sessions_valid_after"


class UserError(StoreRequestError):
    """A user-management request that cannot be done, said in words the admin can act on."""


class UnknownUserError(UserError, StoreNotFoundError):
    """The annotator a request names does not exist (or was removed)."""


@dataclass(frozen=True)
class Annotator:
    id: int
    name: str
    role: str
    has_password: bool
    # Unix time before which every session of this annotator ended (password, role change, removal).
    sessions_valid_after: float | None = None

    @property
    def can_see_labels(self) -> bool:
        """Adjudicators and admins may see others' labels; annotators work blind."""
        return self.role in ("adjudicator", "admin")

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def hash_password(password: str) -> str:
    """Called before a write begins, never inside one: its ~60 ms there would hold every other write (each
    label of a DuckDB process, of every replica over PostgreSQL) while one password is set."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    enc = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${enc(salt).decode()}${enc(digest).decode()}"


def verify_password(password: str, stored: str | None) -> bool:
    if not stored:
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        got = hashlib.scrypt(
            password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=32
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(digest))


def _row_to_user(row: tuple | None) -> Annotator | None:
    if row is None:
        return None
    valid_after = row[4] if len(row) > 4 else None
    return Annotator(
        id=row[0], name=row[1], role=row[2], has_password=row[3] is not None, sessions_valid_after=valid_after
    )


def get_user(db: Store | Tx, name: str) -> Annotator | None:
    """Every request looks its user up: kept in the store's read cache, dropped when users change."""
    key = ("user", name)
    found = db.cache.get(key)
    if found is MISS:
        found = _row_to_user(
            db.fetchone(f"SELECT {_COLUMNS} FROM annotators WHERE name = ? AND removed_at IS NULL", [name])
        )
        if found is None:
            return None
        db.cache.put(key, found)
    return found


def _changed(tx: Tx) -> None:
    tx.forget_after_commit()


def get_user_by_id(db: Store | Tx, annotator_id: int) -> Annotator | None:
    return _row_to_user(db.fetchone(f"SELECT {_COLUMNS} FROM annotators WHERE id = ?", [annotator_id]))


def list_users(db: Store | Tx) -> list[Annotator]:
    rows = db.fetchall(f"SELECT {_COLUMNS} FROM annotators WHERE removed_at IS NULL ORDER BY name")
    return [u for u in (_row_to_user(r) for r in rows) if u is not None]


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise UserError(f"unknown role {role!r}: choose one of {', '.join(ROLES)}")


def add_user(db: Store | Tx, name: str, role: str = "annotator", password: str | None = None) -> Annotator:
    if not _NAME.match(name or ""):
        raise UserError(
            f"invalid annotator name {name!r}: use 1-64 letters, digits, '.', '_', '-' or '@', "
            "starting with a letter or digit"
        )
    _check_role(role)
    if password is not None and len(password) < MIN_PASSWORD:
        raise UserError(f"a password needs at least {MIN_PASSWORD} characters")
    hashed = hash_password(password) if password else None
    with db.writing() as tx:
        if get_user(tx, name) is not None:
            raise UserError(f"annotator {name!r} already exists")
        if tx.scalar("SELECT count(*) FROM annotators WHERE name = ?", [name]):
            raise UserError(f"annotator {name!r} was removed; the log still names them, so pick another name")
        tx.execute(
            "INSERT INTO annotators (name, role, password_hash) VALUES (?, ?, ?)",
            [name, role, hashed],
        )
        _changed(tx)
        user = written(get_user(tx, name), f"annotator {name!r}")
    return user


def set_password(db: Store | Tx, name: str, password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise UserError(f"a password needs at least {MIN_PASSWORD} characters")
    hashed = hash_password(password)
    with db.writing() as tx:
        if get_user(tx, name) is None:
            raise UnknownUserError(f"no annotator named {name!r}")
        tx.execute(
            "UPDATE annotators SET password_hash = ?, sessions_valid_after = ? WHERE name = ?",
            [hashed, time.time(), name],
        )
        _changed(tx)


def set_role(db: Store | Tx, name: str, role: str) -> None:
    _check_role(role)
    with db.writing() as tx:
        if get_user(tx, name) is None:
            raise UnknownUserError(f"no annotator named {name!r}")
        tx.execute(
            "UPDATE annotators SET role = ?, sessions_valid_after = ? WHERE name = ?",
            [role, time.time(), name],
        )
        _changed(tx)


def remove_user(db: Store | Tx, name: str) -> None:
    """The annotator can no longer log in and their sessions end; their labels stay in the log."""
    with db.writing() as tx:
        if get_user(tx, name) is None:
            raise UnknownUserError(f"no annotator named {name!r}")
        tx.execute(
            "UPDATE annotators SET removed_at = current_timestamp, sessions_valid_after = ? WHERE name = ?",
            [time.time(), name],
        )
        _changed(tx)


def authenticate(db: Store | Tx, name: str, password: str) -> Annotator | None:
    """The annotator when name and password match a stored hash; None otherwise.

    An unknown name (or one without a password) costs the same scrypt work as a wrong password, so
    the time of a failed login does not tell whether the name exists.
    """
    row = db.fetchone(f"SELECT {_COLUMNS} FROM annotators WHERE name = ? AND removed_at IS NULL", [name])
    stored = row[3] if row is not None and row[3] else _DUMMY_HASH
    matched = verify_password(password, stored)
    if row is None or not row[3] or not matched:
        return None
    return _row_to_user(row)
