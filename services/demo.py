"""The demo data imported on first run, and by tests: one function for both (after datasette)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from services.imports import ImportOutcome, import_file
from store.datasets import list_datasets

if TYPE_CHECKING:
    from store.db import Store

__all__ = ["DEMO_DATASETS", "DEMO_DIR", "populate_demo"]

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo_data"

# file, dataset name, format
DEMO_DATASETS: list[tuple[str, str, str]] = [
    ("prmbench_demo.jsonl", "prmbench-step-review", "prmbench"),
    ("qwq_solutions_demo.jsonl", "qwq-earliest-error", "qwq"),
    ("crystal_demo.jsonl", "mathvista-quality-gate", "crystal"),
]


def populate_demo(
    store: Store, demo_dir: Path = DEMO_DIR, *, only_if_empty: bool = True
) -> list[ImportOutcome]:
    """Import the demo sets; on a database that already has data, do nothing (first run only)."""
    if only_if_empty and list_datasets(store):
        return []
    outcomes = []
    for filename, name, fmt in DEMO_DATASETS:
        path = demo_dir / filename
        if path.exists():
            outcomes.append(import_file(store, path, format=fmt, dataset=name))
    return outcomes
