"""The services' clock: naive UTC, what the store compares lease, job and label times in."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["now_utc"]


def now_utc() -> datetime:
    """Now, in naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)
