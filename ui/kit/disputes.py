"""Disputed items for adjudicators, the same way in every panel that has them (step review, the
quality gate): the dataset's disputed items to pick from, and one of them found again by id.

Annotators get one line and nothing else; services.adjudicate checks the role again.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from services import adjudicate
from services.errors import ServiceError
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.messages import refusal, said

__all__ = ["find", "listing"]


def listing(ctx: AppContext, dataset: str | None, request: gr.Request, noun: str = "item") -> dict[str, Any]:
    """{status, pick}: the dataset's disputed items (reviewers only; annotators get one line)."""
    user = require_user(ctx, request)
    if not user.can_see_labels:
        return {
            "status": said(f"Disputed {noun}s are settled by adjudicators and admins."),
            "pick": gr.update(choices=[], value=None),
        }
    try:
        found = adjudicate.disputes(ctx.store, user, dataset or "")
    except ServiceError as exc:
        return {"status": refusal(str(exc))}
    choices = [(d.item.external_id, d.item.item_id) for d in found]
    note = f"{len(found)} disputed {noun}(s) in {dataset}." if found else f"No disputed {noun}s in {dataset}."
    return {
        "status": said(note),
        "pick": gr.update(choices=choices, value=choices[0][1] if choices else None),
    }


def find(ctx: AppContext, user: Any, dataset: str | None, item_id: Any) -> adjudicate.Dispute | None:
    """One disputed item of the dataset by its id, or None once it is settled."""
    wanted = int(item_id)
    return next(
        (d for d in adjudicate.disputes(ctx.store, user, dataset or "") if d.item.item_id == wanted), None
    )
