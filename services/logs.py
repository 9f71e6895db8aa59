"""Structured logs: one line per HTTP request, per panel or API event and per job step.

`python app.py serve --log-format json` writes each as one JSON object (time, level, kind: http, event
or job, then its fields); `text` (the default) writes the same fields as key=value. The fields are chosen by the
callers to hold no label values and no dataset text: routes, event names, numeric user ids,
durations, statuses and error class names only.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

__all__ = ["FORMATS", "LOGGER", "configure", "emit"]

LOGGER = "stepgate"
FORMATS = ("text", "json")
_FIELDS = "stepgate_fields"


def emit(kind: str, level: int = logging.INFO, /, **fields: Any) -> None:
    """Log one line of a kind (http, event, job) with its fields (cheap when nothing listens)."""
    log = logging.getLogger(LOGGER)
    if log.isEnabledFor(level):
        log.log(level, kind, extra={_FIELDS: fields})


def _stamp(record: logging.LogRecord) -> str:
    return (
        datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _stamp(record),
            "level": record.levelname.lower(),
            "kind": record.getMessage(),
        }
        for key, value in getattr(record, _FIELDS, {}).items():
            line.setdefault(key, value)  # a field never hides the time, level or kind
        if record.exc_info and record.exc_info[0] is not None:
            line["error"] = record.exc_info[0].__name__
        return json.dumps(line, default=str, separators=(",", ":"))


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, _FIELDS, {})
        pairs = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        return f"{_stamp(record)} {record.levelname.lower():7} {record.getMessage()} {pairs}".rstrip()


def configure(fmt: str = "text", level: str = "info", stream: TextIO | None = None) -> logging.Logger:
    """Send stepgate's log lines to `stream` (stderr) in `fmt`; replaces an earlier configuration."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}: choose one of {', '.join(FORMATS)}")
    log = logging.getLogger(LOGGER)
    for handler in list(log.handlers):
        log.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    log.addHandler(handler)
    log.setLevel(level.upper())
    log.propagate = False
    return log
