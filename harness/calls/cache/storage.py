"""The response cache's SQLite file as one process holds it: a connection per thread, the file's identity,
its failures as the user should read them, and the WAL checkpoints.

SQLite objects must not be shared across threads, so each thread gets its own connections, made on
first use: one that waits for the lock up to the busy timeout (worker threads, maintenance), and one
that never waits (the event loop's thread, where a wait would stall every game; see
:mod:`harness.calls.cache.turns`). The no-wait connections never checkpoint the WAL themselves (a
checkpoint waits for the disk); every ``CHECKPOINT_ROWS`` rows they write, a background thread runs a
passive checkpoint, which blocks no reader or writer. :meth:`Storage.close` waits for it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.calls.cache.file import cache_error, checkpoint, connect_nowait, connect_waiting, file_identity
from harness.errors import CacheLost, StoreError

CHECKPOINT_ROWS = 1000  # rows written by the no-wait connections between two background WAL checkpoints

Registry = dict[threading.Thread, sqlite3.Connection]


class Storage:
    """The cache file at ``path`` (parent folders are created), opened and checked now, so that a bad
    file is reported before any game starts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()  # this thread's connections
        self._waiting: Registry = {}
        self._nowait: Registry = {}
        self._lock = threading.Lock()  # guards the registries, the closed flag and the checkpoints
        self._closed = False
        self._rows_since_checkpoint = 0
        self._checkpointer: threading.Thread | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"Cannot create the folder of the response cache {self.path}: {exc}. "
                "Choose another results folder with --results."
            ) from exc
        with self.guard("open"):
            self.waiting()
        self._identity = file_identity(self.path)

    def waiting(self) -> sqlite3.Connection:
        """This thread's connection that waits for the lock, opened (and the schema ensured) on first use."""
        return self._thread_connection("waiting", self._waiting, connect_waiting)

    def nowait(self) -> sqlite3.Connection:
        """This thread's connection for the event loop, which never waits for a lock."""
        return self._thread_connection("nowait", self._nowait, connect_nowait)

    def _thread_connection(
        self, slot: str, registry: Registry, connect: Callable[[Path], sqlite3.Connection]
    ) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, slot, None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"The response cache {self.path} was closed; open a new ResponseCache.")
        conn = connect(self.path)
        setattr(self._local, slot, conn)
        with self._lock:
            # Worker threads come and go (anyio retires idle ones): close the connections of
            # finished threads so that a long run does not accumulate open files.
            for thread in [t for t in registry if not t.is_alive()]:
                registry.pop(thread).close()
            registry[threading.current_thread()] = conn
        return conn

    def check_file(self) -> None:
        """Raise :class:`CacheLost` if the file was deleted or replaced since it was opened: SQLite
        would go on writing to the unlinked file, and every answer written would be lost on close."""
        if file_identity(self.path) != self._identity:
            raise CacheLost(f"The response cache {self.path} was deleted or replaced while in use.", vanished=True)

    def error(self, action: str, exc: sqlite3.Error) -> StoreError:
        """A failed ``action`` ("read", "write to"...) on this file, as the user should read it."""
        return cache_error(self.path, action, exc)

    @contextmanager
    def guard(self, action: str) -> Iterator[None]:
        """Turn any sqlite3 failure into a StoreError that names the file and the way out."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self.error(action, exc) from exc

    def written(self, rows: int) -> None:
        """Count ``rows`` written by a no-wait connection; start a background checkpoint every CHECKPOINT_ROWS."""
        with self._lock:
            self._rows_since_checkpoint += rows
            if self._rows_since_checkpoint < CHECKPOINT_ROWS or self._closed:
                return
            if self._checkpointer is not None and self._checkpointer.is_alive():
                return
            self._rows_since_checkpoint = 0
            self._checkpointer = threading.Thread(target=self._checkpoint, name="pdbench-cache-checkpoint", daemon=True)
            self._checkpointer.start()

    def _checkpoint(self) -> None:
        checkpoint(self.path)

    def close(self) -> None:
        """Close every thread's connection, once a background checkpoint still running has finished."""
        with self._lock:
            self._closed = True
            checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.join()
        with self._lock:
            waiting, self._waiting = self._waiting, {}
            nowait, self._nowait = self._nowait, {}
        for conn in [*nowait.values(), *waiting.values()]:
            conn.close()
        self._local = threading.local()
