"""Who is asking: every handler takes the user from Gradio's session, never from a parameter."""

from __future__ import annotations

import gradio as gr

from services import access
from services import users as user_service
from services.errors import ServiceError
from services.records import Annotator
from ui.context import LOCAL, AppContext

__all__ = ["check_login", "require_admin", "require_reviewer", "require_user"]


def check_login(ctx: AppContext, name: str, password: str) -> bool:
    """The login check of ui/web: the rule lives in services.users.check_login."""
    return user_service.check_login(ctx.store, ctx.mode == LOCAL, name, password)


def require_user(ctx: AppContext, request: gr.Request | None) -> Annotator:
    name = getattr(request, "username", None) if request is not None else None
    user = user_service.find(ctx.store, name) if name else None
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
