"""stepgate's public HTTP API for annotation clients and scripts (Gradio named endpoints).

Each endpoint acts for the logged-in user of the session (the login cookie), never for a user named
in the request, and returns only that user's own labels. Panel events are private; these are the
endpoints we document and keep stable. They skip Gradio's queue (queue=False): a label cycle is
two short calls, and the unqueued path costs about half the queued one (see bench/run.py).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import annotate
from services.annotate import WorkItem
from services.errors import ServiceError
from services.records import Annotator
from tasks import spec_for
from tasks.view import AnnotatorView
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext

__all__ = ["build_api"]


def _as_dict(user: Annotator, found: WorkItem | None) -> dict[str, Any]:
    """The reply for an item, built by the task's annotator view (tasks.view) from what it lets through."""
    if found is None:
        return AnnotatorView().reply(None)
    view = spec_for(found.dataset.task).annotator_view
    return view.reply(view.seen(found, reviewer=user.can_see_labels))


def api_next_item(ctx: AppContext, dataset: str, request: gr.Request) -> dict[str, Any]:
    """The item the session user holds, or the next one the dataset's rules give them."""
    user = require_user(ctx, request)
    try:
        return _as_dict(user, annotate.next_item(ctx.store, user, annotate.dataset_for(ctx.store, dataset)))
    except ServiceError as exc:
        raise gr.Error(str(exc)) from exc


def api_submit_label(
    ctx: AppContext,
    item_id: int,
    version_id: int,
    payload: dict,
    request_id: str,
    seconds_spent: float,
    request: gr.Request,
) -> dict[str, Any]:
    """Store the session user's label; a retry with the same request_id is stored once.

    The reply says only that the label is stored: never the item's state, which on a blind task
    would tell the annotator what the others chose.
    """
    user = require_user(ctx, request)
    try:
        receipt = annotate.submit(
            ctx.store,
            annotator=user,
            item_id=item_id,
            version_id=version_id,
            payload=payload,
            request_id=request_id,
            seconds_spent=seconds_spent,
        )
    except ServiceError as exc:
        raise gr.Error(str(exc)) from exc
    return {"annotation_id": receipt.annotation_id, "duplicate": receipt.duplicate, "saved": True}


def api_skip_item(ctx: AppContext, dataset: str, item_id: int, request: gr.Request) -> dict[str, Any]:
    """Give the item the session user holds back to the pool; returns their next item."""
    user = require_user(ctx, request)
    try:
        found = annotate.skip_item(ctx.store, user, annotate.dataset_for(ctx.store, dataset), item_id)
    except ServiceError as exc:
        raise gr.Error(str(exc)) from exc
    return _as_dict(user, found)


def build_api(ctx: AppContext) -> None:
    """Register the endpoints inside the open gr.Blocks."""
    gr.api(bind(api_next_item, ctx), api_name="next_item", queue=False)
    gr.api(bind(api_submit_label, ctx), api_name="submit_label", queue=False)
    gr.api(bind(api_skip_item, ctx), api_name="skip_item", queue=False)
