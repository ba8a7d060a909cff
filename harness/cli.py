"""The ``pdbench`` command line. Thin: parse options, call the library, render the result.

Errors a user can fix (:class:`~harness.errors.PDBenchError`) are printed as one paragraph
on stderr with a non-zero exit code; they never show a traceback.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from dotenv import load_dotenv
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from typer.core import TyperGroup

from harness import __version__
from harness.agents.strategies import STRATEGIES
from harness.analysis.report import condition_summaries
from harness.config import ExperimentConfig, check_run_id, load_experiment
from harness.errors import PDBenchError
from harness.plan import summarize
from harness.render import (
    label,
    leaderboard_table,
    matchup_table,
    print_rows,
    report_table,
    rows_json,
)
from harness.runner import RunResult, default_run_id, run_experiment
from harness.store.catalog import Catalog, open_run
from harness.tournament import DEFAULT_PLAYERS, parse_players, tournament_config


class _Commands(TyperGroup):
    """Prints a user error as one paragraph and exits with its code, for every command."""

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except PDBenchError as exc:
            err.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None


app = typer.Typer(
    name="pdbench",
    cls=_Commands,
    help="PDBench: how do language models behave in the iterated Prisoner's Dilemma?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
# Off a terminal (a pipe, a CI log) Rich would wrap tables at 80 columns; give them room instead.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


ResultsOpt = Annotated[
    Path | None,
    typer.Option("--results", help="Results folder (default: $PDBENCH_RESULTS or results/)."),
]


def results_dir(option: Path | None, config: ExperimentConfig | None = None) -> Path:
    if option is not None:
        return option
    if config is not None and config.run.output:
        return Path(config.run.output)
    return Path(os.environ.get("PDBENCH_RESULTS") or "results")


def _warn(config: ExperimentConfig) -> None:
    for w in config.warnings():
        err.print(f"[yellow]warning:[/yellow] {w}")


def _play(
    config: ExperimentConfig, *, results: Path, run_id: str, replicates: int | None, overwrite: bool
) -> RunResult:
    total = summarize(config, replicates).games
    if err.is_terminal:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task(f"{run_id}: games", total=total)
            result = run_experiment(
                config,
                results_dir=results,
                run_id=run_id,
                replicates=replicates,
                overwrite=overwrite,
                progress=lambda done, _t: bar.update(task, completed=done),
            )
    else:
        result = run_experiment(config, results_dir=results, run_id=run_id, replicates=replicates, overwrite=overwrite)
    colour = "green" if result.status == "complete" else "yellow"
    err.print(
        f"[{colour}]{result.status}[/{colour}]: run [bold]{result.run_id}[/bold], "
        f"{result.games_done}/{result.games_planned} games, {result.rounds:,} rounds in "
        f"{result.seconds:.2f} s → {result.path}"
        + (f" ({result.reason}; every finished game is kept)" if result.reason else "")
    )
    return result


@app.command()
def validate(
    file: Annotated[Path, typer.Argument(help="Experiment YAML file.")],
) -> None:
    """Check an experiment file and report every problem at once.

    Example: `pdbench validate configs/experiment.yaml`
    """
    config = load_experiment(file)
    _warn(config)
    s = summarize(config)
    out.print(
        f"[green]OK[/green] {file}: {s.conditions} conditions × {s.replicates} replicates "
        f"= {s.games} games, about {s.expected_rounds:,.0f} rounds."
    )


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="Experiment YAML file.")],
    replicates: Annotated[int | None, typer.Option(min=1, help="Override experiment.replicates.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; play nothing.")] = False,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Override run.run_id.")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing run with the same id.")] = False,
) -> None:
    """Play every condition × replicate of an experiment and store it in DuckDB.

    Example: `pdbench run configs/experiment.yaml --replicates 10`
    """
    config = load_experiment(file)
    _warn(config)
    folder = results_dir(results, config)
    rid = check_run_id(run_id) if run_id else config.run.run_id
    if dry_run:
        s = summarize(config, replicates)
        out.print(f"Plan for {file} (nothing played):")
        for cond in config.experiment.conditions:
            out.print(f"  {cond.name}: {label(cond.agent_a.label)} vs {label(cond.agent_b.label)}")
        rounds = f"{s.expected_rounds:,.0f}" if s.fixed_rounds else f"about {s.expected_rounds:,.0f} (expected)"
        out.print(
            f"{s.conditions} conditions × {s.replicates} replicates = {s.games} games; "
            f"rounds: {rounds}; model calls: {s.model_calls:,.0f}; results to "
            f"{rid or '<new run id>'} in {folder}/"
        )
        return
    rid = rid or default_run_id(file.stem, folder)
    result = _play(config, results=folder, run_id=rid, replicates=replicates, overwrite=overwrite)
    with open_run(folder, rid) as cat:
        out.print(report_table(cat.require_run(rid), condition_summaries(cat, rid)))
    if result.status != "complete":
        raise typer.Exit(130)


@app.command()
def tournament(
    players: Annotated[str, typer.Option(help="Comma-separated strategy names.")] = ",".join(DEFAULT_PLAYERS),
    rounds: Annotated[int | None, typer.Option(min=1, help="Fixed horizon: rounds per game (default 200).")] = None,
    stop_prob: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="Geometric horizon: per-round stop probability.")
    ] = None,
    max_rounds: Annotated[int | None, typer.Option(min=1, help="Hard cap on a geometric game's length.")] = None,
    replicates: Annotated[int, typer.Option(min=1, help="Games per pair.")] = 1,
    noise: Annotated[float, typer.Option(min=0.0, max=1.0, help="Probability that a move is flipped.")] = 0.0,
    seed: Annotated[int, typer.Option(min=0, help="Master seed.")] = 0,
    self_play: Annotated[
        bool, typer.Option("--self-play/--no-self-play", help="Include each player against itself.")
    ] = True,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default tournament_<timestamp>).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing run with the same id.")] = False,
) -> None:
    """Play a round robin of classic strategies and print the leaderboard and matchups.

    Example: `pdbench tournament --players ALLC,ALLD,TFT,GRIM --rounds 200 --replicates 10 --noise 0.01`
    """
    names = parse_players(players)
    config = tournament_config(
        names,
        rounds=rounds,
        stop_prob=stop_prob,
        max_rounds=max_rounds,
        replicates=replicates,
        noise=noise,
        seed=seed,
        self_play=self_play,
    )
    if run_id is not None:
        check_run_id(run_id)
    folder = results_dir(results)
    rid = run_id or default_run_id("tournament", folder)
    result = _play(config, results=folder, run_id=rid, replicates=None, overwrite=overwrite)
    with open_run(folder, rid) as cat:
        board = cat.records("SELECT * FROM tournament WHERE run_id = ? ORDER BY rank, player", [rid])
        cells = {
            (r["player"], r["opponent"]): r["mean_payoff_per_round"]
            for r in cat.records("SELECT player, opponent, mean_payoff_per_round FROM matchups WHERE run_id = ?", [rid])
        }
    order = [r["player"] for r in board]
    partial = (
        ""
        if result.status == "complete"
        else f" ({result.status}: partial, {result.games_done} of {result.games_planned} games)"
    )
    out.print(leaderboard_table(board, title=f"Tournament {rid}{partial}"))
    out.print(matchup_table(order, cells))
    if result.status != "complete":
        raise typer.Exit(130)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="DuckDB SQL over runs, games, rounds, calls and the metric views.")],
    results: ResultsOpt = None,
    format: Annotated[
        Format, typer.Option("--format", help="table for people; csv or json for scripts.")
    ] = Format.table,
) -> None:
    """Run read-only SQL over every run in the results folder at once.

    Example: `pdbench sql "select player, mean_payoff_per_round from tournament order by rank" --format json`
    """
    with Catalog(results_dir(results)) as cat:
        for path, reason in cat.skipped:
            err.print(f"[yellow]warning:[/yellow] skipped {path}: {reason}")
        if not cat.attached and not cat.skipped:
            err.print(
                f"[yellow]note:[/yellow] no runs in {cat.results_dir} yet; create one with "
                f"`pdbench tournament` or `pdbench run configs/experiment.yaml`."
            )
        columns, rows = cat.query(query)
    print_rows(out, format.value, columns, rows)


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="The run to summarise.")],
    results: ResultsOpt = None,
    format: Annotated[Format, typer.Option("--format", help="table, csv or json.")] = Format.table,
) -> None:
    """Per-condition metrics of a run, with 95% confidence intervals over replicates.

    Example: `pdbench report tournament_20261122_120000`
    """
    with open_run(results_dir(results), run_id) as cat:
        run_row = cat.require_run(run_id)
        summaries = condition_summaries(cat, run_id)
    if format is Format.table:
        out.print(report_table(run_row, summaries))
        return
    dicts = [s.as_dict() for s in summaries]
    columns = list(dicts[0]) if dicts else ["condition"]
    rows = [[d.get(c) for c in columns] for d in dicts]
    if format is Format.json:
        out.file.write(rows_json(columns, rows) + "\n")
    else:
        print_rows(out, "csv", columns, rows)


@app.command()
def strategies() -> None:
    """List the classic strategies, their names and parameters.

    Example: `pdbench strategies`
    """
    from rich.table import Table

    table = Table(header_style="bold")
    for col in ("name", "", "strategy", "description", "parameters"):
        table.add_column(col)
    for name, cls in STRATEGIES.items():
        params = ", ".join(f"{k}={f.default}" for k, f in cls.Params.model_fields.items()) or "—"
        table.add_row(name, cls.emoji, cls.display_name, cls.description, params)
    out.print(table)


def _version(value: bool) -> None:
    if value:
        out.print(f"pdbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """PDBench: how do language models behave in the iterated Prisoner's Dilemma?"""
    # Settings and keys may live in ./.env; variables already set in the environment win.
    load_dotenv(Path.cwd() / ".env", override=False)


def main() -> None:
    """Entry point of the ``pdbench`` script."""
    app()


if __name__ == "__main__":
    main()
