"""One transaction on a results file: every write of the store goes through :func:`transaction`.

DuckDB applies a transaction whole or not at all, so a crash, a Ctrl-C or a full disk in the middle of a
batch leaves the file as it was before it; the helper makes sure every writer rolls back the same way, and
says what a failed write means for the run (``errors``) in one place instead of eight.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import duckdb


@contextlib.contextmanager
def transaction(
    con: duckdb.DuckDBPyConnection, errors: Callable[[duckdb.Error], Exception] | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Run the block in one transaction on ``con``: committed if it ends normally, rolled back if anything is
    raised (the commit included). A DuckDB error is raised as ``errors(exc)`` if given (a writer's
    :func:`~harness.store.run_file.write_error`, which tells a full disk from a damaged file), else as it is."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except duckdb.Error as exc:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        if errors is None:
            raise
        raise errors(exc) from None
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
