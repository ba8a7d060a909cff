"""Sweeps: a grid of evolution settings × seeds, each cell × seed its own run file, all tagged with the sweep id.

Run in parallel processes on this machine (:func:`run_local`, a process pool: each worker writes its own runs,
generation by generation), or on a Ray cluster (:func:`run_ray`: the cluster's workers evolve, and this process
writes the run files, as the workers' disks are not this folder). Ray is imported only there (``pdbench[ray]``).

A stop (Ctrl-C) ends the runs being played as ``interrupted`` with their generations, and starts no other;
``pdbench report <sweep_id>`` summarises what is there.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, StoreError
from harness.evolution import EvolutionSettings, Fixation, PayoffTable, Trajectory
from harness.evolution_options import Cell, EvolutionOptions, sweep_run_id
from harness.interrupts import StopFlag
from harness.states import RunStatus

POLL_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class Job:
    """One cell × seed of a sweep: the run it makes and its settings (checked)."""

    run_id: str
    cell: Cell
    seed: int
    settings: EvolutionSettings
    payoffs: PayoffTable | None = None
    payoff_run: str | None = None


@dataclass(frozen=True, slots=True)
class JobResult:
    """How one cell × seed ended."""

    run_id: str
    cell: int
    seed: int
    status: RunStatus
    generations: int
    final_shares: dict[str, float]
    fixation: Fixation | None
    reason: str | None = None


def plan_sweep(options: EvolutionOptions, cells: list[Cell], seeds: Iterable[int], sweep_id: str) -> list[Job]:
    """Every cell × seed's settings, built and checked before anything runs: all problems of all cells at once."""
    jobs: list[Job] = []
    problems: dict[str, str] = {}
    seeds = list(seeds)
    for cell in cells:
        for seed in seeds:
            try:
                settings = options.with_values(cell.values, seed).settings()
            except ConfigError as exc:
                text = "; ".join(exc.problems) if exc.problems else str(exc)
                problems.setdefault(cell.label, text)
                break
            jobs.append(Job(sweep_run_id(sweep_id, cell, seed), cell, seed, settings))
    if problems:
        raise ConfigError(
            "some cells of the sweep have settings that cannot run; fix them and run again:",
            [f"{label}: {text}" for label, text in problems.items()],
        )
    return jobs


# -- on this machine -----------------------------------------------------------------------
_WORKER_STOP: Any = None  # the pool's shared stop event, in each worker process


def _init_worker(event: Any) -> None:
    """Workers leave signals to the parent, which stops them through ``event`` (see :func:`run_local`)."""
    global _WORKER_STOP
    _WORKER_STOP = event
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class _EventFlag(StopFlag):
    """A stop flag that reads the pool's shared event."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event

    def is_set(self) -> bool:
        if self.event.is_set() and not super().is_set():
            self.set("the sweep was stopped")
        return super().is_set()

    __bool__ = is_set


def _run_job(job: Job, results_dir: Path, sweep_id: str, overwrite: bool) -> JobResult:
    from harness.evolution_run import run_evolution

    stop = _EventFlag(_WORKER_STOP) if _WORKER_STOP is not None else None
    outcome = run_evolution(job.settings, results_dir=results_dir, run_id=job.run_id, overwrite=overwrite, stop=stop,
                            payoffs=job.payoffs, payoff_run=job.payoff_run, sweep_id=sweep_id,
                            sweep_cell=job.cell.values)  # fmt: skip
    return JobResult(job.run_id, job.cell.index, job.seed, outcome.status, outcome.generations,
                     outcome.final_shares(), outcome.fixation, outcome.reason)  # fmt: skip


def _failed(job: Job, exc: BaseException) -> JobResult:
    return JobResult(job.run_id, job.cell.index, job.seed, RunStatus.FAILED, -1, {}, None, f"{exc}")


def run_local(
    jobs: list[Job],
    *,
    results_dir: Path,
    sweep_id: str,
    workers: int,
    stop: StopFlag,
    on_done: Callable[[JobResult], object] | None = None,
    overwrite: bool = False,
) -> list[JobResult]:
    """Run the jobs in a pool of ``workers`` processes (spawned: a clean interpreter each, no inherited
    database handles). On a stop, the running runs end interrupted and the rest never start."""
    context = multiprocessing.get_context("spawn")
    event = context.Event()
    results: list[JobResult] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                             initargs=(event,)) as pool:  # fmt: skip
        pending: dict[Future[JobResult], Job] = {
            pool.submit(_run_job, job, results_dir, sweep_id, overwrite): job for job in jobs
        }
        while pending:
            if stop.is_set() and not event.is_set():
                event.set()
                for future in pending:
                    future.cancel()
            done, _ = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                if future.cancelled():
                    continue
                exc = future.exception()
                result = _failed(job, exc) if exc is not None else future.result()
                results.append(result)
                if on_done is not None:
                    on_done(result)
            pending = {f: j for f, j in pending.items() if not f.cancelled()}
    return sorted(results, key=lambda r: (r.cell, r.seed))


# -- on a Ray cluster ------------------------------------------------------------------------
def _evolve(settings: EvolutionSettings, payoffs: PayoffTable | None) -> Trajectory:
    from harness.evolution import evolve

    return evolve(settings, payoffs=payoffs)


def run_ray(
    jobs: list[Job],
    *,
    address: str,
    results_dir: Path,
    sweep_id: str,
    stop: StopFlag,
    on_done: Callable[[JobResult], object] | None = None,
    overwrite: bool = False,
) -> list[JobResult]:
    """Evolve the jobs on the Ray cluster at ``address`` and write each run file here as its trajectory
    arrives. On a stop, the tasks not finished are cancelled (their runs are not written)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--ray needs Ray, which is not installed: install PDBench with its ray extra "
            "(pip install 'pdbench[ray]'), or leave out --ray to run the sweep on this machine"
        ) from None
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"cannot connect to the Ray cluster at {address!r} ({exc}); start it with "
                          "`ray start --head` and give its address (host:port)") from None  # fmt: skip
    results: list[JobResult] = []
    try:
        remote = ray.remote(_evolve)
        refs = {remote.remote(job.settings, job.payoffs): job for job in jobs}
        while refs:
            if stop.is_set():
                for ref in refs:
                    ray.cancel(ref, force=True)
                break
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=POLL_SECONDS)
            for ref in ready:
                job = refs.pop(ref)
                try:
                    result = _store(job, ray.get(ref), results_dir, sweep_id, overwrite)
                except StoreError:
                    raise
                except Exception as exc:
                    result = _failed(job, exc)
                results.append(result)
                if on_done is not None:
                    on_done(result)
    finally:
        ray.shutdown()
    return sorted(results, key=lambda r: (r.cell, r.seed))


def _store(job: Job, trajectory: Trajectory, results_dir: Path, sweep_id: str, overwrite: bool) -> JobResult:
    """Write a trajectory a Ray worker evolved as the job's complete run."""
    from harness.store.evolution import write_trajectory

    write_trajectory(results_dir, job.run_id, job.settings, trajectory, overwrite=overwrite, sweep_id=sweep_id,
                     sweep_cell=job.cell.values, payoff_run=job.payoff_run)  # fmt: skip
    return JobResult(job.run_id, job.cell.index, job.seed, RunStatus.COMPLETE, trajectory.generations,
                     trajectory.final_shares(), trajectory.fixation)  # fmt: skip
