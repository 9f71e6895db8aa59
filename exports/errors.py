"""The one error root of exports (re-exported as exports.ExportError)."""

from __future__ import annotations

__all__ = ["ExportError"]


class ExportError(Exception):
    """A file that cannot be written, said with what and where; services turn it into a ServiceError."""
