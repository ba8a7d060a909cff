"""Results storage: one DuckDB file per run, written by one writer, read through a catalog. The schema and
its migrations, the writers (strategy runs, model runs, evolution runs), live copies for readers while a run
plays, the catalog over a results folder, and the SQL views every file carries (:mod:`harness.store.views`,
which the analysis reads too).

May import: errors, states, util, game, providers, calls, players, config, evolution.
"""

from typing import TYPE_CHECKING

from harness.util.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.store.catalog import Catalog
    from harness.store.schema import SCHEMA_VERSION
    from harness.store.writer import RunWriter

# Loaded on first use (see harness.util.lazy): reading a results folder needs neither the writer nor numpy.
__getattr__ = lazy_exports(__name__, {"Catalog": "catalog", "SCHEMA_VERSION": "schema", "RunWriter": "writer"})

__all__ = ["SCHEMA_VERSION", "Catalog", "RunWriter"]
