"""How every command that plays games plays them (``run``, ``tournament``, ``eval``, ``resume``): the engine
settings from the shared options, the live display, the closing line, and the exit code."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from harness.calls.pricing import PriceTable
from harness.cli.base import err
from harness.cli.progress import live_display
from harness.config import ExperimentConfig, check_run_id
from harness.config.engine_options import EngineOptions
from harness.config.plan import summarize
from harness.config.run_settings import engine_options
from harness.engine.interrupts import StopFlag, graceful_interrupt
from harness.engine.preflight import check_models, check_prices
from harness.engine.runner import Monitor, RunResult, resume_run, run_experiment
from harness.errors import StoreError
from harness.states import RunStatus
from harness.store.catalog import open_run
from harness.store.run_summary import common_failures
from harness.store.schema import damaged, is_damage
from harness.util.plural import plural


@dataclass(frozen=True, slots=True)
class EngineFlags:
    """The options ``--max-cost``, ``--no-cache`` and ``--prices`` every playing command takes."""

    max_cost: float | None = None
    no_cache: bool = False
    prices: Path | None = None

    def __post_init__(self) -> None:
        # A price table the user names is read at once, needed or not: a wrong file (a typo, another file
        # altogether) is a mistake either way, and would otherwise surface only in the run that needs a price.
        if self.prices is not None:
            PriceTable.load(self.prices)

    def options(self, folder: Path) -> EngineOptions:
        return engine_options(folder, no_cache=self.no_cache, max_cost=self.max_cost, prices=self.prices)


def chosen_run_id(run_id: str | None, config: ExperimentConfig | None = None) -> str | None:
    """``--run-id``, checked to name a file, else the config's ``run.run_id``; None when the run is to get
    a new id (made only once the results folder is known)."""
    if run_id is not None:
        return check_run_id(run_id)
    return config.run.run_id if config is not None else None


def _monitor(monitor: Monitor) -> AbstractContextManager[object]:
    return live_display(monitor, err)


Show = Callable[[Path, str, RunResult], int]
"""What a command prints once its run ended (a scorecard, a leaderboard); returns the exit code."""


def play(
    config: ExperimentConfig,
    *,
    folder: Path,
    run_id: str,
    replicates: int | None,
    overwrite: bool,
    flags: EngineFlags,
    show: Show,
) -> None:
    """Play a new run: with models, after checking their keys (and prices, under a cost limit), with the
    live display; without, with a progress bar on a terminal. Announces the outcome, shows the result and
    exits (see :func:`finish`).

    Signals are handled for the whole command, not only while games play (see :mod:`harness.engine.interrupts`):
    a second Ctrl-C while the scorecard is read from the results must not end in a traceback."""
    stop = StopFlag()
    with graceful_interrupt(stop):
        result = _play(
            config, folder=folder, run_id=run_id, replicates=replicates, overwrite=overwrite, flags=flags, stop=stop
        )
        announce(result)
        code = show(folder, run_id, result)
    finish(result, code)


def _play(
    config: ExperimentConfig,
    *,
    folder: Path,
    run_id: str,
    replicates: int | None,
    overwrite: bool,
    flags: EngineFlags,
    stop: StopFlag,
) -> RunResult:
    engine = flags.options(folder)
    summary = summarize(config, replicates)
    if summary.has_models:
        check_models(config)
        if engine.max_cost is not None:
            check_prices(config, PriceTable.load(*engine.prices))
        return run_experiment(
            config,
            results_dir=folder,
            run_id=run_id,
            replicates=replicates,
            overwrite=overwrite,
            engine=engine,
            monitor=_monitor,
            stop=stop,
        )
    if err.is_terminal:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task(f"{run_id}: games", total=summary.games)
            return run_experiment(
                config,
                results_dir=folder,
                run_id=run_id,
                replicates=replicates,
                overwrite=overwrite,
                progress=lambda done, _t: bar.update(task, completed=done),
                stop=stop,
            )
    return run_experiment(
        config, results_dir=folder, run_id=run_id, replicates=replicates, overwrite=overwrite, stop=stop
    )


def resume(folder: Path, run_id: str, *, flags: EngineFlags, retry_failed: bool, show: Show) -> None:
    """Continue a run, then show and exit as :func:`play` does; a results file found damaged on the way is a
    user error naming the file."""
    engine = flags.options(folder)
    stop = StopFlag()
    with graceful_interrupt(stop):
        try:
            result = resume_run(folder, run_id, engine=engine, monitor=_monitor, retry_failed=retry_failed, stop=stop)
        except duckdb.Error as exc:
            if not is_damage(exc):
                raise
            raise StoreError(damaged(str(folder / f"{run_id}.duckdb"), exc)) from None
        announce(result)
        code = show(folder, run_id, result)
    finish(result, code)


def announce(result: RunResult) -> None:
    """The run's outcome in one line on stderr, how to continue it if it stopped, and why games failed."""
    colour = "green" if result.status == RunStatus.COMPLETE else "yellow"
    err.print(
        f"[{colour}]{result.status}[/{colour}]: run [bold]{result.run_id}[/bold], "
        f"{plural(result.games_planned, 'game', number=f'{result.games_done}/{result.games_planned}')}, "
        f"{plural(result.rounds, 'round')} in "
        f"{result.seconds:.2f} s → {result.path}"
        + (f" ({result.reason}; every finished game is kept)" if result.reason else "")
    )
    if result.status == RunStatus.INTERRUPTED:
        err.print(f"Continue it with: pdbench resume {result.run_id} --results {result.path.parent}")
    with open_run(result.path.parent, result.run_id) as cat:
        failed = common_failures(cat, result.run_id)
    if failed:
        total = sum(f.games for f in failed)
        err.print(
            f"[yellow]{plural(total, 'game')} failed[/yellow] (the rest of the run went on); most common reasons:"
        )
        for f in failed:
            err.print(f"  {f.games} × {f.error}", highlight=False)


def finish(result: RunResult, code: int = 0) -> None:
    """Exit 130 for a run that did not complete (it can be resumed), else with ``code`` (0: success)."""
    if result.status != RunStatus.COMPLETE:
        raise typer.Exit(130)
    if code:
        raise typer.Exit(code)
