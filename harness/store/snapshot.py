"""Live copies: reading a run while another process (or thread) writes it.

DuckDB lets no one else open a file while a process writes it. So the writer of a run, while someone
reads, publishes consistent read-only copies of the run beside it, and a reader that finds the run file
locked reads the newest copy instead (:class:`harness.store.catalog.Catalog` does this for every read:
``pdbench sql``, ``pdbench report``, the dashboard). Beside ``<run_id>.duckdb``:

- ``<run_id>.duckdb.live-wanted``: a reader asks for copies by touching it. The writer looks at its
  modification time (one ``stat``) each time it has committed a batch (every 0.25 s in a model run) and
  publishes only while someone asked within :data:`WANTED_FOR_S`: a run nobody reads pays nothing.
- ``<run_id>.duckdb.live/``: the copy (``<n>.duckdb``, with its ``.wal``), and ``info.json``, which names it
  and says when it was last brought up to date (or found unchanged) and how often the writer publishes,
  so a reader can tell a copy the writer keeps fresh from one left from a while ago. The writer creates
  it once it plays; a reader waits for a copy only from a writer that has (not from another program
  holding the file, nor from a writer still setting a run up).

A copy is the run file and its write-ahead log as they are between two of the writer's transactions:
what DuckDB would recover had the writer crashed at that moment, so it holds every committed batch and
nothing else. A batch is one transaction, so a copy never holds a round without its calls nor a complete
game without its rounds. Copying leaves the writer's own file alone (no checkpoint for a copy's sake).
DuckDB only appends to the log between two checkpoints, so the writer brings the copy up to date by
appending what its log gained since (also between two transactions): a copy usually costs kilobytes. Only when the run
file itself changed does it make a new copy, ``<n+1>.duckdb`` (the last :data:`KEEP_COPIES` old ones stay
a while for readers that chose one just before): after a checkpoint, or after a batch so large (a
fast strategy run's) that DuckDB wrote it straight to the file. A reader that opens a copy while the
writer appends to its log reads it as DuckDB reads a log cut short by a crash: up to the last whole
transaction. It replays the log when it opens the copy (some 30 ms for 16 MB; the log may reach 64 MB).

The writer publishes at most every :data:`PUBLISH_EVERY_S` seconds, so a reader sees a finished game a
second or two after it ends, however large the run. What could make copies costly is a checkpoint: it
rewrites the run file, and the next copy is a whole one (0.3–0.4 s for 330 MB here). So the writer
checkpoints itself (:meth:`harness.store.writer.RunWriter.committed`, once its log reaches
:data:`CHECKPOINT_BYTES`), and while someone reads it asks :meth:`Publisher.may_checkpoint` first, which
holds checkpoints back until whole copies would take at most :data:`PUBLISH_SHARE` of the writer's time;
the log meanwhile grows (DuckDB itself checkpoints at :data:`MOST_LOG_BYTES` whatever we hold back).
Whole copies themselves keep to that share whatever made them necessary (a run whose every batch goes
to the file gets one every ten times what the last took). The cheap appends are never held back for a
costly copy, so visibility does not suffer from one. What does delay a game is a checkpoint itself, read
or not: no commit is made while one runs, and on a core the run keeps busy one can take seconds (see
tests/benchmarks/bench_live_reads.py); so while someone reads, the writer publishes just before each.
The writer removes these files when it closes; a killed writer leaves them behind, and they are ignored,
then removed by the next reader or writer, as soon as the run file itself can be opened.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

PUBLISH_EVERY_S = 1.0  # the shortest interval between two copies
MAX_EVERY_S = 30.0  # the longest, however costly a copy; and the pause after a copy that failed
PUBLISH_SHARE = 0.1  # the share of the writer's time publishing may take
CHECKPOINT_BYTES = 16 << 20  # the writer checkpoints when its log is this large (DuckDB's own default)
MOST_LOG_BYTES = 64 << 20  # DuckDB checkpoints at this, however long checkpoints are held back for readers
WANTED_FOR_S = 10.0  # a request keeps the writer publishing this long
CHECK_EVERY_S = 0.2  # how often the writer looks for requests
CONFIRM_EVERY_S = 1.0  # how often an unchanged copy is said to be still current
KEEP_S = 10.0  # how long a superseded generation is kept for readers that just chose it
KEEP_COPIES = 2  # the most superseded generations kept (each a whole copy of the run)
WAIT_S = 5.0  # how long a reader waits for a copy it asked for
QUIET_S = 30.0  # after a wait in vain, how long a process reads without waiting again for that run
_SETTLED_NS = 100_000_000  # file times are coarse: a file changed within this is not known to be unchanged
_POLL_S = 0.05

_log = logging.getLogger(__name__)
_unanswered: dict[Path, float] = {}  # run file -> when a wait for its copy ended in vain (monotonic)


@dataclass(frozen=True, slots=True)
class LiveFiles:
    """Where a run file's live copies and the requests for them are."""

    folder: Path
    wanted: Path

    @classmethod
    def of(cls, run_file: Path) -> LiveFiles:
        """Beside the file itself, not a link to it: a reader through a symbolic link (a results folder that
        links runs kept elsewhere) must ask, and look, where the writer of the file does."""
        real = run_file.resolve()
        return cls(real.with_name(real.name + ".live"), real.with_name(real.name + ".live-wanted"))

    @property
    def info(self) -> Path:
        return self.folder / "info.json"

    def generation(self, n: int) -> Path:
        return self.folder / f"{n}.duckdb"

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.wanted.unlink(missing_ok=True)


