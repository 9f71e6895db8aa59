"""Bulk work (an import, an export) without the cyclic garbage collector.

Reading or writing a large file makes millions of small containers (dicts, lists) that live until
the work ends. The cyclic collector would walk them again and again, a fifth to a third of the
work's time, to free nothing: such data holds no reference cycles, and reference counting frees
it as usual. The collector comes back as it was, also when the work fails.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_cyclic_gc"]


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
