"""Stopping a query on Ctrl-C or when its time is up: DuckDB runs a query without looking at Python's signals.

While DuckDB works, the Python thread that asked waits in C code, so a Ctrl-C only sets a flag that Python
looks at once the query is over, however long that takes (a cross join of two big tables: hours). So on the
main thread the query runs on a helper thread while the main thread waits with a Ctrl-C handler of its own,
which stops the query with ``connection.interrupt()``; it then says so (:class:`QueryInterrupted`, exit code
130). A time limit (off the main thread too: the dashboard's scripts run on threads of their own) interrupts
it the same way (:class:`~harness.errors.QueryTimeout`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

import duckdb

from harness.errors import QueryInterrupted, QueryTimeout

T = TypeVar("T")

_AGAIN_S = 0.1  # once stopped, how often the work is interrupted again until it ends


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

    def again(self) -> None:
        """Interrupt once more: an interrupt that came as the work was between two queries (or before its first)
        found none to stop."""
        with self.lock:
            if self.running:
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
        if threading.current_thread() is threading.main_thread() and (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):  # a Ctrl-C would be a KeyboardInterrupt (a run in progress handles its own: it is left to it)
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
    """Run ``work`` on a helper thread while this (the main) thread waits, with a Ctrl-C handler of its own that
    interrupts the query; until the work ends. After a Ctrl-C its outcome is DuckDB's ``InterruptException``
    (turned into a clear line by :func:`guarded`), whatever the query did meanwhile.

    A handler rather than KeyboardInterrupt: that exception can land anywhere, in starting the thread too, and
    leave a query running on a connection about to be closed."""
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

    def on_ctrl_c(signum: int, frame: object) -> None:
        interrupter.stop(Stop.CTRL_C)

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        threading.Thread(target=run, name="pdbench-query", daemon=True).start()
        while not ended.wait(_AGAIN_S):
            if interrupter.why is not None:
                interrupter.again()
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupter.why is Stop.CTRL_C:
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
    if error:
        raise error[0]
    return result[0]
