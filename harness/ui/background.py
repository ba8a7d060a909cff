"""Runs started from the dashboard: each plays in a background thread, through the same engine as the CLI.

A run is not tied to a Streamlit script run: with fast reruns any click stops the script run in
progress, so a run played inside one would be cut short by every click. Here the run goes on
whatever the user does (switching views included) until it ends or Stop is pressed; the page only
reads its counters (:mod:`harness.ui.progress_panel` draws them). Stop asks the engine to stop
cleanly: the run ends ``interrupted``, every finished game kept, resumable like any other, and the
finished run is an ordinary run file that `pdbench sql` reads. When the server shuts down, every
run still playing is stopped the same way rather than dying mid-write with the process.

No Streamlit here: a :class:`Job` is plain data written by its thread and read by the page.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness.calls.pricing import PriceTable
from harness.config import ExperimentConfig, check_run_id
from harness.config.engine_options import EngineOptions
from harness.config.plan import summarize
from harness.config.run_settings import engine_options
from harness.engine.interrupts import StopFlag
from harness.engine.model_games import Monitor
from harness.engine.preflight import check_models, check_prices
from harness.engine.runner import RunResult, run_experiment
from harness.engine.structured_probe import check_structured_replies
from harness.errors import ConfigError, PDBenchError, RunExistsError
from harness.providers.keys import scrub
from harness.store.run_file import run_path

STOPPED = "stopped from the dashboard"
SHUT_DOWN = "the dashboard was shut down"
_log = logging.getLogger(__name__)
_LOCK = threading.Lock()
_ACTIVE: set[Job] = set()  # runs playing in this process, whichever session started them


@dataclass(frozen=True, slots=True)
class Counters:
    """A run's live numbers. Model counters come from the engine's monitor; a strategy-only run
    reports finished games only, so its rounds are known when it ends (``None`` until then)."""

    games_done: int
    games_total: int
    games_failed: int = 0
    rounds: int | None = None
    calls: int | None = None  # None: no model plays in this run
    cached: int = 0
    cost_usd: float = 0.0
    rounds_expected: float = 0.0  # all games' rounds (expected, with a geometric horizon)

    @property
    def fraction(self) -> float:
        """How far the run is: by games, or by rounds while model games play side by side (their
        games end together, so counting games alone would leave the bar empty until the end)."""
        done = self.games_done / self.games_total if self.games_total else 0.0
        if self.rounds and self.rounds_expected:
            done = max(done, self.rounds / self.rounds_expected)
        return min(1.0, done)

    def text(self) -> str:
        failed = f" ({self.games_failed:,} failed)" if self.games_failed else ""
        parts = [f"{self.games_done:,} of {self.games_total:,} games played{failed}"]
        if self.rounds is not None:
            parts.append(f"{self.rounds:,} rounds")
        if self.calls is not None:
            parts.append(f"{self.calls:,} model calls ({self.cached:,} from the cache) · ${self.cost_usd:,.4f}")
        return " · ".join(parts)


@dataclass(eq=False)  # hashed by identity: kept in a set while it plays
class Job:
    """A run playing in a thread of its own, owned by a browser session (kept in its session state)."""

    run_id: str
    folder: Path
    games_total: int
    rounds_expected: float = 0.0
    stop: StopFlag = field(default_factory=StopFlag)
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    result: RunResult | None = None
    error: str | None = None  # why the run could not play, for the page (a bug's traceback goes to the log)
    thread: threading.Thread | None = field(default=None, repr=False)
    _games_done: int = 0
    _monitor: Monitor | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the run to end; True if it has."""
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.running

    def request_stop(self, reason: str = STOPPED) -> None:
        """Ask the engine to stop cleanly: no new game or round starts; the run ends ``interrupted``."""
        self.stop.set(reason)

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def counters(self) -> Counters:
        m, r = self._monitor, self.result
        if m is not None:
            p, s = m.progress, m.stats
            return Counters(
                p.games_done,
                p.games_total,
                p.games_failed,
                p.rounds,
                s.calls,
                s.cached,
                s.cost_usd,
                self.rounds_expected,
            )
        if r is not None:
            return Counters(r.games_done, r.games_planned, rounds=r.rounds, rounds_expected=self.rounds_expected)
        return Counters(self._games_done, self.games_total, rounds_expected=self.rounds_expected)

    def describe(self) -> str:
        return f"{self.counters().text()} · {self.seconds:.1f} s"

    def _on_progress(self, done: int, total: int) -> None:  # strategy-only runs: after every game
        self._games_done, self.games_total = done, total

    @contextmanager
    def _watch(self, monitor: Monitor) -> Iterator[None]:  # model runs: the scheduler's live counters
        self._monitor = monitor
        yield


