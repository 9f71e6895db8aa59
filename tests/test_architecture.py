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


def _runtime_imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """Every import the module runs, at its top or inside a function; `if TYPE_CHECKING:` blocks do not
    count (they never run)."""

    def visit(node: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test):
                for other in child.orelse:
                    yield from visit(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield child.lineno, alias.name, []
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                yield child.lineno, child.module, [a.name for a in child.names]
            yield from visit(child)

    yield from visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _our_modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in _modules(package)}


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of its own package it imports (`from pkg import mod` names the module)."""
    modules = _our_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        for _, target, names in _runtime_imports(path):
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
            for found in subs if subs and len(subs) == len(names) else [target, *subs]:
                if found in modules and found != name and _top(found) == _top(name):
                    graph.setdefault(name, set()).add(found)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


# Known offenders outside services/, being removed on branch `store` (store.bulk <-> store.items and the
# private names store/, qc/ and exports/ trade); the lead empties these lists when that branch is merged.
KNOWN_CIRCLES = [["store.bulk", "store.items"]]
KNOWN_PRIVATE = {
    "qc.report takes qc.agreement._alpha_values",
    "qc.report takes qc.agreement._as_2d",
    "qc.report takes qc.agreement._item_agreement",
    "qc.report takes qc.agreement._paradox",
    "qc.score_plots takes qc.plots._empty",
    "qc.score_plots takes qc.plots._text",
    "exports.step_study takes exports.report._cell",
    "exports.step_study takes exports.report._md_table",
    "store.bundles takes store.items._VERSION_COLUMNS",
    "store.bundles takes store.items._ids",
    "store.bundles takes store.items._insert_columns",
    "store.bundles takes store.items._write_versions",
    "store.bulk takes store.items._meta_text",
    "store.bulk takes store.items._json_list",
    "store.bulk takes store.items._VERSION_COLUMNS",
    "store.bulk takes store.items._ids",
    "store.bulk takes store.items._insert_columns",
    "store.bulk takes store.items._insert_frame",
    "store.bulk takes store.items._reset_state",
}


def test_no_package_imports_itself_in_a_circle() -> None:
    """No package's modules import each other in a circle, counting imports inside functions."""
    assert [c for c in _circles(_import_graph()) if c not in KNOWN_CIRCLES] == []


def test_the_circle_finder_finds_a_circle_through_a_function_level_import() -> None:
    graph = {"services.a": {"services.b"}, "services.b": {"services.c"}, "services.c": {"services.a"}}
    assert _circles(graph) == [["services.a", "services.b", "services.c"]]
    assert _circles({"services.a": {"services.b"}}) == []


def test_no_module_takes_a_private_name_from_another() -> None:
    """A leading underscore means "this module's own": no other module imports it."""
    modules = _our_modules()
    taken = {
        f"{name} takes {target}.{n}"
        for name, path in modules.items()
        for _, target, names in _runtime_imports(path)
        if target in modules and target != name
        for n in names
        if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" not in modules
    }
    assert sorted(taken - KNOWN_PRIVATE) == []
