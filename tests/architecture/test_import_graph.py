"""The floor plan holds: imports point only down the packages' layers, nothing imports in a circle, and no
module reaches into another package for a private name.

Each top-level package of ``harness`` says in its ``__init__`` docstring which packages it may import, on a
line ``May import: a, b, c.`` (``nothing`` for none). This test reads every import of every module (at module
level, inside functions and under ``TYPE_CHECKING`` alike: a type-only arrow is still an arrow a reader
follows) and fails on an import its package did not declare, on a declaration that makes a loop, on a circle
of modules, and on ``from harness.x import _private`` across packages.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "harness"
# Files at the top of the package, with what each may import (they have no __init__ to say it). The
# package's own ``__init__`` ("harness") holds only the version, which any module may read.
TOP_FILES = {"harness": set(), "errors": set(), "states": set(), "entry": {"cli", "engine", "errors"}}
GROUND = {"harness"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(HARNESS.rglob("*.py"))}


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """(module imported, name taken from it or None) for every import statement in the file."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names if alias.name.startswith("harness")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.append((sub, None) if sub in _modules() else (node.module, alias.name))
    return out


def _package(module: str) -> str:
    """The top-level package (or top file) a module belongs to: ``harness.calls.cache.keys`` -> ``calls``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "harness"


@cache
def _declared() -> dict[str, set[str]]:
    declared = {name: set(allowed) for name, allowed in TOP_FILES.items()}
    for init in sorted(HARNESS.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        found = re.search(r"^May import: (.+?)\.?\s*(?:\n\n|\Z)", doc, re.M | re.S)
        assert found, f"{init.relative_to(HARNESS.parent)}: its docstring has no 'May import: ...' paragraph"
        names = {n.strip() for n in found.group(1).split(",")}
        declared[init.parent.name] = set() if names == {"nothing"} else names
    return declared


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in _modules().items():
        for target, _name in _imports(path):
            if target in _modules() and target != module:
                edges[module].add(target)
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_package_declares_what_it_may_import_and_the_declarations_make_no_loop() -> None:
    declared = _declared()
    unknown = {f"{pkg} -> {dep}" for pkg, deps in declared.items() for dep in deps if dep not in declared}
    assert not unknown, f"declared imports of packages that do not exist: {sorted(unknown)}"
    assert not _cycles(declared), f"the packages' declared imports loop: {_cycles(declared)}"


def test_every_import_points_down_to_a_package_its_package_declares() -> None:
    declared = _declared()
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _edges().items()
        for target in targets
        if _package(target) not in {_package(module), *GROUND, *declared[_package(module)]}
    )
    assert not upward, "imports its package does not declare (an upward or sideways arrow):\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle() -> None:
    # A package's __init__ that re-exports its modules lazily names them under TYPE_CHECKING; a module of
    # the package importing a sibling loads that __init__ first, which is no loop of the code's own.
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in _edges().items()}
    assert not _cycles(graph), f"modules that import each other in a circle: {_cycles(graph)}"


def test_no_module_takes_a_private_name_from_another_package() -> None:
    private = sorted(
        f"{module} takes {name} from {target}"
        for module, path in _modules().items()
        for target, name in _imports(path)
        if name and name.startswith("_") and not name.startswith("__") and _package(target) != _package(module)
    )
    assert not private, "\n".join(private)


@pytest.mark.parametrize("package", sorted(p.parent.name for p in HARNESS.glob("*/__init__.py")))
def test_each_package_says_what_it_owns(package: str) -> None:
    doc = ast.get_docstring(ast.parse((HARNESS / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert len(doc.split("May import:")[0].split()) >= 12, f"harness/{package}/__init__.py: say what the package owns"
