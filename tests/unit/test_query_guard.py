"""Stopping a DuckDB query on Ctrl-C or at its time limit (harness/store/query_guard.py), on the main thread (the CLI)
and on another (the dashboard's scripts); the connection stays usable after either."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import duckdb
import pytest

from harness.errors import QueryInterrupted, QueryTimeout
from harness.store.query_guard import guarded

RUNAWAY = "select count(*) from range(1000000000000) a, range(10) b"


@pytest.fixture
def default_ctrl_c() -> Iterator[None]:
    """Ctrl-C as a plain process has it (a KeyboardInterrupt), which is when ``guarded`` takes Ctrl-C over: with
    any other handler (an earlier test's, or SIGINT ignored by a suite started in the background) the runaway
    query ran on the main thread, the press never came, and a parallel run hung here for ten minutes."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_on_the_main_thread_stops_the_query_and_the_connection_stays_usable(default_ctrl_c: None) -> None:
    con = duckdb.connect(":memory:")
    assert threading.current_thread() is threading.main_thread()

    # The signal goes out once the query's thread has started: a Ctrl-C that comes before the query itself begins
    # stops it too (it is interrupted again until it ends).
    def press_when_running() -> None:
        while not [t for t in threading.enumerate() if t.name == "pdbench-query"]:
            threading.Event().wait(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press_when_running, daemon=True).start()
    with pytest.raises(QueryInterrupted, match=r"query stopped \(Ctrl-C\) after .* nothing was changed"):
        guarded(con, lambda: con.execute(RUNAWAY).fetchall())
    assert con.execute("select 42").fetchall() == [(42,)]  # not left busy by the stopped query
    con.close()


def test_a_query_past_its_time_limit_is_stopped_off_the_main_thread_too() -> None:
    con = duckdb.connect(":memory:")
    caught: list[BaseException] = []

    def script() -> None:  # as the dashboard runs a page
        try:
            guarded(con, lambda: con.execute(RUNAWAY).fetchall(), timeout_s=0.2)
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=script)
    thread.start()
    thread.join()
    assert len(caught) == 1 and isinstance(caught[0], QueryTimeout) and "--timeout SECONDS" in str(caught[0])
    assert guarded(con, lambda: con.execute("select 1").fetchall(), timeout_s=5) == [(1,)]
    con.close()
