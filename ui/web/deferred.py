"""Load pandas and pyarrow on first use, not at the server's start (`serve` only).

Gradio imports pandas at its own import (for `gr.cache`, which stepgate does not use) and pandas
imports pyarrow: 69 MB of a server's resident memory before any table is shown. A server that only
hands out items and takes labels never needs them; the first table a panel, a report or an export
builds loads them (once, ~0.6 s).

While the app is imported and built, `sys.modules` holds a stand-in for each: every module that
imports pandas then gets the stand-in, whose first attribute read imports the real module (under a
lock) and takes over its attributes. Before the server starts, `stop_deferring()` takes the stand-ins
out of `sys.modules` (the modules holding one keep it): DuckDB looks there to decide whether to
check a query's parameters against pandas' types, and would otherwise load pandas at the first query.
Module code may keep `import pandas as pd` at its top, as long as nothing of `pd` is read at import
time (test_lean_start checks the server's start and first calls).

Not `importlib.util.LazyLoader`: on Python 3.11 every later `import pandas` reads the module's
`__spec__` and so loads it, and two threads reaching a lazy module together can see it half-run.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

__all__ = ["DEFERRED", "NOT_IN_A_SERVER", "defer_imports", "is_loaded", "stop_deferring"]

DEFERRED = ("pandas", "pyarrow")
# Optional imports Gradio and its HTTP client make when these are installed, which a server never
# uses: Gradio's notebook magic (IPython brings jedi, prompt_toolkit and more: 22 MB) and an async
# backend stepgate does not run. A None in sys.modules makes their import fail as if not installed.
NOT_IN_A_SERVER = ("IPython", "trio")

_LOCK = threading.RLock()  # one real import at a time; a thread that asks meanwhile waits for it


class _Deferred(types.ModuleType):
    """Stands in for a module not imported yet; the first attribute read imports it."""

    def __getattr__(self, attr: str) -> Any:
        name = self.__name__
        with _LOCK:
            registered = sys.modules.get(name) is self
            if registered:
                del sys.modules[name]
            try:
                # through the import system, never sys.modules itself: when another thread is
                # importing the module right now, this waits until that import has finished
                real = importlib.import_module(name)
            except BaseException:
                if registered:  # still deferred: the next use tries again
                    sys.modules.setdefault(name, self)
                raise
            self.__dict__.update(real.__dict__)  # later reads of this stand-in skip __getattr__
        return getattr(real, attr)


def defer_imports(names: tuple[str, ...] = DEFERRED, refused: tuple[str, ...] = NOT_IN_A_SERVER) -> list[str]:
    """Put a stand-in in `sys.modules` for each of `names` not imported yet, and refuse `refused`
    (unless imported already); returns the names deferred."""
    deferred = []
    with _LOCK:
        for name in refused:
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]
        for name in names:
            spec = None if name in sys.modules else importlib.util.find_spec(name)
            if spec is None:
                continue
            stand_in = _Deferred(name)
            stand_in.__file__ = spec.origin  # read by inspect.getmodule over all of sys.modules
            sys.modules[name] = stand_in
            deferred.append(name)
    return deferred


def stop_deferring(names: tuple[str, ...] = DEFERRED) -> None:
    """Take the stand-ins still unused out of `sys.modules`; those held by modules keep working."""
    with _LOCK:
        for name in names:
            if isinstance(sys.modules.get(name), _Deferred):
                del sys.modules[name]


def is_loaded(name: str) -> bool:
    """True once the real module `name` has been imported (not only a stand-in)."""
    module = sys.modules.get(name)
    return module is not None and not isinstance(module, _Deferred)
