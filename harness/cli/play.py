"""How every command that plays games plays them (``run``, ``tournament``, ``eval``, ``resume``): the engine
settings from the shared options, the live display, the closing line, and the exit code."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from harness.cli.base import err
from harness.config import ExperimentConfig, check_run_id
from harness.config.plan import summarize
from harness.config.run_settings import engine_options
from harness.engine.interrupts import StopFlag, graceful_interrupt
from harness.engine.runner import RunResult, resume_run, run_experiment
from harness.errors import StoreError
from harness.states import RunStatus
from harness.store.catalog import Catalog, open_run
from harness.store.run_summary import common_failures
from harness.store.schema import damaged, is_damage
from harness.util.plural import plural

if TYPE_CHECKING:
    from harness.config.engine_options import EngineOptions
    from harness.engine.model_games import Monitor


@dataclass(frozen=True, slots=True)
class EngineFlags:
    """The options ``--max-cost``, ``--no-cache`` and ``--prices`` every playing command takes; and
    ``--despite-estimate`` (run and eval), which starts a run estimated above ``--max-cost``."""

    max_cost: float | None = None
    no_cache: bool = False
    prices: Path | None = None
    despite_estimate: bool = False

    def __post_init__(self) -> None:
        # A price table the user names is read at once, needed or not: a wrong file (a typo, another file
        # altogether) is a mistake either way, and would otherwise surface only in the run that needs a price.
        if self.prices is not None:
            from harness.calls.pricing import PriceTable

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
    from harness.cli.progress import live_display  # the live display of model runs, loaded by them alone

    return live_display(monitor, err)


Show = Callable[[Catalog, RunResult], int]
"""What a command prints once its run ended (a scorecard, a leaderboard), read from the run's catalog;
returns the exit code."""


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
        code = announce_and_show(result, show)
    finish(result, code)


def announce_and_show(result: RunResult, show: Show) -> int:
    """The outcome (:func:`announce`) and what the command shows under it, read through one catalog of the
    run: opening one binds every view, so the two share it."""
    with open_run(result.path.parent, result.run_id) as cat:
        announce(result, cat)
        return show(cat, result)


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
    summary = summarize(config, replicates)
    if summary.has_models:  # the model path (and its settings) is loaded only for a run that has a model
        from harness.calls.pricing import PriceTable
        from harness.cli.estimate_view import warn_unpriced_cache
        from harness.engine.preflight import check_batch, check_models, check_prices
        from harness.engine.structured_probe import check_structured_replies

        engine = flags.options(folder)
        check_models(config)
        check_batch(config, engine)
        table = PriceTable.load(*engine.prices)
        warn_unpriced_cache(config, table)
        if engine.max_cost is not None:
            check_prices(config, table)
            if not flags.despite_estimate:
                from harness.cli.estimate_view import refuse_over_budget

                refuse_over_budget(config, replicates, table, engine.max_cost)
        check_structured_replies(config, engine)
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
        code = announce_and_show(result, show)
    finish(result, code)


def announce(result: RunResult, cat: Catalog | None = None) -> None:
    """The run's outcome in one line on stderr, how to continue it if it stopped, and why games failed (read
    through ``cat`` if given, else through a catalog of the run opened here)."""
    colour = "green" if result.status == RunStatus.COMPLETE else "yellow"
    err.print(
        f"[{colour}]{result.status}[/{colour}]: run [bold]{result.run_id}[/bold], "
        f"{plural(result.games_planned, 'game', number=f'{result.games_done}/{result.games_planned}')}, "
        f"{plural(result.rounds, 'round')} in "
        f"{result.seconds:.2f} s → {result.path}"
        + (f" ({result.reason}; every finished game is kept)" if result.reason else "")
    )
    if result.note:
        err.print(f"[yellow]note[/yellow]: {result.note}.")
    if result.status == RunStatus.INTERRUPTED:
        err.print(f"Continue it with: pdbench resume {result.run_id} --results {result.path.parent}")
    if cat is None:
        with open_run(result.path.parent, result.run_id) as own:
            failed = common_failures(own, result.run_id)
    else:
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