def remove_leftovers(run_file: Path) -> None:
    """Remove the live files of a run no one is writing (a killed writer's): call only while holding the
    run file open, which keeps any writer out."""
    files = LiveFiles.of(run_file)
    if files.folder.exists() or files.wanted.exists():
        files.remove()
    beside_link = run_file.with_name(run_file.name + ".live-wanted")  # asked for there before links were followed
    if beside_link != files.wanted:
        with contextlib.suppress(OSError):
            beside_link.unlink(missing_ok=True)


# -- the writer's side ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _FileState:
    """What changes when the writer commits: the run file's and its log's identity, size and times."""

    main: tuple[int, int, int, int]
    wal: tuple[int, int, int, int] | None
    # The run file did not change in the last _SETTLED_NS, so a later change will show in its times (which the
    # kernel keeps coarsely). The log needs no such care: DuckDB only appends to it, which changes its size.
    main_settled: bool

    @classmethod
    def of(cls, run_file: Path, wal_file: Path) -> _FileState:
        now = time.time_ns()
        st = run_file.stat()
        main = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        try:
            ws = wal_file.stat()
            wal: tuple[int, int, int, int] | None = (ws.st_ino, ws.st_size, ws.st_mtime_ns, ws.st_ctime_ns)
        except FileNotFoundError:
            wal = None
        return cls(main, wal, now - max(st.st_mtime_ns, st.st_ctime_ns) > _SETTLED_NS)


