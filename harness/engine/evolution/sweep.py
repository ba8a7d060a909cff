"""Sweeps: a grid of evolution settings × seeds, each cell × seed its own run file, all tagged with the sweep id.

Run in parallel processes on this machine (:func:`run_local`, a process pool: each worker writes its own runs,
generation by generation), or on a Ray cluster (:func:`run_ray`: the cluster's workers evolve, and this process
writes the run files, as the workers' disks are not this folder). Ray is imported only there (``pdbench[ray]``).

A stop (Ctrl-C) ends the runs being played as ``interrupted`` with their generations, and starts no other;
``pdbench report <sweep_id>`` summarises what is there. The same command run again resumes the sweep
(:func:`resume_sweep`): complete runs are kept, unfinished ones played again. Workers never outlive the sweep's
process: one killed (kill -9, a closed terminal) is noticed within a fraction of a second, and its workers end
their runs as ``interrupted`` and exit (:func:`_watch_parent`), so nothing keeps playing, or paying, unseen.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.engine.evolution.options import Cell, EvolutionOptions, sweep_run_id
from harness.engine.interrupts import StopFlag
from harness.errors import ConfigError, RunExistsError, StoreError
from harness.evolution import EvolutionSettings, Fixation, PayoffTable, Trajectory
from harness.states import RunStatus

POLL_SECONDS = 0.2
CONNECT_SECONDS = 5.0
PARENT_POLL_SECONDS = 0.2
"""How often a worker looks whether the sweep's process is still there."""
PARENT_GRACE_SECONDS = 5.0
"""How long a worker whose sweep process died may take to end its run as interrupted before it exits anyway."""


@dataclass(frozen=True, slots=True)
class Job:
    """One cell × seed of a sweep: the run it makes and its settings (checked)."""

    run_id: str
    cell: Cell
    seed: int
    settings: EvolutionSettings
    payoffs: PayoffTable | None = None
    payoff_run: str | None = None
    rerun: bool = False  # an unfinished run of this sweep (stopped, killed): its file is played again


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
    from harness.config import check_run_id

    jobs: list[Job] = []
    problems: dict[str, str] = {}
    seeds = list(seeds)
    longest = sweep_run_id(sweep_id, Cell(len(cells) - 1, {}), max(seeds))
    if len(longest) > 128:
        raise ConfigError(
            f"the sweep id {sweep_id!r} is too long for the ids of its runs ({longest!r} has {len(longest)} "
            "characters; at most 128): choose a shorter one with --run-id"
        )
    check_run_id(longest)
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


def resume_sweep(jobs: list[Job], results_dir: Path, sweep_id: str) -> tuple[list[Job], list[JobResult]]:
    """The jobs of a sweep run again with the same command: those still to play (an unfinished run, stopped or
    killed, is played again: ``rerun``) and the results of the complete runs, kept. A run of the sweep's id
    with other settings (another grid, other options) is refused: replacing it needs ``--overwrite``."""
    from harness.store.evolution_writer import held_runs, list_evolution_runs
    from harness.store.run_file import run_path

    taken = {j.run_id for j in jobs if run_path(results_dir, j.run_id).exists()}
    if not taken:
        return jobs, []
    stored = {r.run_id: r for r in list_evolution_runs(results_dir, sweep_id=sweep_id) if r.run_id in taken}
    todo: list[Job] = []
    kept: list[JobResult] = []
    other: list[str] = []
    for job in jobs:
        run = stored.get(job.run_id)
        if job.run_id not in taken:
            todo.append(job)
        elif run is None or not _same_cell(run.settings, run.sweep_cell, job):
            other.append(job.run_id)  # unreadable, or not this cell's run
        elif run.status == RunStatus.COMPLETE:
            kept.append(JobResult(job.run_id, job.cell.index, job.seed, run.status, run.generations, {}, run.fixation))
        else:
            todo.append(replace(job, rerun=True))
    running = [j.run_id for j in todo if j.rerun and stored[j.run_id].status == RunStatus.RUNNING]
    if held := held_runs(results_dir, running):
        raise RunExistsError(
            f"sweep {sweep_id!r} is being played by another process now ({', '.join(sorted(held)[:3])}"
            f"{' ...' if len(held) > 3 else ''} being written); let it end, or stop it, then run the command again"
        )
    if other:
        raise RunExistsError(
            f"sweep {sweep_id!r} has runs of other settings already ({', '.join(other[:3])}"
            f"{' ...' if len(other) > 3 else ''}); run the command that made them to resume that sweep, choose "
            "another sweep id (--run-id), or pass --overwrite to replace them"
        )
    return todo, kept


