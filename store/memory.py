"""The embedded engine's memory settings for a long-running server (`python app.py serve`).

DuckDB allocates its query memory through jemalloc, which keeps pages freed by a finished query
until later allocations on the same thread decay them. A server's threads go quiet between requests,
so the pages of a large query (loading a million-item pool: ~30 MB) stayed resident. With
``allocator_background_threads`` (a documented global setting) jemalloc's own background thread
returns them within about a second. Commands that run and exit (import, export) leave it off.
PostgreSQL's memory is the server's: nothing to set here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.db import Store

__all__ = ["release_freed_memory_in_background"]


def release_freed_memory_in_background(store: Store) -> None:
    """Turn on DuckDB's allocator background threads; nothing where the database is not in this process."""
    if store.engine.embedded:
        store.execute("SET allocator_background_threads = true")
