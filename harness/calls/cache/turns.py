"""The response cache's async calls, grouped by turn of the event loop.

The ``aget`` calls of one turn (the games that reached a new round together) become one query,
and the ``aput`` calls of one turn (the games whose answers came in together) one transaction,
since a commit, which writes every page its rows touched, costs more than the rows. Each call adds
its key or row to the open :class:`Group` and yields once; the first of them to run again does the
work for all (:meth:`Turns.settle`), so no call waits on another, unless the file was busy and the work
went to a worker thread: then the others wait for it.

The work is tried first on the event loop's own thread, with a connection that does not wait for
locks at all: a read in WAL mode takes microseconds and does not wait for writers; a write holds
the lock for well under a millisecond. Only if the file is busy (another process writing, or a
checkpoint that blocks) does it go to a worker thread, which waits up to the busy timeout. Hopping
to a worker thread for every call cost more than the call itself (a fifth of a millisecond on one core).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from enum import Enum
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread

from harness.calls.cache.file import is_busy
from harness.calls.cache.storage import Storage
from harness.errors import StoreError

Item = TypeVar("Item")

Work = Callable[[sqlite3.Connection, list[Any]], Any]
"""A group's work: its items done with a connection, in one query or one transaction; one result for all."""


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


class Turns:
    """The groups of one kind of call (lookups, writes or claims): each thread's open group, and the doing of
    a group's work on ``storage``."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._local = threading.local()

    def current(self) -> Group[Any] | None:
        """This thread's open group, if there is one."""
        group: Group[Any] | None = getattr(self._local, "group", None)
        return group

    def join(self) -> Group[Any]:
        """This thread's open group, made if there is none: the caller adds its item, then yields once."""
        group: Group[Any] | None = getattr(self._local, "group", None)
        if group is None:
            group = self._local.group = Group()
        return group

    def _detach(self, group: Group[Any]) -> None:
        """Close ``group`` to new calls: the next call starts a new group."""
        if getattr(self._local, "group", None) is group:
            self._local.group = None

    def do_now(self, group: Group[Any], work: Work, connect: Callable[[], sqlite3.Connection]) -> None:
        """Do an open group's work at once with ``connect()`` (a call of it was cancelled, or the cache is
        closing), if nobody has and the file allows it; if it fails, a later call of the group, or closing, does it."""
        if group.state is GroupState.OPEN:
            with contextlib.suppress(Exception):
                group.result = work(connect(), group.items)
                self._detach(group)
                group.finish()

    async def settle(self, group: Group[Any], work: Work, action: str) -> bool:
        """Do ``group``'s work for all its calls, unless one of them is doing it already: then wait. Returns
        whether this call did the work (and so may count it once for the group).

        The work is tried with this thread's connection that never waits; if the file is busy, on a worker
        thread with one that waits for the lock. A sqlite3 failure becomes the StoreError every call of the
        group sees (``action`` says what failed: "read", "write to").
        """
        if group.state is GroupState.RUNNING:  # on a worker thread: the file was busy
            if group.event is None:
                group.event = anyio.Event()
            await group.event.wait()
            return False
        self._detach(group)  # from now on, calls start a new group
        group.state = GroupState.RUNNING
        storage = self._storage
        try:
            try:
                group.result = work(storage.nowait(), group.items)
            except sqlite3.Error as exc:
                if not is_busy(exc):
                    raise
                with anyio.CancelScope(shield=True):  # the other calls rely on it
                    group.result = await anyio.to_thread.run_sync(lambda: work(storage.waiting(), group.items))
        except sqlite3.Error as exc:
            group.error = storage.error(action, exc)
        except Exception as exc:  # a closed cache (StoreError), or a bug: every call sees it
            group.error = exc
        finally:
            if group.result is None and group.error is None:
                group.error = StoreError(f"A {action} of the response cache {storage.path} was interrupted.")
            self._detach(group)
            group.finish()
        return True
