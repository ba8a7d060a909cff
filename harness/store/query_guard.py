"""Stopping a query on Ctrl-C or when its time is up: DuckDB runs a query without looking at Python's signals.

While DuckDB works, the Python thread that asked waits in C code, so a Ctrl-C only sets a flag that Python
looks at once the query is over, however long that takes (a cross join of two big tables: hours). So on the
main thread the query runs on a helper thread while the main thread waits, which a Ctrl-C does interrupt; it
then stops the query with ``connection.interrupt()`` and says so (:class:`QueryInterrupted`). A time limit
(off the main thread too: the dashboard's scripts run on their own threads) interrupts it the same way
(:class:`~harness.errors.QueryTimeout`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

import duckdb

from harness.errors import QueryInterrupted, QueryTimeout

T = TypeVar("T")


class Stop(StrEnum):
    """Why a query was interrupted."""

    CTRL_C = "ctrl-c"
    TIMEOUT = "timeout"


@dataclass
class _Interrupter:
    """Interrupts the connection's query at most once, and only while the work runs (an interrupt that came
    after it ended would be lost anyway: DuckDB forgets it at the next query)."""

    con: duckdb.DuckDBPyConnection
    lock: threading.Lock = field(default_factory=threading.Lock)
    running: bool = True
    why: Stop | None = None

    def stop(self, why: Stop) -> None:
        with self.lock:
            if self.running and self.why is None:
                self.why = why
                self.con.interrupt()

    def done(self) -> None:
        with self.lock:
            self.running = False


def guarded(con: duckdb.DuckDBPyConnection, work: Callable[[], T], timeout_s: float | None = None) -> T:
    """``work()`` (queries on ``con``), stopped by a Ctrl-C (on the main thread) or after ``timeout_s`` seconds.

    Raises :class:`QueryInterrupted` (exit code 130) or :class:`QueryTimeout` in place of DuckDB's
    ``InterruptException``; any other outcome of ``work`` is passed on as it is."""
    interrupter = _Interrupter(con)
    timer = None
    if timeout_s is not None and timeout_s > 0:
        timer = threading.Timer(timeout_s, interrupter.stop, (Stop.TIMEOUT,))
        timer.daemon = True
    started = time.monotonic()
    try:
        if timer is not None:
            timer.start()
        if threading.current_thread() is threading.main_thread():
            return _on_helper_thread(work, interrupter)
        return work()
    except duckdb.InterruptException:
        if interrupter.why is None:  # interrupted by something else (DuckDB's own shutdown): as it was
            raise
    finally:
        interrupter.done()
        if timer is not None:
            timer.cancel()
        seconds = time.monotonic() - started
    if interrupter.why is Stop.TIMEOUT:
        raise QueryTimeout(
            f"the query was stopped after {seconds:.1f} s, its time limit. Narrow it (a WHERE on run_id, a LIMIT) or "
            "give it more time with --timeout SECONDS (0: no limit)."
        )
    raise QueryInterrupted(f"query stopped (Ctrl-C) after {seconds:.1f} s; nothing was changed.")


def _on_helper_thread(work: Callable[[], T], interrupter: _Interrupter) -> T:
    """Run ``work`` on a helper thread; a Ctrl-C while it runs interrupts its query, and this waits for it to end.
    After a Ctrl-C the query's outcome is DuckDB's ``InterruptException`` (turned into a clear line by
    :func:`guarded`), whatever the query did meanwhile.

    It waits on an event, not on ``Thread.join``: a join that a Ctrl-C interrupts can take the thread for ended
    while it still runs (Python before 3.13), and the connection would then be used while still busy."""
    result: list[T] = []
    error: list[BaseException] = []
    ended = threading.Event()

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the waiting thread, which raises it
            error.append(exc)
        finally:
            ended.set()

    threading.Thread(target=run, name="pdbench-query", daemon=True).start()
    try:
        ended.wait()
    except KeyboardInterrupt:
        interrupter.stop(Stop.CTRL_C)
        while not ended.is_set():  # DuckDB stops the query within moments; more Ctrl-Cs do not cut this short
            try:
                ended.wait()
            except KeyboardInterrupt:
                continue
    if interrupter.why is Stop.CTRL_C:
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
    if error:
        raise error[0]
    return result[0]
