"""Drafts of the session user: what they chose but did not save, per panel, on the server.

Keyed by the user from the session, so two people on one browser never see each other's drafts,
and nothing secret is sent to the browser. Cleared for a user at logout.
"""

from __future__ import annotations

from typing import Any

from services.clock import now_utc
from store import drafts
from store.db import Store
from store.users import Annotator, get_user

__all__ = ["clear", "clear_at_logout", "end", "get", "put"]

_MAX_VALUE = 8_000  # characters of JSON: a note and a few choices
_ENDED = "ended opening"  # a draft's key that marks it closed by `end` (a choice never has it)


def get(store: Store, user: Annotator, panel: str, key: str) -> Any:
    value = drafts.get_draft(store, user.id, panel, key)
    return None if isinstance(value, dict) and _ENDED in value else value


def put(store: Store, user: Annotator, panel: str, key: str, value: Any, opening: str | None = None) -> None:
    """Keep (or, with None, forget) a draft; an oversized one is cut to the limit, never stored whole.
    `opening`: the request id of the item's opening the choice was made in. A choice event of an
    opening that `end` closed (its item skipped) may reach the server after the skip, as choices are
    sent off Gradio's queue: it does not write the draft back."""
    if value is None:
        drafts.delete_draft(store, user.id, panel, key)
        return
    if isinstance(value, str):
        value = value[:_MAX_VALUE]
    elif isinstance(value, dict):
        value = {
            str(k)[:64]: (v[:_MAX_VALUE] if isinstance(v, str) else v) for k, v in list(value.items())[:16]
        }
    drafts.put_draft(
        store, user.id, panel, key, value, now_utc(), unless=_ended(opening) if opening else None
    )


def end(store: Store, user: Annotator, panel: str, key: str, opening: str) -> None:
    """The opening is over without a save (a skip): its draft goes, and stays gone for its late choices."""
    drafts.put_draft(store, user.id, panel, key, _ended(opening), now_utc())


def _ended(opening: str) -> dict[str, str]:
    return {_ENDED: opening}


def clear(store: Store, user: Annotator, panel: str, key: str) -> None:
    drafts.delete_draft(store, user.id, panel, key)


def clear_at_logout(store: Store, name: str) -> None:
    """The logout hook: the user's drafts go with their session."""
    user = get_user(store, name)
    if user is not None:
        drafts.clear_annotator(store, user.id)
