"""Who is asking: every handler takes the user from Gradio's session, never from a parameter."""

from __future__ import annotations

import gradio as gr

from services import access
from services.errors import ServiceError
from store import users
from store.users import Annotator, UserError
from ui.context import LOCAL, AppContext

__all__ = ["check_login", "require_admin", "require_reviewer", "require_user"]


def check_login(ctx: AppContext, name: str, password: str) -> bool:
    """Gradio's auth callback. Team mode checks passwords; local mode also lets a new name in.

    In local mode a new name creates the annotator with the password typed (Gradio's form needs
    one), so the name stays theirs; a name created without a password (`users add --no-password`)
    logs in with any password on the local machine.
    """
    name = (name or "").strip()
    existing = users.get_user(ctx.store, name)
    if ctx.mode != LOCAL:
        return users.authenticate(ctx.store, name, password or "") is not None
    if existing is not None:
        # A name that has a password keeps it even on the local machine.
        return not existing.has_password or users.authenticate(ctx.store, name, password or "") is not None
    try:
        # The first person on a fresh local database runs it: make them admin.
        role = "admin" if not users.list_users(ctx.store) else "annotator"
        users.add_user(ctx.store, name, role, password or None)
    except UserError:
        return False
    return True


def require_user(ctx: AppContext, request: gr.Request | None) -> Annotator:
    name = getattr(request, "username", None) if request is not None else None
    user = users.get_user(ctx.store, name) if name else None
    if user is None:
        raise gr.Error("You are not logged in (or your account was removed): reload the page and log in.")
    return user


def require_reviewer(ctx: AppContext, request: gr.Request | None) -> Annotator:
    """The session user, when their role may see labels (the rule lives in services.access)."""
    user = require_user(ctx, request)
    try:
        return access.require_reviewer(user)
    except ServiceError as exc:
        raise gr.Error(str(exc)) from exc


def require_admin(ctx: AppContext, request: gr.Request | None) -> Annotator:
    """The session user, when they are an admin (the rule lives in services.access)."""
    user = require_user(ctx, request)
    try:
        return access.require_admin(user)
    except ServiceError as exc:
        raise gr.Error(str(exc)) from exc
