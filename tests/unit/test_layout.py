"""The package's shape: layers import only the layers before them, no module over 600 lines,
no function over 100 lines. These are the limits a newcomer relies on to find and change things."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "lib" / "intelligence_per_dollar"
#: Data flows one way: each layer may import only the layers listed before it.
LAYERS = ("sources", "model", "analysis", "views", "app")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100

MODULES = sorted(p for p in PKG.rglob("*.py"))


def _layer(path: Path) -> str | None:
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 and rel[0] in LAYERS else None


def _imported_layers(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for n in names:
            parts = n.split(".")
            if parts[0] == "intelligence_per_dollar" and len(parts) > 1 and parts[1] in LAYERS:
                out.add(parts[1])
    return out


def test_every_module_sits_in_a_layer():
    stray = [p.relative_to(PKG).as_posix() for p in MODULES if _layer(p) is None and p.name != "__init__.py"]
    assert stray == [], f"modules outside the layer subpackages {LAYERS}: {stray}"


def test_no_relative_imports_so_a_module_says_where_things_come_from():
    rel = [p.relative_to(PKG).as_posix() for p in MODULES
           if any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(ast.parse(p.read_text())))]
    assert rel == []


@pytest.mark.parametrize("path", [p for p in MODULES if _layer(p)], ids=lambda p: p.relative_to(PKG).as_posix())
def test_layers_import_only_earlier_layers(path):
    own = LAYERS.index(_layer(path))
    later = {lay for lay in _imported_layers(ast.parse(path.read_text())) if LAYERS.index(lay) > own}
    assert not later, f"{path.relative_to(PKG)} ({LAYERS[own]}) imports later layer(s) {sorted(later)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PKG).as_posix())
def test_module_length(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_MODULE_LINES, f"{path.relative_to(PKG)} has {n} lines (limit {MAX_MODULE_LINES})"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PKG).as_posix())
def test_function_length(path):
    long = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                long.append(f"{node.name} ({n} lines)")
    assert long == [], f"{path.relative_to(PKG)}: functions over {MAX_FUNCTION_LINES} lines: {long}"
