"""The response cache's async calls, grouped by turn of the event loop.

The ``aget`` calls of one turn (the games that reached a new round together) become one query,
and the ``aput`` calls of one turn (the games whose answers came in together) one transaction,
since a commit, which writes every page its rows touched, costs more than the rows. Each call adds
its key or row to the open :class:`Group` and yields once; the first of them to run again does the
work for all (:func:`settle`), so no call waits on another, unless the file was busy and the work
went to a worker thread: then the others wait for it.

The work is tried first on the event loop's own thread, with a connection that does not wait for
locks at all: a read in WAL mode takes microseconds and does not wait for writers; a write holds
the lock for well under a millisecond. Only if the file is busy (another process writing, or a
checkpoint that blocks) does it go to a worker thread, which waits up to the busy timeout. Hopping
to a worker thread for every call cost more than the call itself (a fifth of a millisecond on one core).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from enum import Enum
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread

from harness.calls.cache.file import is_busy
from harness.errors import StoreError

Item = TypeVar("Item")
T = TypeVar("T")


class GroupState(Enum):
    OPEN = "open"  # calls may still join
    RUNNING = "running"  # one call does the work (on a worker thread: the file was busy)
    DONE = "done"  # result or error is set


class Group(Generic[Item]):
    """The items (keys to look up, rows to insert, claims to make) of one turn of the event loop."""

    __slots__ = ("error", "event", "items", "pending", "result", "state")

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.pending: dict[str, Any] = {}  # rows to insert, by key: readable by aget until committed
        self.state = GroupState.OPEN
        self.result: Any = None  # {key: row} found, or one answer per item
        self.error: BaseException | None = None
        self.event: anyio.Event | None = None  # made when a call has to wait for the work

    def finish(self) -> None:
        """Mark the group done and wake the calls waiting for it."""
        self.state = GroupState.DONE
        if self.event is not None:
            self.event.set()


async def settle(
    group: Group[Item],
    detach: Callable[[], None],
    run_here: Callable[[list[Item]], Any],
    run_waiting: Callable[[list[Item]], Any],
    failure: Callable[[sqlite3.Error], BaseException],
    interrupted: str,
) -> bool:
    """Do ``group``'s work for all its calls, unless one of them is doing it already: then wait. Returns
    whether this call did the work (and so may count it once for the group).

    ``detach`` closes the group to new calls; ``run_here`` does the work with the connection that never
    waits, ``run_waiting`` (on a worker thread) with one that waits for the lock; ``failure`` turns a
    sqlite3 error into the error every call sees; ``interrupted`` is the message if neither finished.
    """
    if group.state is GroupState.RUNNING:  # on a worker thread: the file was busy
        if group.event is None:
            group.event = anyio.Event()
        await group.event.wait()
        return False
    detach()  # from now on, calls start a new group
    group.state = GroupState.RUNNING
    try:
        try:
            group.result = run_here(group.items)
        except sqlite3.Error as exc:
            if not is_busy(exc):
                raise
            with anyio.CancelScope(shield=True):  # the other calls rely on it
                group.result = await in_thread(run_waiting, group.items)
    except sqlite3.Error as exc:
        group.error = failure(exc)
    except Exception as exc:  # a closed cache (StoreError), or a bug: every call sees it
        group.error = exc
    finally:
        if group.result is None and group.error is None:
            group.error = StoreError(interrupted)
        detach()
        group.finish()
    return True


async def in_thread(func: Callable[..., T], *args: Any) -> T:
    return await anyio.to_thread.run_sync(functools.partial(func, *args))
