"""The Markdown table every benchmark script prints: one row a measure, its result beside it."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["print_table"]


def print_table(rows: Iterable[tuple[str, str]]) -> None:
    """Rows are printed as they come (a generator's slow rows appear one by one)."""
    print("| measure | result |\n| --- | --- |", flush=True)
    for name, value in rows:
        print(f"| {name} | {value} |", flush=True)
