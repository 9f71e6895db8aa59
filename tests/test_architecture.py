"""The layering holds: app -> ui -> services -> {qc, exports, store}, all may read tasks; SQL only in store;
the file parsers (importers) read tasks alone.

Read from the source with ast (function-level imports included), so a shortcut taken anywhere fails here
with the file and line that took it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tasks", "importers", "store", "qc", "exports", "services", "ui")
# What each layer may not import (our packages only; the standard library and third parties are free).
FORBIDDEN = {
    "tasks": {"importers", "store", "qc", "exports", "services", "ui", "app"},
    # files in, records out: no database, nothing above (store and services read the records)
    "importers": {"store", "qc", "exports", "services", "ui", "app"},
    "store": {"qc", "exports", "services", "ui", "app"},
    "qc": {"store", "exports", "services", "ui", "app"},
    "exports": {"store", "qc", "services", "ui", "app"},
    "services": {"ui", "app"},
    "ui": {"importers", "qc", "exports", "store", "app"},  # types come through services.records
}
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE)\b", re.S
)


def _modules(package: str) -> Iterator[Path]:
    yield from sorted((ROOT / package).rglob("*.py"))


def _imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [a.name for a in node.names]


def _top(module: str) -> str:
    return module.split(".", 1)[0]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_layer_imports_only_downward(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _modules(package)
        for line, module, _ in _imports(path)
        if _top(module) in FORBIDDEN[package]
    ]
    assert wrong == []


def test_only_app_imports_the_ui() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for package in ("tasks", "importers", "store", "qc", "exports", "services")
        for path in _modules(package)
        for line, module, _ in _imports(path)
        if _top(module) == "ui"
    ]
    assert wrong == []


def test_duckdb_and_sql_live_only_in_the_store() -> None:
    wrong = []
    for package in ("tasks", "importers", "qc", "exports", "services", "ui"):
        for path in _modules(package):
            text = path.read_text(encoding="utf-8")
            wrong += [
                f"{path.relative_to(ROOT)}:{line} imports duckdb"
                for line, m, _ in _imports(path)
                if m == "duckdb"
            ]
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} holds SQL")
    assert wrong == []


def test_every_task_has_a_spec_and_the_store_knows_no_other_task_names() -> None:
    from tasks import SPECS, TASKS

    assert set(TASKS) == set(SPECS) and len(TASKS) == 5
    for spec in SPECS.values():
        assert spec.defaults.keys() >= {"annotators_per_item", "quorum", "max_annotators"}
        assert spec.blind_until == "settled"