class Publisher:
    """Publishes live copies of one run file for its writer; see the module docstring.

    Every method runs in the writer's thread, between its transactions.
    """

    def __init__(self, run_file: Path) -> None:
        self.files = LiveFiles.of(run_file)
        self.run_file = run_file
        self._wal = run_file.with_name(run_file.name + ".wal")
        self._next_check = 0.0
        self._next_publish = 0.0
        self._every = PUBLISH_EVERY_S
        self._wanted = False  # someone asked for copies within WANTED_FOR_S (as of the last look)
        self._next_checkpoint = 0.0  # while someone reads, no checkpoint before this (monotonic)
        self._next_whole = 0.0  # no whole copy before this (monotonic)
        self._whole_every = 0.0  # the interval between whole copies while every copy must be whole, else 0
        self._state: _FileState | None = None  # the files' state when the copy was last brought up to date
        self._generation = 0  # the copy: a copy of the run file as a checkpoint left it, with the log since
        self._wal_copied = 0  # bytes of the log appended to the copy's so far
        self._superseded: list[tuple[int, float]] = []  # (generation, when superseded), oldest first
        self._at = 0.0  # when the newest copy was taken or last found current (epoch seconds)
        self.published = 0  # copies published (for tests and benchmarks)
        self._announced = False
        # The run file, open for copying until the writer has closed it. DuckDB's lock on the file is a POSIX
        # record lock, which the process loses as soon as it closes *any* descriptor of the file: opening and
        # closing the file for each copy would let other processes open the run file while it is written.
        self._source: int | None = None

    def open(self) -> None:
        """Clear what an earlier writer of this run left (the file's lock is the caller's: no one else writes it)."""
        self.files.remove()

    def _announce(self) -> None:
        """Say that this writer publishes copies, so that readers wait for one: done when it first looks for
        requests, i.e. once it plays (a writer still setting up a run would keep readers waiting in vain)."""
        self._announced = True
        with contextlib.suppress(OSError):
            self.files.folder.mkdir(exist_ok=True)
            self._write_info(None)

    def close(self) -> None:
        """Remove the live files; call after the writer's connection is closed (see ``_source``)."""
        if self._source is not None:
            os.close(self._source)
            self._source = None
        self.files.remove()

    def due(self) -> bool:
        """Whether a copy should be published now (then call :meth:`publish`, between transactions). Cheap, and
        the same answer until something changes: looks for requests at most every :data:`CHECK_EVERY_S`, and
        then says an unchanged copy is still current."""
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + CHECK_EVERY_S
            if not self._announced:
                self._announce()
            try:
                self._wanted = time.time() - self.files.wanted.stat().st_mtime <= WANTED_FOR_S
            except OSError:
                self._wanted = False
            if self._wanted and now < self._next_publish:  # too soon after the last copy (or a failed one)
                self._confirm_if_unchanged()
        return self._wanted and now >= self._next_publish

    @property
    def wanted(self) -> bool:
        """Whether someone asked for copies within :data:`WANTED_FOR_S` (as of the last look, see :meth:`due`)."""
        return self._wanted

    def may_checkpoint(self) -> bool:
        """Whether the writer may checkpoint now. A checkpoint rewrites the run file, so the copy after it is
        a whole one: while someone reads, checkpoints wait until the last whole copy is far enough behind
        that whole copies take at most :data:`PUBLISH_SHARE` of the writer's time."""
        return not self._wanted or time.monotonic() >= self._next_checkpoint

    def publish(self) -> None:
        """Publish a copy of the run as committed now (or, if nothing was committed since the last copy, say
        that it is still current). A copy that cannot be made (a full disk) is given up for a while and
        logged: it never stops the run."""
        if not self._announced:
            self._announce()
        if self._confirm_if_unchanged():
            self._next_publish = time.monotonic() + CHECK_EVERY_S
            return
        started = time.monotonic()
        at = time.time()
        fresh = False
        try:
            state = _FileState.of(self.run_file, self._wal)
            if not self._extends(state):
                # A whole copy (the run file changed): as costly as the file is large, so no sooner than the
                # last one's cost allows (see _next_whole), and only once the file's times can be trusted.
                if started < self._next_whole:
                    self._next_publish = self._next_whole
                    return
                fresh = True
                state = self._settled(state)
                self._copy_anew(self.files.generation(self._generation + 1), state)
            else:
                self._append_log(self.files.generation(self._generation), state)
        except OSError as exc:
            self._state = None  # whatever was half-appended, the next copy starts anew
            _log.warning(
                "could not publish a live copy of %s (%s); trying again in %.0f s",
                self.run_file,
                exc.strerror or exc,
                MAX_EVERY_S,
            )
            self._next_publish = time.monotonic() + MAX_EVERY_S
            return
        except BaseException:
            self._state = None
            raise
        done = time.monotonic()
        cost = done - started
        if fresh:
            # The next whole copy, and the checkpoint that would make one necessary, wait until this one is a
            # tenth of the time behind. Readers are told the interval, so they do not wait for a copy sooner.
            self._whole_every = min(MAX_EVERY_S, cost / PUBLISH_SHARE)
            self._next_checkpoint = self._next_whole = done + self._whole_every
            if self._generation:
                self._superseded.append((self._generation, done))
            self._generation += 1
        else:  # appending costs milliseconds; were it ever to cost more, publish less often
            self._every = min(MAX_EVERY_S, max(PUBLISH_EVERY_S, cost / PUBLISH_SHARE))
            self._whole_every = 0.0
        self._next_publish = started + self._every
        self._state, self._at = state, at
        self.published += 1
        with contextlib.suppress(OSError):
            self._write_info(at)
        self._drop_superseded()

    def _settled(self, state: _FileState) -> _FileState:
        """The files' state, once the run file has been left alone long enough that a later change will show in
        its times: waits (at most 0.1 s) only when the last commit wrote the run file itself (a checkpoint, or
        a batch so large that DuckDB wrote it straight to the file)."""
        if not state.main_settled:
            time.sleep(_SETTLED_NS / 1e9)
            state = _FileState.of(self.run_file, self._wal)
        return state

    def _extends(self, state: _FileState) -> bool:
        """Whether the copy can be brought up to date by appending to its log: the run file is as it was
        copied (no checkpoint since) and the log only grew."""
        last = self._state
        if last is None or not last.main_settled or last.main != state.main:
            return False
        if last.wal is None or state.wal is None:
            return last.wal is None  # a log begun since the copy: appended from its start
        return state.wal[0] == last.wal[0] and state.wal[1] >= self._wal_copied

    def _copy_anew(self, target: Path, state: _FileState) -> None:
        """Copy the run file and its log (a checkpoint rewrote the file, or this is the first copy)."""
        try:
            if self._source is None:
                self._source = os.open(self.run_file, os.O_RDONLY)
            _copy(self._source, target, 0, os.fstat(self._source).st_size)
            self._wal_copied = 0
            self._append_log(target, state)
        except BaseException:
            _remove_generation(target)
            raise

    def _append_log(self, target: Path, state: _FileState) -> None:
        """Append to the copy's log what the run's log gained since the last time."""
        if state.wal is None or state.wal[1] == self._wal_copied:
            return
        fd = os.open(self._wal, os.O_RDONLY)  # not the run file: closing it costs no lock
        try:
            _copy(fd, target.with_name(target.name + ".wal"), self._wal_copied, state.wal[1])
        finally:
            os.close(fd)
        self._wal_copied = state.wal[1]

    def _confirm_if_unchanged(self) -> bool:
        """If nothing was committed since the newest copy, say (at most every second) that it is still current."""
        last = self._state
        if last is None or not last.main_settled:
            return False
        try:
            now = _FileState.of(self.run_file, self._wal)
        except OSError:
            return False
        if (now.main, now.wal) != (last.main, last.wal):
            return False
        wall = time.time()
        if wall - self._at >= CONFIRM_EVERY_S:
            with contextlib.suppress(OSError):
                self._write_info(wall)
                self._at = wall
        return True

    def _drop_superseded(self) -> None:
        """Remove generations superseded more than :data:`KEEP_S` ago (a reader that chose one has opened it) but
        the last, and all but the last :data:`KEEP_COPIES` however young: each is a whole copy of the run, and a
        reader whose choice vanished before it opened it takes the newest instead."""
        now = time.monotonic()
        while len(self._superseded) > KEEP_COPIES or (
            len(self._superseded) > 1 and now - self._superseded[0][1] > KEEP_S
        ):
            _remove_generation(self.files.generation(self._superseded.pop(0)[0]))

    def _write_info(self, at: float | None) -> None:
        partial = self.files.folder / "info.json.partial"
        every = max(self._every, self._whole_every)
        partial.write_text(json.dumps({"generation": self._generation or None, "at": at, "every": every}))
        os.replace(partial, self.files.info)