def _same_cell(settings: EvolutionSettings, cell: dict[str, Any] | None, job: Job) -> bool:
    """Whether a stored run (its settings and sweep cell) is ``job``'s run, as its ``config_json`` holds them."""
    from harness.store.evolution_writer import settings_config

    return settings_config(settings) == settings_config(job.settings) and cell == json.loads(
        json.dumps(job.cell.values)
    )


# -- on this machine -----------------------------------------------------------------------
_WORKER_STOP: Any = None  # the pool's shared stop event, in each worker process
_PARENT_GONE = threading.Event()  # set in a worker when the sweep's process died
_PLAYING = threading.Event()  # set in a worker while it plays a run


def _init_worker(event: Any, parent: int) -> None:
    """Workers leave signals to the parent, which stops them through ``event`` (see :func:`run_local`), and
    watch it (``parent``: its pid), so that they never outlive it."""
    global _WORKER_STOP
    _WORKER_STOP = event
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), name="pdbench-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    """End this worker when the sweep's process is gone (kill -9 included, which nothing can catch there).

    The pool's pipes do not tell a worker: its siblings hold them open, so without this a worker goes on
    taking the queued runs, and stays alive once they are done. A worker's parent changes only when the parent
    dies (the worker is handed to init or a subreaper), so comparing ``os.getppid()`` with the pid the parent
    gave works on every platform, whenever it died. The run being played ends ``interrupted`` with its
    generations (the stop flag), so the same command resumes the sweep; after :data:`PARENT_GRACE_SECONDS`
    the worker exits whatever it is doing."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    _PARENT_GONE.set()
    deadline = time.monotonic() + PARENT_GRACE_SECONDS
    while _PLAYING.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    os._exit(1)


class _EventFlag(StopFlag):
    """A stop flag that reads the pool's shared event, and this worker's parent watch."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event

    def is_set(self) -> bool:
        if not super().is_set():
            if _PARENT_GONE.is_set():
                self.set("the sweep's process ended (killed?); run the same command again to resume the sweep")
            elif self.event.is_set():
                self.set("the sweep was stopped")
        return super().is_set()

    __bool__ = is_set


def _run_job(job: Job, results_dir: Path, sweep_id: str, overwrite: bool) -> JobResult:
    from harness.engine.evolution.run import run_evolution

    if _PARENT_GONE.is_set():
        os._exit(1)  # a run queued before the sweep's process died: nobody is waiting for it
    _PLAYING.set()
    try:
        stop = _EventFlag(_WORKER_STOP) if _WORKER_STOP is not None else None
        outcome = run_evolution(
            job.settings,
            results_dir=results_dir,
            run_id=job.run_id,
            overwrite=overwrite or job.rerun,
            stop=stop,
            payoffs=job.payoffs,
            payoff_run=job.payoff_run,
            sweep_id=sweep_id,
            sweep_cell=job.cell.values,
        )
    finally:
        _PLAYING.clear()
    if _PARENT_GONE.is_set():
        os._exit(1)  # the run file is closed: nobody is waiting for its result
    return JobResult(
        job.run_id,
        job.cell.index,
        job.seed,
        outcome.status,
        outcome.generations,
        outcome.final_shares(),
        outcome.fixation,
        outcome.reason,
    )


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
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(event, os.getpid())
    ) as pool:
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
    _reachable(address)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(
            f"cannot connect to the Ray cluster at {address!r} ({exc}); start it with "
            "`ray start --head` and give its address (host:port)"
        ) from None
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
    from harness.store.evolution_writer import write_trajectory

    write_trajectory(
        results_dir,
        job.run_id,
        job.settings,
        trajectory,
        overwrite=overwrite or job.rerun,
        sweep_id=sweep_id,
        sweep_cell=job.cell.values,
        payoff_run=job.payoff_run,
    )
    return JobResult(
        job.run_id,
        job.cell.index,
        job.seed,
        RunStatus.COMPLETE,
        trajectory.generations,
        trajectory.final_shares(),
        trajectory.fixation,
    )


def _reachable(address: str) -> None:
    """Refuse at once a ``host:port`` (or ``ray://host:port``) nothing listens on: Ray itself retries for minutes."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", or a form Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise ConfigError(
            f"nothing answers at the Ray address {address!r} ({exc.strerror or exc}); start the cluster with "
            "`ray start --head` and give the address it prints (host:port), or leave out --ray to run here"
        ) from None
