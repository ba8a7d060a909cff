"""Package re-exports that load their module on first use.

A package's ``__init__`` names what it offers (``from harness.config import ExperimentConfig``), but
importing one light module of the package (``harness.config.sections`` for a bound, ``harness.calls.limits.settings``
for another) runs that ``__init__`` first. Were it to import every module it re-exports, ``pdbench --help``
would build every config model, template sandbox and limiter before printing a line (see the start-up test,
``tests/unit/test_startup.py``). So these packages map each name to its module and import it when the name
is first asked for; type checkers read the same names from an ``if TYPE_CHECKING:`` block beside the map.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that imports ``exports[name]`` (a module of the package, named
    relative to it) when ``name`` is first read, and keeps the value in the package so later reads are plain."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
