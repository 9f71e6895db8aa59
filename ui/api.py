"""stepgate's public HTTP API for annotation clients and scripts (Gradio named endpoints).

Each endpoint acts for the logged-in user of the session (the login cookie), never for a user named
in the request, and returns only that user's own labels. Panel events are private; these are the
endpoints we document and keep stable. They skip Gradio's queue (queue=False): a label cycle is
two short calls, and the unqueued path costs about half the queued one (see bench/run.py).
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from qc.gate import GateError, now_utc, submit
from store import work
from store.datasets import get_dataset
from store.work import WorkError, WorkItem
from ui.auth import require_user
from ui.binding import bind
from ui.context import AppContext

__all__ = ["build_api"]


def _dataset(ctx: AppContext, name: str):
    dataset = get_dataset(ctx.store, name)
    if dataset is None:
        raise gr.Error(f"there is no dataset named {name!r}")
    return dataset


def _as_dict(found: WorkItem | None) -> dict[str, Any]:
    if found is None:
        return {"item_id": None, "message": "nothing left to label in this dataset"}
    item = found.item
    return {
        "item_id": item.item_id,
        "version_id": item.version_id,
        "external_id": item.external_id,
        "position": found.position,
        "state": found.state,
        "question": item.question,
        "steps": item.steps,
        "my_label": found.my_label,
        "progress": found.progress,
    }


def api_next_item(ctx: AppContext, dataset: str, request: gr.Request) -> dict[str, Any]:
    """The item the session user holds, or the next one the dataset's rules give them."""
    user = require_user(ctx, request)
    return _as_dict(work.next_item(ctx.store, user, _dataset(ctx, dataset), now_utc()))


def api_submit_label(
    ctx: AppContext,
    item_id: int,
    version_id: int,
    payload: dict,
    request_id: str,
    seconds_spent: float,
    request: gr.Request,
) -> dict[str, Any]:
    """Store the session user's label; a retry with the same request_id is stored once."""
    user = require_user(ctx, request)
    try:
        result = submit(
            ctx.store,
            annotator=user,
            item_id=int(item_id),
            version_id=int(version_id),
            payload=payload,
            request_id=str(request_id),
            seconds_spent=float(seconds_spent) if seconds_spent is not None else None,
        )
    except GateError as exc:
        raise gr.Error(str(exc)) from exc
    return {"annotation_id": result.annotation_id, "duplicate": result.duplicate, "status": result.status}


def api_skip_item(ctx: AppContext, dataset: str, item_id: int, request: gr.Request) -> dict[str, Any]:
    """Give the item back to the pool for others; returns the session user's next item."""
    user = require_user(ctx, request)
    try:
        found = work.skip_item(ctx.store, user, _dataset(ctx, dataset), int(item_id), now_utc())
    except WorkError as exc:
        raise gr.Error(str(exc)) from exc
    return _as_dict(found)


def build_api(ctx: AppContext) -> None:
    """Register the endpoints inside the open gr.Blocks."""
    gr.api(bind(api_next_item, ctx), api_name="next_item", queue=False)
    gr.api(bind(api_submit_label, ctx), api_name="submit_label", queue=False)
    gr.api(bind(api_skip_item, ctx), api_name="skip_item", queue=False)
