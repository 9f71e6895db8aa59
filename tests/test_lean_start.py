"""The server starts lean: nothing heavy is loaded before it is used, and its memory settings hold."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from bench.client import ApiError, StepgateClient
from bench.server import start_server
from ui.web.memory import apply_memory_settings

# Shared libraries of what only some panels or verbs use: none is mapped by a server that has
# started and answered an API call (the QC report, the encoder, plots and PostgreSQL load on use).
HEAVY = ("/torch/", "/scipy/", "/sklearn/", "/onnxruntime/", "/sentence_transformers/", "/psycopg")


def _mapped(pid: int) -> set[str]:
    return {line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines() if ".so" in line}


def test_matplotlib_backend_is_named_unless_the_operator_named_one() -> None:
    environ: dict[str, str] = {}
    apply_memory_settings(environ)
    assert environ["MPLBACKEND"] == "agg"
    mine = {"MPLBACKEND": "svg"}
    apply_memory_settings(mine)
    assert mine["MPLBACKEND"] == "svg"


def test_glibc_mmap_threshold_is_set_where_glibc_allocates() -> None:
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):
        pytest.skip("not glibc: the allocator is left as it is")
    assert apply_memory_settings({}) is True
    assert apply_memory_settings({"MALLOC_MMAP_THRESHOLD_": "131072"}) is True  # the operator's own


def test_server_loads_nothing_heavy_at_start_nor_at_its_first_call(tmp_path: Path) -> None:
    server = start_server(tmp_path / "lean.duckdb", "--no-demo")
    try:
        at_start = _mapped(server.process.pid)
        assert not [lib for lib in at_start if any(h in lib for h in HEAVY)]
        assert not [lib for lib in at_start if "/matplotlib/" in lib]
        client = StepgateClient(server.url, "lena", "lena-password")
        with pytest.raises(ApiError):  # no such dataset: the call still runs Gradio's whole path
            client.run("next_item", "no-such-dataset")
        client.close()
        after_call = _mapped(server.process.pid)
        assert not [lib for lib in after_call if any(h in lib for h in HEAVY)]
        # Gradio asks matplotlib for its backend around every call; named up front (MPLBACKEND),
        # matplotlib answers without importing pyplot and the Agg backend.
        assert not [lib for lib in after_call if "_backend_agg" in lib]
    finally:
        server.stop()


def test_duckdb_returns_freed_query_memory_from_a_background_thread(tmp_path: Path) -> None:
    from store import Store
    from store.memory import release_freed_memory_in_background

    with Store(tmp_path / "bg.duckdb") as store:
        try:
            release_freed_memory_in_background(store)
            assert store.fetchall("SELECT current_setting('allocator_background_threads')") == [(True,)]
        finally:  # a process-wide setting: the other tests' stores keep DuckDB's default
            store.execute("SET allocator_background_threads = false")
