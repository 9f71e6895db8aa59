"""Bind the app context to a module-level handler so Gradio still sees its gr.Request parameter.

functools.partial hides type hints from Gradio, which then never passes the request (and with it
the logged-in user). bind() keeps the handler's own signature, minus its first `ctx` argument, and turns a store
failure (disk full, read-only folder) into a message for the user instead of a bare "Error".
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

import gradio as gr

from services.records import StoreUnavailableError
from ui.context import AppContext

__all__ = ["bind"]


class _Unread:
    """Names of pandas and pyarrow in a handler's hints, not resolved (that would import them)."""

    def __getattr__(self, name: str) -> Any:
        return Any


# Gradio reads a handler's hints for its request and event parameters only; a table's hint resolved
# here would load pandas at the app's build (ui/web/deferred.py).
_UNREAD = {"pd": _Unread(), "pa": _Unread()}


def bind(handler: Callable[..., Any], ctx: AppContext) -> Callable[..., Any]:
    hints = typing.get_type_hints(handler, localns=_UNREAD)
    signature = inspect.signature(handler)
    first, *rest = signature.parameters.values()

    @functools.wraps(handler)
    def bound(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(ctx, *args, **kwargs)
        except StoreUnavailableError as exc:
            # Disk full, read-only folder, a database that stopped: say so; nothing was acknowledged.
            raise gr.Error(f"The database could not complete this: {exc}. Nothing was saved.") from exc

    del bound.__wrapped__  # type: ignore[attr-defined]
    bound.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    bound.__annotations__ = {k: v for k, v in hints.items() if k != first.name}
    return bound
