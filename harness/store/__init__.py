"""Results storage: one DuckDB file per run, written by one writer, read through a catalog."""

from harness.store.catalog import Catalog
from harness.store.schema import SCHEMA_VERSION
from harness.store.writer import RunWriter

__all__ = ["SCHEMA_VERSION", "Catalog", "RunWriter"]
