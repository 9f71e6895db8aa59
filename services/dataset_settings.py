"""A dataset's resolved settings: its own values over the defaults (the store's, then its task's).

The one place the services read a dataset's settings as the rules use them: whole numbers for the
settings every dataset has, its task's own settings as stored.
"""

from __future__ import annotations

from typing import Any

from store.datasets import DEFAULT_SETTINGS, Dataset
from tasks import LabelLimits

__all__ = ["label_limits", "settings_of"]


def settings_of(dataset: Dataset) -> dict[str, Any]:
    """The dataset's settings with the defaults filled in: whole numbers, then its task's own."""
    return {
        key: int(value) if key in DEFAULT_SETTINGS else value for key, value in dataset.all_settings().items()
    }


def label_limits(dataset: Dataset) -> LabelLimits:
    """How large a label of this dataset may be (payload, note, time spent)."""
    settings = settings_of(dataset)
    return LabelLimits(
        max_payload_bytes=settings["max_payload_bytes"],
        max_note_chars=settings["max_note_chars"],
        max_seconds_spent=float(settings["max_seconds_spent"]),
    )