def check_new_run_id(folder: Path, run_id: str) -> None:
    """A run id typed by the user: usable as a file name and not taken in ``folder``."""
    check_run_id(run_id)
    if run_path(folder, run_id).exists():
        raise RunExistsError(f"a run with id {run_id!r} already exists in {folder}; choose another run id.")


def prepare(config: ExperimentConfig, folder: Path, *, max_cost: float | None = None) -> EngineOptions | None:
    """The checks the CLI makes before a run starts (provider keys, model names, a price for every model
    under a budget, a served model's structured replies), and how model calls are made (None for a run of
    strategies only): the shared response cache ($PDBENCH_CACHE or <results>/.cache/responses.sqlite), the
    shipped prices, retry settings from the environment. ``max_cost`` 0 is a budget of nothing (answers from
    the cache only, no paid call), so it needs no prices; None is no limit."""
    if not summarize(config).has_models:
        return None
    check_models(config)
    engine = engine_options(folder, max_cost=max_cost)
    if max_cost:
        try:
            check_prices(config, PriceTable.load(*engine.prices))
        except ConfigError as exc:  # the page has no --prices: say what can be done there
            raise ConfigError(f"{exc} Here: untick “Limit the cost” to play without a budget.") from None
    check_structured_replies(config, engine)
    return engine


def start(config: ExperimentConfig, folder: Path, run_id: str, *, max_cost: float | None = None) -> Job:
    """Check the run now (a user error raises here, before anything is written), then play it in a thread."""
    engine = prepare(config, folder, max_cost=max_cost)
    plan = summarize(config)
    job = Job(run_id=run_id, folder=folder, games_total=plan.games, rounds_expected=plan.expected_rounds)
    job.thread = threading.Thread(target=_play, args=(job, config, engine), name=f"pdbench-{run_id}", daemon=True)
    with _LOCK:
        _ACTIVE.add(job)
    job.thread.start()
    return job


def _play(job: Job, config: ExperimentConfig, engine: EngineOptions | None) -> None:
    try:
        job.result = run_experiment(
            config,
            results_dir=job.folder,
            run_id=job.run_id,
            progress=job._on_progress,
            stop=job.stop,
            engine=engine,
            monitor=job._watch,
        )
    except PDBenchError as exc:  # e.g. the results folder cannot be written
        job.error = scrub(str(exc))
    except Exception as exc:  # a bug: say so on the page, keep the traceback in the server's log (both scrubbed)
        _log.exception("run %s stopped on an unexpected error", job.run_id)
        job.error = scrub(f"the run stopped on an unexpected error ({type(exc).__name__}: {exc})")
    finally:
        job.ended = time.monotonic()
        with _LOCK:
            _ACTIVE.discard(job)


def active() -> list[Job]:
    with _LOCK:
        return list(_ACTIVE)


@atexit.register
def stop_all(reason: str = SHUT_DOWN, grace_s: float = 20.0) -> None:
    """When the server shuts down, stop the runs still playing and let them record how they ended
    (``interrupted``, resumable). Requests still unanswered after ``grace_s`` are abandoned
    (as a second Ctrl-C does in the CLI); the writer still finishes the batch it is writing."""
    jobs = active()
    for job in jobs:
        job.request_stop(reason)
    deadline = time.monotonic() + grace_s
    for job in jobs:
        job.wait(max(0.0, deadline - time.monotonic()))
    for job in jobs:
        if job.running:
            job.stop.force(reason)
            job.wait(10)