def _remove_generation(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        with contextlib.suppress(OSError):
            p.unlink(missing_ok=True)


def _copy(src: int, dst: Path, start: int, end: int) -> None:
    """Copy bytes ``start`` to ``end`` of the file open as ``src`` to ``dst`` at the same offsets: a new file if
    ``start`` is 0, else one that must hold exactly the first ``start`` bytes already. In the kernel, sharing
    blocks where the file system can (btrfs, XFS), else by reading."""
    out = os.open(dst, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if start == 0 else 0), 0o644)
    try:
        if os.fstat(out).st_size != start:
            raise OSError(errno.EIO, f"{dst.name} does not hold what was copied to it")
        done = start
        try:
            while done < end and hasattr(os, "copy_file_range"):  # Linux only
                n = os.copy_file_range(src, out, end - done, done, done)
                if n == 0:
                    break
                done += n
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise
        while done < end:  # what copy_file_range did not do
            chunk = os.pread(src, min(1 << 20, end - done), done)
            if not chunk:
                raise OSError(errno.EIO, f"{dst.name}: the source ended {end - done} bytes early")
            done += os.pwrite(out, chunk, done)
    finally:
        os.close(out)


# -- the reader's side ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveCopy:
    """A live copy of a run being written, and when it was taken (local time)."""

    path: Path
    taken_at: datetime


