"""Ctrl-C, SIGTERM and a closed terminal as requests to stop cleanly, never an exception mid-write.

Inside :func:`graceful_interrupt`:

1. the first SIGINT only sets a flag: no new game, round or attempt starts, retry waits
   are cut short, requests waiting for a pause or a rate are not sent (the run's callbacks,
   :meth:`StopFlag.on_set`, close the limiters), the live display says at once what the run
   still waits for, and the requests already sent are answered and recorded;
2. the second SIGINT says why the run is still waiting: the requests in flight are paid for
   whether or not their answers are read, so their answers are awaited (each is bounded by the
   request timeout) and kept, rather than bought again by ``pdbench resume``;
3. the third SIGINT abandons the requests in flight (their games are marked interrupted;
   ``pdbench resume`` replays them, buying those answers again: at most the concurrency),
   while the results writer still finishes the batch it is writing, so the run file stays
   consistent;
4. later presses only say that the results are being saved. No press ever raises
   KeyboardInterrupt: an exception can land anywhere, in the middle of the writer's last
   transaction too (DuckDB turns it into "Query interrupted" and the run would end ``failed``).

SIGTERM (a service manager, ``kill``) and SIGHUP (the terminal was closed) stop the run like a first
Ctrl-C and abandon what is still in flight after :data:`TERM_GRACE_S`, well within the usual 10 s a
service manager waits before SIGKILL. After SIGHUP the terminal is gone, so standard output and error
are pointed at ``/dev/null``: the display's next write must not fail and fail the run with it.

The count of presses lives on the :class:`StopFlag`, so a command that guards its whole life (the CLI:
run, then summary) and the run inside it share one count. Once the run is saving its results
(:meth:`StopFlag.finishing`), signals are only acknowledged.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

LOST_CTRL_C = threading.Event()
"""Set when a Ctrl-C was swallowed by Python (see :func:`keep_swallowed_interrupts`); the next
:func:`graceful_interrupt` or the console script's start-up acts on it."""


def keep_swallowed_interrupts() -> None:
    """Keep the Ctrl-Cs that Python would swallow, instead of losing them.

    A KeyboardInterrupt raised inside a weak-reference callback or a ``__del__`` cannot propagate: Python
    prints "Exception ignored in ..." with a traceback and goes on. Imports run such callbacks (the module
    locks'), so a Ctrl-C in the second the command line takes to import was now and then printed as a
    traceback and otherwise ignored: the run went ahead. This hook notes it in :data:`LOST_CTRL_C` instead,
    and passes every other unraisable exception to Python's own hook.
    """
    previous = sys.unraisablehook

    def hook(unraisable: UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            LOST_CTRL_C.set()
            return
        previous(unraisable)

    sys.unraisablehook = hook


TERM_GRACE_S = 5.0
"""After SIGTERM or SIGHUP, how long the requests in flight may still be answered before they are abandoned."""


class StopFlag:
    """Set when the user (or a budget) asks the run to stop starting new work."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._forced = threading.Event()
        self._on_force: list[Callable[[], object]] = []
        self._on_set: list[Callable[[], object]] = []
        self._lock = threading.RLock()  # re-entrant: a signal handler may set the flag while this thread holds it
        self._finishing = threading.Event()
        self.presses = 0
        self.reason: str | None = None

    def set(self, reason: str = "interrupted") -> None:
        self.reason = self.reason or reason
        with self._lock:
            first = not self._event.is_set()
            self._event.set()
            callbacks = list(self._on_set) if first else []
        for callback in callbacks:
            callback()

    def is_set(self) -> bool:
        return self._event.is_set()

    __bool__ = is_set

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the flag (a Ctrl-C ends the wait); whether it is set."""
        return self._event.wait(timeout)

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

    def finishing(self) -> None:
        """The run has stopped playing and is saving its results: from now on signals are only acknowledged."""
        self._finishing.set()

    @property
    def is_finishing(self) -> bool:
        return self._finishing.is_set()

    def on_set(self, callback: Callable[[], object]) -> AbstractContextManager[None]:
        """Call ``callback`` (from any thread) once when the flag is set while the block runs."""
        return self._subscribed(self._on_set, self._event, callback)

    def on_force(self, callback: Callable[[], object]) -> AbstractContextManager[None]:
        """Call ``callback`` (from any thread) if the stop is forced while the block runs."""
        return self._subscribed(self._on_force, self._forced, callback)

    @contextmanager
    def _subscribed(
        self, callbacks: list[Callable[[], object]], event: threading.Event, callback: Callable[[], object]
    ) -> Iterator[None]:
        """``callback`` in ``callbacks`` while the block runs; called at once if ``event`` is already set."""
        with self._lock:
            callbacks.append(callback)
            already = event.is_set()
        if already:
            callback()
        try:
            yield
        finally:
            with self._lock:
                callbacks.remove(callback)


WAITING = (
    "\nStopping: waiting for the answers to the requests already sent. They are paid for, so they are kept "
    "rather than bought again by `pdbench resume`; each waits at most the request timeout. Press Ctrl-C "
    "again to abandon them.\n"
)
SAVING = "\nStopping: saving what was recorded; every finished game is kept. One moment.\n"
SIGNAL_NAMES = {signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP (the terminal was closed)"}


def _say(message: str) -> None:
    """Write to the terminal from a signal handler (no lock that the interrupted code may hold)."""
    with suppress(OSError, ValueError):
        os.write(sys.stderr.fileno(), message.encode("utf-8", "replace"))


def _silence_terminal() -> None:
    """Point standard output and error at /dev/null: the terminal they wrote to was closed."""
    with suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (sys.stdout.fileno(), sys.stderr.fileno()):
            os.dup2(null, fd)
        os.close(null)


@contextmanager
def graceful_interrupt(flag: StopFlag) -> Iterator[StopFlag]:
    """Route SIGINT, SIGTERM and SIGHUP to ``flag`` for the duration (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    timers: list[threading.Timer] = []

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        flag.presses += 1
        if flag.is_finishing or flag.forced:
            _say(SAVING)
        elif flag.presses >= 3:
            flag.force("interrupted by the user (Ctrl-C three times: requests in flight abandoned)")
        elif flag.is_set() and flag.presses == 2:
            _say(WAITING)
        else:
            flag.set("interrupted by the user (Ctrl-C)")

    def on_termination(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            _silence_terminal()
        if flag.is_finishing or flag.forced:
            return
        name = SIGNAL_NAMES.get(signal.Signals(signum), signal.Signals(signum).name)
        flag.set(f"stopped by {name}")
        reason = f"stopped by {name}; requests still in flight after {TERM_GRACE_S:g} s abandoned"
        timer = threading.Timer(TERM_GRACE_S, lambda: None if flag.is_finishing else flag.force(reason))
        timer.daemon = True
        timers.append(timer)
        timer.start()

    previous = {
        signal.SIGINT: signal.signal(signal.SIGINT, on_sigint),
        signal.SIGTERM: signal.signal(signal.SIGTERM, on_termination),
        signal.SIGHUP: signal.signal(signal.SIGHUP, on_termination),
    }
    if LOST_CTRL_C.is_set():  # a Ctrl-C before this handler existed, that Python swallowed
        LOST_CTRL_C.clear()
        on_sigint(signal.SIGINT, None)
    try:
        yield flag
    finally:
        for timer in timers:
            timer.cancel()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
