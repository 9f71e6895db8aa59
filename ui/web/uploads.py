"""Which files each login uploaded, and the check every event's files meet (issue 32, hole 6).

Gradio accepts a FileData in an event's data, moves the file it names into its cache and hands the
path to the handler. It checks that the file was uploaded only once its own launch() has run, which
we do not call (ui/web/server.py mounts the app): a script sent the Data panel's import a FileData
naming `<db>.files/control.json` and the server imported it. So the guard does it for every event:
a file named anywhere in an event's data (a dict with a "path", as Gradio reads a FileData, with or
without its meta) must be one that the same login session uploaded through Gradio's upload route,
and never anything under the database's own folder (the control file, the image store, the private
downloads). That covers the four events that take a file today (Data's import, a study's examples,
gold marks from a file, model predictions) and any event added later, before Gradio copies a byte.

Uploads are known to the replica that took them (Gradio keeps the file on that machine's disk too):
replicas behind a load balancer need sticky sessions for uploads, as Gradio's own queue does.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["Uploads", "file_paths"]

_MAX_KEPT = 20_000  # uploads remembered in all (the oldest forgotten first)
REFUSED = "This file was not uploaded in this session (upload it with the form's file box); nothing was read."


def file_paths(data: Any) -> list[Any]:
    """Every "path" an event's data names in a dict (a FileData, whatever its meta says), nested anywhere."""
    found: list[Any] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "path" in value:
                found.append(value["path"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _real(path: str) -> str:
    return os.path.realpath(path)


class Uploads:
    def __init__(self, private_folders: Iterable[Path], keep_seconds: float) -> None:
        self._private = [_real(str(p)) for p in private_folders]
        self._keep = keep_seconds
        self._files: OrderedDict[tuple[str, str], float] = OrderedDict()  # (session, real path) -> when
        self._lock = threading.Lock()

    def record(self, session: str, paths: Iterable[Any]) -> None:
        """The files one upload request stored (Gradio's answer), as this login session's."""
        now = time.monotonic()
        with self._lock:
            for path in paths:
                if isinstance(path, str) and path:
                    self._files[(session, _real(path))] = now
                    self._files.move_to_end((session, _real(path)))
            while len(self._files) > _MAX_KEPT:
                self._files.popitem(last=False)

    def refusal(self, session: str, data: Any) -> str | None:
        """None when every file the data names is this session's own upload; else why not."""
        paths = file_paths(data)
        if not paths:
            return None
        now = time.monotonic()
        with self._lock:
            for path in paths:
                if not isinstance(path, str) or not path or "\x00" in path:
                    return REFUSED
                real = _real(path)
                if any(real == folder or real.startswith(folder + os.sep) for folder in self._private):
                    return REFUSED
                when = self._files.get((session, real))
                if when is None or now - when > self._keep:
                    return REFUSED
        return None