@dataclass(frozen=True, slots=True)
class _Info:
    generation: int | None
    at: float | None
    every: float

    def fresh(self, now: float) -> bool:
        """Whether the writer keeps the copy current: taken within its interval (and the time a copy takes)."""
        return self.at is not None and now - self.at <= 1.2 * self.every + 1.5


def _read_info(path: Path) -> _Info | None:
    try:
        data = json.loads(path.read_text())
        generation, at, every = data["generation"], data["at"], float(data["every"])
        return _Info(None if generation is None else int(generation), None if at is None else float(at), every)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _ask(wanted: Path) -> bool:
    """Touch the request file; False if this reader may not (a folder it cannot write)."""
    try:
        fd = os.open(wanted, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.utime(fd)
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def _copy_of(files: LiveFiles, info: _Info | None) -> LiveCopy | None:
    if info is None or info.generation is None or info.at is None:
        return None
    path = files.generation(info.generation)
    if not path.is_file():
        return None
    return LiveCopy(path, datetime.fromtimestamp(info.at).astimezone())


def newest_copy(run_file: Path) -> LiveCopy | None:
    """The newest copy of a run, without asking or waiting (to try again when one vanished as it was opened)."""
    files = LiveFiles.of(run_file)
    return _copy_of(files, _read_info(files.info))


def live_copies(run_files: list[Path], wait_s: float | None = None) -> dict[Path, LiveCopy]:
    """Live copies of run files that writers hold: asks each writer for one and returns those it has.

    A copy the writer keeps current is returned at once. Otherwise (no one asked lately) this waits up to
    ``wait_s`` (default :data:`WAIT_S`) for the writer to answer, for all the runs at once, and then settles
    for an older copy if there is one. A run whose writer publishes no copies (another program holds the
    file, or a PDBench from before live copies) is left out at once, and so is one whose writer did not
    answer a wait in this process within the last :data:`QUIET_S` seconds (a writer setting up a resume).
    """
    asked_at = time.time()
    found: dict[Path, LiveCopy] = {}
    waiting: dict[Path, LiveFiles] = {}
    for run_file in run_files:
        files = LiveFiles.of(run_file)
        asked = _ask(files.wanted)
        info = _read_info(files.info)
        if info is None:
            continue
        copy = _copy_of(files, info)
        if copy is not None and info.fresh(asked_at):
            found[run_file] = copy
        elif asked and time.monotonic() - _unanswered.get(run_file, -QUIET_S) >= QUIET_S:
            waiting[run_file] = files
        elif copy is not None:
            found[run_file] = copy
    deadline = time.monotonic() + (WAIT_S if wait_s is None else wait_s)
    while waiting and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        for run_file, files in list(waiting.items()):
            info = _read_info(files.info)
            if info is not None and info.at is not None and info.at >= asked_at - _POLL_S:
                copy = _copy_of(files, info)
                if copy is not None:
                    found[run_file] = copy
                    del waiting[run_file]
                    _unanswered.pop(run_file, None)
    for run_file, files in waiting.items():
        _unanswered[run_file] = time.monotonic()
        copy = _copy_of(files, _read_info(files.info))
        if copy is not None:
            found[run_file] = copy
    return found
