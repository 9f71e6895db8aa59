"""Opening a one-item-at-a-time panel on its tab or on a dataset change, the same way in every panel:
the dataset list of the panel's task, the dataset kept (or the first), and the item the user holds
kept as it is, so switching tabs never claims a second item."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import gradio as gr

from services import statistics
from ui.context import AppContext

__all__ = ["has_item", "on_dataset", "on_tab", "seconds_open"]


def has_item(current: Any) -> bool:
    return isinstance(current, dict) and current.get("item_id") is not None


def seconds_open(current: Any) -> float:
    """How long the item has been open in this page: the time spent a label reports (never negative)."""
    opened = current.get("opened_at") if isinstance(current, dict) else None
    return round(max(0.0, time.time() - float(opened or time.time())), 1)


def on_tab(
    ctx: AppContext,
    task: str,
    dataset: str | None,
    current: Any,
    open_dataset: Callable[[str | None], dict[str, Any]],
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """The panel's dataset picker (with `extra` outputs), and its next item unless one is shown."""
    names = statistics.dataset_names(ctx.store, task)
    dataset = dataset if dataset in names else (names[0] if names else None)
    out: dict[str, Any] = {"dataset": gr.Dropdown(choices=names, value=dataset), **extra}
    if has_item(current) and current["dataset"] == dataset:
        return out
    return {**out, **open_dataset(dataset)}


def on_dataset(dataset: str, current: Any, open_dataset: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """A dataset picked: its next item, unless it is the one already shown."""
    if has_item(current) and current["dataset"] == dataset:
        return {}
    return open_dataset(dataset)
