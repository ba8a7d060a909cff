"""Results storage: one DuckDB file per run, written by one writer, read through a catalog."""

from typing import TYPE_CHECKING

from harness.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.store.catalog import Catalog
    from harness.store.schema import SCHEMA_VERSION
    from harness.store.writer import RunWriter

# Loaded on first use (see harness.lazy): reading a results folder needs neither the writer nor numpy.
__getattr__ = lazy_exports(__name__, {"Catalog": "catalog", "SCHEMA_VERSION": "schema", "RunWriter": "writer"})

__all__ = ["SCHEMA_VERSION", "Catalog", "RunWriter"]
