"""The server starts lean: nothing heavy is loaded before it is used, and its memory settings hold."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from bench.client import ApiError, StepgateClient
from bench.run import make_items
from bench.server import start_server
from services.imports import import_file
from store import Store, users
from ui.web.memory import apply_memory_settings

# Shared libraries of what only some panels or verbs use: none is mapped by a server that has
# started and handed out and taken a label (the QC report, the encoder, plots, PostgreSQL and the
# tables' pandas and pyarrow load on use).
HEAVY = (
    "/torch/",
    "/scipy/",
    "/sklearn/",
    "/onnxruntime/",
    "/sentence_transformers/",
    "/psycopg",
    "/pandas/_libs/",
    "/pyarrow/",
    "/IPython/",
)


def _mapped(pid: int) -> set[str]:
    return {line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines() if ".so" in line}


def test_matplotlib_backend_is_named_agg_whatever_the_environment_held() -> None:
    environ: dict[str, str] = {}
    apply_memory_settings(environ)
    assert environ["MPLBACKEND"] == "agg"
    inherited = {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}  # a notebook's terminal
    apply_memory_settings(inherited)
    assert inherited["MPLBACKEND"] == "agg"


def test_gradios_unused_event_summary_is_never_rebuilt_unless_the_operator_asks() -> None:
    environ: dict[str, str] = {}
    apply_memory_settings(environ)
    assert int(environ["GRADIO_ANALYTICS_CACHE_FREQUENCY"]) >= 2**62
    mine = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": "10"}
    apply_memory_settings(mine)
    assert mine["GRADIO_ANALYTICS_CACHE_FREQUENCY"] == "10"


def test_glibc_mmap_threshold_is_set_where_glibc_allocates() -> None:
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):
        pytest.skip("not glibc: the allocator is left as it is")
    assert apply_memory_settings({}) is True
    assert apply_memory_settings({"MALLOC_MMAP_THRESHOLD_": "131072"}) is True  # the operator's own


def test_server_loads_nothing_heavy_at_start_nor_while_labelling(tmp_path: Path) -> None:
    db = tmp_path / "lean.duckdb"
    source = tmp_path / "items.jsonl"
    make_items(source, 20)
    with Store(db) as store:
        import_file(store, source, format="processbench", dataset="lean")
    server = start_server(db, "--no-demo", cold=True)  # the start itself is what is checked
    try:
        at_start = _mapped(server.process.pid)
        assert not [lib for lib in at_start if any(h in lib for h in HEAVY)]
        assert not [lib for lib in at_start if "/matplotlib/" in lib]
        client = StepgateClient(server.url, "lena", "lena-password")
        with pytest.raises(ApiError):  # no such dataset: the call still runs Gradio's whole path
            client.run("next_item", "no-such-dataset")
        item = client.run("next_item", "lean")
        saved = client.run(
            "submit_label", item["item_id"], item["version_id"], {"earliest_error": 0}, "r-1", 5.0
        )
        assert saved["saved"] is True
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


@pytest.mark.browser
def test_an_annotators_session_in_the_browser_loads_no_pandas(tmp_path: Path, page) -> None:
    """Home's table, the Earliest error panel and a saved label: what an annotator's day is made of."""
    from playwright.sync_api import expect

    from tests.browser_support import login, screenshot

    db = tmp_path / "lean.duckdb"
    source = tmp_path / "items.jsonl"
    make_items(source, 5)
    with Store(db) as store:
        import_file(store, source, format="processbench", dataset="lean")
        users.add_user(store, "mia", "annotator", "mia-password")
    server = start_server(db, "--no-demo", "--team", cold=True)
    try:
        login(page, server.url, "mia", "mia-password")
        expect(page.locator("#home-work")).to_contain_text("lean")  # Home's own table, shown
        screenshot(page, "lean-annotator-home")
        page.get_by_role("tab", name="Earliest error").click()
        expect(page.locator("#ee-header")).to_contain_text("Item")
        page.locator("#ee-steps .ee-step.ee-pos-0 p").first.click()
        page.locator("#ee-save").click()
        expect(page.locator("#ee-status")).to_contain_text("Saved: Step 1")
        screenshot(page, "lean-annotator")
        mapped = _mapped(server.process.pid)
        assert not [lib for lib in mapped if any(h in lib for h in HEAVY)]
    finally:
        server.stop()
