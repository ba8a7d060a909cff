"""Every write of the store is one transaction: whole, or not at all, whatever stops it."""

from __future__ import annotations

import duckdb
import pytest

from harness.errors import StoreError
from harness.store.transaction import transaction


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    return con


def rows(con: duckdb.DuckDBPyConnection) -> list[tuple[int]]:
    return con.execute("SELECT x FROM t ORDER BY x").fetchall()


def test_a_block_that_ends_normally_is_committed(con: duckdb.DuckDBPyConnection) -> None:
    with transaction(con):
        con.execute("INSERT INTO t VALUES (1), (2)")
    assert rows(con) == [(1,), (2,)]


def test_a_block_stopped_by_anything_leaves_nothing(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(KeyboardInterrupt), transaction(con):
        con.execute("INSERT INTO t VALUES (1)")
        raise KeyboardInterrupt
    assert rows(con) == []
    with transaction(con):  # and the connection takes the next one
        con.execute("INSERT INTO t VALUES (3)")
    assert rows(con) == [(3,)]


def test_a_failed_statement_rolls_back_the_block_and_is_raised_as_the_writer_says(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with pytest.raises(duckdb.ConstraintException), transaction(con):
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("INSERT INTO t VALUES (1)")
    assert rows(con) == []
    written = transaction(con, lambda exc: StoreError(f"could not write: {exc}"))
    with pytest.raises(StoreError, match=r"could not write: .*duplicate key") as caught, written:
        con.execute("INSERT INTO t VALUES (2)")
        con.execute("INSERT INTO t VALUES (2)")
    assert caught.value.__cause__ is None and rows(con) == []
