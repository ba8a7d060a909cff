"""Ctrl-C as a request to stop cleanly, not an exception in the middle of a write.

Inside :func:`graceful_interrupt`:

1. the first SIGINT only sets a flag: no new game, round or attempt starts, retry waits
   are cut short, and the requests already sent are answered and recorded;
2. the second SIGINT says why the run is still waiting: the requests in flight are paid for
   whether or not their answers are read, so their answers are awaited (each is bounded by the
   request timeout) and kept, rather than bought again by ``pdbench resume``;
3. the third SIGINT abandons the requests in flight (their games are marked interrupted;
   ``pdbench resume`` replays them, buying those answers again: at most the concurrency),
   while the results writer still finishes the batch it is writing, so the run file stays
   consistent;
4. a fourth SIGINT raises KeyboardInterrupt, for a run that does not stop at all.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType


class StopFlag:
    """Set when the user (or a budget) asks the run to stop starting new work."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._forced = threading.Event()
        self._on_force: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        self.reason: str | None = None

    def set(self, reason: str = "interrupted") -> None:
        self.reason = self.reason or reason
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    __bool__ = is_set

    def force(self, reason: str = "interrupted") -> None:
        """Stop now: set the flag and abandon work in flight (the callbacks do the abandoning)."""
        self.set(reason)
        with self._lock:
            self._forced.set()
            callbacks = list(self._on_force)
        for callback in callbacks:
            callback()

    @property
    def forced(self) -> bool:
        return self._forced.is_set()

    @contextmanager
    def on_force(self, callback: Callable[[], object]) -> Iterator[None]:
        """Call ``callback`` (from any thread) if the stop is forced while the block runs."""
        with self._lock:
            self._on_force.append(callback)
            already = self._forced.is_set()
        if already:
            callback()
        try:
            yield
        finally:
            with self._lock:
                self._on_force.remove(callback)


WAITING = (
    "\nStopping: waiting for the answers to the requests already sent. They are paid for, so they are kept "
    "rather than bought again by `pdbench resume`; each waits at most the request timeout. Press Ctrl-C "
    "again to abandon them.\n"
)


def _say(message: str) -> None:
    """Write to the terminal from a signal handler (no lock that the interrupted code may hold)."""
    with suppress(OSError, ValueError):
        os.write(sys.stderr.fileno(), message.encode("utf-8", "replace"))


@contextmanager
def graceful_interrupt(flag: StopFlag) -> Iterator[StopFlag]:
    """Route SIGINT to ``flag`` for the duration (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    presses = 0

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if flag.forced:
            raise KeyboardInterrupt
        if presses >= 3:
            flag.force("interrupted by the user (Ctrl-C three times: requests in flight abandoned)")
        elif flag.is_set() and presses == 2:
            _say(WAITING)
        else:
            flag.set("interrupted by the user (Ctrl-C)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
