"""Process-wide memory settings for the server, applied first thing at `serve` (before Gradio loads).

Three knobs, each measured (the first two with bench/run.py's memory rows at 1M items):

- ``MPLBACKEND=agg`` (matplotlib's own environment variable). Gradio wraps every API call in a
  backend switch that imports matplotlib and asks for the current backend; left to resolve it,
  matplotlib imports pyplot and a backend module on the first call (+17 MB resident). The server
  draws with Agg anyway (qc/canvas.py), so it is named up front, spelt as matplotlib and Gradio spell it
  (qc/canvas.py says why the spelling matters), whatever the environment held: the server draws no
  figure through pyplot, and an inherited MPLBACKEND (a notebook's terminal sets its inline backend)
  would make every event switch pyplot's backend there and back, racing another event's first plot.
- glibc's ``M_MMAP_THRESHOLD`` (mallopt(3), as ``MALLOC_MMAP_THRESHOLD_`` would set it): blocks of
  256 KiB and more get their own mapping, returned to the system when freed. By default glibc raises
  that threshold after each large free (up to 32 MiB), so the transient NumPy arrays of loading a
  million-item pool stay in the heap afterwards (-20 MB at the peak when fixed).
- ``GRADIO_ANALYTICS_CACHE_FREQUENCY`` (read by Gradio's queue): after every queued event Gradio
  rebuilds a summary of the last 10,000 events with pandas (10-16 ms of CPU per event, and pandas
  loaded: 69 MB) for its monitoring dashboard, which stepgate does not enable. Asked to rebuild it
  only every 2**62 events, it never does. An operator's own value wins.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import MutableMapping

__all__ = ["MMAP_THRESHOLD", "apply_memory_settings"]

MMAP_THRESHOLD = 256 * 1024  # bytes: blocks from this size up are mapped apart and unmapped when freed
_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def apply_memory_settings(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Name matplotlib's backend, turn off Gradio's unused event summary and fix glibc's mmap threshold;
    False where glibc is not the allocator."""
    environ["MPLBACKEND"] = "agg"  # not the operator's: see above
    environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(2**62))
    if "MALLOC_MMAP_THRESHOLD_" in environ:  # the operator chose: glibc read it at start
        return True
    try:
        libc = ctypes.CDLL(None)  # the symbols the interpreter is linked with, the C library's among them
    except OSError:  # pragma: no cover - a platform without dlopen(NULL)
        return False
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):  # musl, macOS: as they are
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
