"""Ctrl-C as a request to stop cleanly, not an exception in the middle of a write.

Inside :func:`graceful_interrupt`, the first SIGINT only sets a flag that the runner
checks between games; the run then flushes what it has and is marked interrupted.
A second SIGINT raises KeyboardInterrupt at once, for a user who really means it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class StopFlag:
    """Set when the user (or a budget) asks the run to stop starting new work."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    def set(self, reason: str = "interrupted") -> None:
        self.reason = self.reason or reason
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    __bool__ = is_set


@contextmanager
def graceful_interrupt(flag: StopFlag) -> Iterator[StopFlag]:
    """Route SIGINT to ``flag`` for the duration (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if flag.is_set():
            raise KeyboardInterrupt
        flag.set("interrupted by the user (Ctrl-C)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
