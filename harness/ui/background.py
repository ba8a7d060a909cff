"""Runs started from the dashboard play in a background thread, through the same engine as the CLI.

The Streamlit script only watches: it polls the run's progress and redraws a bar. So a page
rerun (any click) never interrupts a run half-written, a Stop button can ask the engine to stop
cleanly (the run ends ``interrupted``, resumable like any other), and the finished run is an
ordinary run file that `pdbench sql` reads.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.config import ExperimentConfig
from harness.errors import PDBenchError
from harness.evaluation import check_models
from harness.interrupts import StopFlag
from harness.runner import Monitor, RunResult, run_experiment
from harness.settings import engine_options


@dataclass
class BackgroundRun:
    """A run playing in a thread; its fields are written by that thread and read by the page."""

    run_id: str
    folder: Path
    kind: str
    games_total: int
    stop: StopFlag = field(default_factory=StopFlag)
    games_done: int = 0
    rounds: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    result: RunResult | None = None
    error: str | None = None
    thread: threading.Thread | None = None
    _monitor: Monitor | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def poll(self) -> None:
        """Copy the engine's live counters (model runs report through a Monitor)."""
        m = self._monitor
        if m is not None:
            self.games_done = m.progress.games_done
            self.rounds = m.progress.rounds
            self.cost_usd = m.stats.cost_usd

    @property
    def fraction(self) -> float:
        return min(1.0, self.games_done / self.games_total) if self.games_total else 1.0

    def describe(self) -> str:
        elapsed = time.monotonic() - self.started
        cost = f" · ${self.cost_usd:.4f}" if self.cost_usd else ""
        return f"{self.games_done} / {self.games_total} games{cost} · {elapsed:.1f} s"


def start(config: ExperimentConfig, folder: Path, run_id: str, games_total: int) -> BackgroundRun:
    """Check the models' keys now (a clear error before anything starts), then play in a thread."""
    check_models(config)
    engine = engine_options(folder)
    job = BackgroundRun(run_id=run_id, folder=folder, kind=config.kind, games_total=games_total)

    def progress(done: int, total: int) -> None:
        job.games_done, job.games_total = done, total

    @contextlib.contextmanager
    def monitor(m: Monitor) -> Iterator[object]:
        job._monitor = m
        yield m

    def play() -> None:
        try:
            job.result = run_experiment(config, results_dir=folder, run_id=run_id, progress=progress,
                                        stop=job.stop, engine=engine, monitor=monitor)  # fmt: skip
            job.poll()
            job.games_done = job.result.games_done
        except PDBenchError as exc:
            job.error = str(exc)
        except Exception as exc:  # a bug: say so on the page; the run file keeps what was written
            job.error = f"the run stopped on an unexpected error ({type(exc).__name__}: {exc})"

    job.thread = threading.Thread(target=play, name=f"pdbench-run-{run_id}", daemon=True)
    job.thread.start()
    return job
