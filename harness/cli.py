"""The ``pdbench`` command line. Thin: parse options, call the library, render the result.

Errors a user can fix (:class:`~harness.errors.PDBenchError`) are printed as one paragraph
on stderr with a non-zero exit code; they never show a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import duckdb
import typer
from dotenv import load_dotenv
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from typer.core import TyperGroup

from harness import __version__
from harness.agents.strategies import STRATEGIES
from harness.analysis.comprehension import comprehension_accuracy
from harness.analysis.profile_summary import behaviour_profile_by_condition
from harness.analysis.report import condition_summaries, model_answers
from harness.config import MAX_REPLICATES, MAX_SEED, ExperimentConfig, check_run_id, load_experiment
from harness.errors import PDBenchError, StoreError
from harness.evaluation import DEFAULT_PANEL, check_models, check_prices, comprehension_rounds, eval_config
from harness.game import MAX_ROUNDS
from harness.keys import scrub
from harness.limits import MAX_CONCURRENCY, MAX_RPM, MAX_TPM, MIN_RPM, MIN_TPM
from harness.plan import summarize
from harness.players import parse_players
from harness.pricing import PriceTable
from harness.progress import live_display
from harness.render import (
    answers_table,
    comprehension_table,
    label,
    leaderboard_table,
    matchup_table,
    print_rows,
    profile_table,
    report_table,
    rows_json,
    scorecard_summary,
    scorecard_table,
)
from harness.runner import EngineOptions, Monitor, RunResult, default_run_id, resume_run, run_experiment
from harness.settings import cache_path, engine_options, existing_run_id, results_dir, run_id_prefix
from harness.states import RunStatus
from harness.store.cache import ResponseCache
from harness.store.cache_file import delete_cache
from harness.store.catalog import Catalog, open_run
from harness.store.queries import leaderboard, matchups
from harness.store.run_summary import call_totals, common_failures, seat_a_overall
from harness.store.schema import damaged, is_damage
from harness.suites import PROTOCOL_OPTIONS, SUITES, check_options, get_suite
from harness.tournament import DEFAULT_PLAYERS, tournament_config

INTERRUPTED = (
    "pdbench: interrupted (Ctrl-C). Nothing is lost: a run that had started is kept, and "
    "`pdbench resume RUN_ID` continues it."
)


class _Commands(TyperGroup):
    """Prints a user error as one paragraph and exits with its code, for every command; Ctrl-C outside a
    run (which handles its own, see harness.interrupts) is one line and exit code 130."""

    def invoke(self, ctx: typer.Context) -> object:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except PDBenchError as exc:
            err.print(f"[bold red]error:[/bold red] {escape(scrub(str(exc)))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print(INTERRUPTED, file=sys.stderr, flush=True)
            raise typer.Exit(130) from None


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


# A str, not a Path: Path("") is ".", and `--results ''` (an empty variable in a script) must be refused,
# not read as the current folder.
ResultsOpt = Annotated[
    str | None,
    typer.Option("--results", help="Results folder (default: $PDBENCH_RESULTS or results/)."),
]

# Every numeric option has bounds, so that no value can make a run hang or overflow (README, "Limits").
MAX_COST_USD = 1_000_000.0
MAX_DAYS = 36_500.0  # a century

StopProbOpt = Annotated[
    float | None, typer.Option(min=0.0, max=1.0, help="Geometric horizon: per-round stop probability.")
]
MaxRoundsOpt = Annotated[int | None, typer.Option(min=1, max=MAX_ROUNDS, help="Hard cap on a geometric game's length.")]
NoiseOpt = Annotated[float, typer.Option(min=0.0, max=1.0, help="Probability that a move is flipped.")]
MaxCostOpt = Annotated[
    float | None, typer.Option(min=0.0, max=MAX_COST_USD, help="Stop starting paid calls at this cost (USD).")
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor fill the response cache.")]
PricesOpt = Annotated[Path | None, typer.Option(help="Your own price table (YAML), read before the shipped one.")]
OverwriteOpt = Annotated[bool, typer.Option(help="Replace an existing run with the same id.")]


def _warn(config: ExperimentConfig) -> None:
    for w in config.warnings():
        err.print(f"[yellow]warning:[/yellow] {w}")


def _monitor(monitor: Monitor) -> AbstractContextManager[object]:
    return live_display(monitor, err)


def _announce(result: RunResult) -> None:
    colour = "green" if result.status == RunStatus.COMPLETE else "yellow"
    err.print(
        f"[{colour}]{result.status}[/{colour}]: run [bold]{result.run_id}[/bold], "
        f"{result.games_done}/{result.games_planned} games, {result.rounds:,} rounds in "
        f"{result.seconds:.2f} s → {result.path}"
        + (f" ({result.reason}; every finished game is kept)" if result.reason else "")
    )
    if result.status == RunStatus.INTERRUPTED:
        err.print(f"Continue it with: pdbench resume {result.run_id} --results {result.path.parent}")
    with open_run(result.path.parent, result.run_id) as cat:
        failed = common_failures(cat, result.run_id)
    if failed:
        total = sum(f.games for f in failed)
        err.print(f"[yellow]{total} game{'s' if total != 1 else ''} failed[/yellow] (the rest of the run went on); "
                  "most common reasons:")  # fmt: skip
        for f in failed:
            err.print(f"  {f.games} × {f.error}", highlight=False)


def _play(
    config: ExperimentConfig,
    *,
    results: Path,
    run_id: str,
    replicates: int | None,
    overwrite: bool,
    engine: EngineOptions | None = None,
) -> RunResult:
    summary = summarize(config, replicates)
    total = summary.games
    if summary.has_models:
        check_models(config)
        engine = engine or engine_options(results)
        if engine.max_cost is not None:
            check_prices(config, PriceTable.load(*engine.prices))
        result = run_experiment(
            config,
            results_dir=results,
            run_id=run_id,
            replicates=replicates,
            overwrite=overwrite,
            engine=engine,
            monitor=_monitor,
        )
        _announce(result)
        return result
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
    _announce(result)
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
    replicates: Annotated[
        int | None, typer.Option(min=1, max=MAX_REPLICATES, help="Override experiment.replicates.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; play nothing.")] = False,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Override run.run_id.")] = None,
    overwrite: OverwriteOpt = False,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
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
    rid = rid or default_run_id(run_id_prefix(file.stem), folder)
    engine = engine_options(folder, no_cache=no_cache, max_cost=max_cost, prices=prices)
    result = _play(config, results=folder, run_id=rid, replicates=replicates, overwrite=overwrite, engine=engine)
    with open_run(folder, rid) as cat:
        _print_report(cat, rid)
    if result.status != RunStatus.COMPLETE:
        raise typer.Exit(130)


@app.command()
def tournament(
    players: Annotated[
        str, typer.Option(help="Comma-separated strategy names and models (provider/model, e.g. mock/tft).")
    ] = ",".join(DEFAULT_PLAYERS),
    rounds: Annotated[
        int | None, typer.Option(min=1, max=MAX_ROUNDS, help="Fixed horizon: rounds per game (default 200).")
    ] = None,
    stop_prob: StopProbOpt = None,
    max_rounds: MaxRoundsOpt = None,
    replicates: Annotated[
        int,
        typer.Option(
            min=1, max=MAX_REPLICATES, help="Games per pair: Axelrod's repetitions, over which the median is taken."
        ),
    ] = 1,
    noise: NoiseOpt = 0.0,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Master seed.")] = 0,
    self_play: Annotated[
        bool,
        typer.Option(
            "--self-play/--no-self-play",
            help="Include each player against itself (shown in the matchups, never scored).",
        ),
    ] = True,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default tournament_<timestamp>).")] = None,
    overwrite: OverwriteOpt = False,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
) -> None:
    """Play a round robin of classic strategies (and models) and print the leaderboard and matchups.

    Ranked as the Axelrod library ranks: each player's score per turn against the others (self-play is played
    and shown in the matchups, but left out of scores, wins and ranking) is averaged over its games in each
    repetition, and players are ranked by the median of those over repetitions, the mean shown beside it.
    Scores within 1e-9 share a rank and its medal.

    Example: `pdbench tournament --players ALLC,ALLD,TFT,GRIM --rounds 200 --replicates 10 --noise 0.01`
    (add a model as a player: `--players TFT,ALLD,mock/tft`)
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
    engine = engine_options(folder, no_cache=no_cache, max_cost=max_cost, prices=prices)
    result = _play(config, results=folder, run_id=rid, replicates=None, overwrite=overwrite, engine=engine)
    _leaderboard(folder, rid, result)


def _leaderboard(folder: Path, rid: str, result: RunResult) -> None:
    with open_run(folder, rid) as cat:
        board = leaderboard(cat, rid)
        cells = {(r["player"], r["opponent"]): r["mean_payoff_per_round"] for r in matchups(cat, rid)}
    # Players who have only self-play games so far are not on the leaderboard, but their matchups are shown.
    ranked = [r["player"] for r in board]
    order = ranked + sorted({p for p, _ in cells} - set(ranked))
    partial = (
        ""
        if result.status == RunStatus.COMPLETE
        else f" ({result.status}: partial, {result.games_done} of {result.games_planned} games)"
    )
    if board:
        out.print(leaderboard_table(board, title=f"Tournament {rid}{partial}"))
    else:
        out.print(
            f"Tournament {rid}{partial}: no leaderboard, since no complete game between two different players "
            f"(self-play is played and shown in the matchups, but left out of the ranking)."
        )
    out.print(matchup_table(order, cells))
    if result.status != RunStatus.COMPLETE:
        raise typer.Exit(130)


_SUITES_HELP = "\n\n".join(f"* `{s.name}`: {s.summary}. After {s.paper}." for s in SUITES.values())
EVAL_HELP = f"""Play a model against a panel of classic strategies and print its scorecard.

Example: `pdbench eval --model openai/gpt-4o-mini --rounds 20 --replicates 5 --max-cost 1`

**Suites** (`--suite NAME`) reproduce published protocols; a suite fixes the game, the opponents and how the
prompt is put, so {", ".join(f"`{o}`" for o in PROTOCOL_OPTIONS)} are refused with it (engine options stay yours).
Example: `pdbench eval --suite akata2023 --model openai/gpt-4o-mini --replicates 5`

{_SUITES_HELP}
"""


@app.command(name="eval", help=EVAL_HELP)
def eval_(
    ctx: typer.Context,
    model: Annotated[
        str, typer.Option(help="The model, as provider/model: openai/gpt-4o-mini, anthropic/..., mock/tft.")
    ],
    suite: Annotated[
        str | None,
        typer.Option(help=f"A published protocol to reproduce: {', '.join(SUITES)} (listed above)."),
    ] = None,
    opponents: Annotated[str, typer.Option(help="Comma-separated strategies.")] = ",".join(DEFAULT_PANEL),
    rounds: Annotated[
        int | None, typer.Option(min=1, max=MAX_ROUNDS, help="Fixed horizon: rounds per game (default 20).")
    ] = None,
    stop_prob: StopProbOpt = None,
    max_rounds: MaxRoundsOpt = None,
    replicates: Annotated[int, typer.Option(min=1, max=MAX_REPLICATES, help="Games per opponent.")] = 3,
    noise: NoiseOpt = 0.0,
    persona: Annotated[str | None, typer.Option(help="A persona from personas/ (or a .md file).")] = None,
    temperature: Annotated[float | None, typer.Option(min=0.0, max=2.0, help="Sampling temperature.")] = None,
    comprehension: Annotated[
        str | None,
        typer.Option(
            help="Ask the model the rules before its move in these rounds (e.g. 1,10): a comprehension "
            "check, scored in the scorecard."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="Master seed.")] = 0,
    base_url: Annotated[str | None, typer.Option(help="An OpenAI-compatible server (or $OPENAI_BASE_URL).")] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=MAX_CONCURRENCY, help="Max requests in flight to the endpoint.")
    ] = None,
    rpm: Annotated[float | None, typer.Option(min=MIN_RPM, max=MAX_RPM, help="Requests per minute allowed.")] = None,
    tpm: Annotated[float | None, typer.Option(min=MIN_TPM, max=MAX_TPM, help="Tokens per minute allowed.")] = None,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default eval_<timestamp>).")] = None,
    overwrite: OverwriteOpt = False,
    results: ResultsOpt = None,
) -> None:
    limits = {k: v for k, v in (("concurrency", concurrency), ("rpm", rpm), ("tpm", tpm)) if v is not None}
    checked = comprehension_rounds(comprehension)
    if suite is not None:
        preset = get_suite(suite)
        check_options(preset, _given(ctx))
        config = preset.config(model, replicates=replicates, seed=seed, base_url=base_url, limits=limits,
                               comprehension=checked)  # fmt: skip
    else:
        panel = parse_players(opponents, option="--opponents")
        config = eval_config(model, opponents=panel, rounds=rounds, stop_prob=stop_prob,
                             max_rounds=max_rounds, replicates=replicates, noise=noise, persona=persona,
                             temperature=temperature, seed=seed, base_url=base_url, limits=limits,
                             comprehension=checked)  # fmt: skip
    if run_id is not None:
        check_run_id(run_id)
    folder = results_dir(results)
    rid = run_id or default_run_id("eval", folder)
    engine = engine_options(folder, no_cache=no_cache, max_cost=max_cost, prices=prices)
    result = _play(config, results=folder, run_id=rid, replicates=None, overwrite=overwrite, engine=engine)
    _scorecard(folder, rid, result)


def _given(ctx: typer.Context) -> list[str]:
    """The options the user typed (or set through the environment), as they are spelt on the command line."""
    out = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        # By name: Typer carries its own copy of click, whose ParameterSource is not click's.
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            out.append(next((o for o in param.opts if o.startswith("--")), str(param.name)))
    return out


def _checks_and_profile(cat: Catalog, run_row: dict[str, object]) -> None:
    """The scorecard's sections beyond the per-opponent table: comprehension-check accuracy when the run asked
    questions, and the extra sections a suite asks for (the behaviour profile of fontana2025)."""
    rid = str(run_row["run_id"])
    accuracy = comprehension_accuracy(cat, rid)
    if accuracy:
        out.print(comprehension_table(accuracy))
    suite = json.loads(str(run_row["config_json"])).get("suite")
    if suite in SUITES and "behaviour_profile" in SUITES[suite].scorecard:
        columns, rows = behaviour_profile_by_condition(cat, rid)
        out.print(profile_table(columns, rows, f"Behaviour profile of the model, mean per opponent ({suite})"))


def _scorecard(folder: Path, rid: str, result: RunResult) -> None:
    with open_run(folder, rid) as cat:
        run_row = cat.require_run(rid)
        summaries = condition_summaries(cat, rid)
        totals = call_totals(cat, rid)
        overall = seat_a_overall(cat, rid)
        answers = model_answers(cat, rid)
        out.print(scorecard_table(run_row, summaries))
        out.print(scorecard_summary(overall, totals, answers))
        _checks_and_profile(cat, run_row)
    out.print(f"run id: [bold]{rid}[/bold]   results: {result.path}")
    if result.status != RunStatus.COMPLETE:
        raise typer.Exit(130)
    if not overall["games"]:
        raise typer.Exit(1)  # every game failed: the reasons were printed above


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="The interrupted or crashed run.")],
    results: ResultsOpt = None,
    max_cost: MaxCostOpt = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not use the response cache (answers are paid again).")
    ] = False,
    prices: Annotated[Path | None, typer.Option(help="Your own price table (YAML).")] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Also play again the games that failed for good (a request the provider refused, "
            "a model that never gave a readable move); games that failed on an outage or a refused key "
            "are always played again.",
        ),
    ] = False,
) -> None:
    """Continue an interrupted, crashed or partly failed run; recorded answers come from the cache, not the API.

    Example: `pdbench resume eval_20261122_120000`
    """
    existing_run_id(run_id)
    folder = results_dir(results)
    engine = engine_options(folder, no_cache=no_cache, max_cost=max_cost, prices=prices)
    try:
        result = resume_run(folder, run_id, engine=engine, monitor=_monitor, retry_failed=retry_failed)
    except duckdb.Error as exc:
        if not is_damage(exc):
            raise
        raise StoreError(damaged(str(folder / f"{run_id}.duckdb"), exc)) from None
    _announce(result)
    with open_run(folder, run_id) as cat:
        kind = cat.require_run(run_id)["kind"]
    if kind == "eval":
        _scorecard(folder, run_id, result)
    elif kind == "tournament":
        _leaderboard(folder, run_id, result)
    else:
        with open_run(folder, run_id) as cat:
            _print_report(cat, run_id)
    if result.status != RunStatus.COMPLETE:
        raise typer.Exit(130)


cache_app = typer.Typer(help="The shared response cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("stats")
def cache_stats(results: ResultsOpt = None) -> None:
    """Entries, size and models in the response cache.

    Example: `pdbench cache stats`
    """
    path = cache_path(results_dir(results), False)
    assert path is not None
    if not path.exists():
        out.print(f"The response cache {path} is empty (no file yet).")
        return
    with ResponseCache(path) as cache:
        st = cache.stats()
    out.print(
        f"{st.path}: {st.entries:,} answers, {st.size_bytes / 1e6:,.1f} MB"
        + (f", from {st.oldest:%Y-%m-%d %H:%M} to {st.newest:%Y-%m-%d %H:%M} UTC" if st.oldest else "")
    )
    for (provider, model), n in sorted(st.by_model.items()):
        out.print(f"  {provider}/{model}: {n:,}")


@cache_app.command("clear")
def cache_clear(
    results: ResultsOpt = None,
    older_than_days: Annotated[
        float | None, typer.Option(min=0.0, max=MAX_DAYS, help="Only answers older than this.")
    ] = None,
) -> None:
    """Delete cached answers (all, or those older than N days). Runs already recorded keep their calls.

    Example: `pdbench cache clear --older-than-days 30`
    """
    path = cache_path(results_dir(results), False)
    assert path is not None
    if not path.exists():
        out.print(f"Nothing to clear: {path} does not exist.")
        return
    if older_than_days is None:
        # Delete the rows (another process may have the file open); only a cache too damaged to open
        # is removed as a file.
        try:
            with ResponseCache(path) as cache:
                n = cache.clear()
        except StoreError:
            delete_cache(path)
            out.print(f"The response cache {path} could not be opened; deleted the file.")
            return
        out.print(f"Deleted {n:,} answers from the response cache {path}.")
        return
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    with ResponseCache(path) as cache:
        n = cache.clear(older_than=cutoff)
    out.print(f"Deleted {n:,} answers older than {older_than_days:g} days from {path}.")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="DuckDB SQL over runs, games, rounds, calls and the metric views.")],
    results: ResultsOpt = None,
    format: Annotated[
        Format, typer.Option("--format", help="table for people; csv or json for scripts.")
    ] = Format.table,
) -> None:
    """Run read-only SQL over every run in the results folder at once.

    Example: `pdbench sql "select player, median_score_per_turn from tournament order by rank" --format json`
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
    existing_run_id(run_id)
    with open_run(results_dir(results), run_id) as cat:
        if format is Format.table:
            _print_report(cat, run_id)
            return
        cat.require_run(run_id)
        summaries = condition_summaries(cat, run_id)
    dicts = [s.as_dict() for s in summaries]
    columns = list(dicts[0]) if dicts else ["condition"]
    rows = [[d.get(c) for c in columns] for d in dicts]
    if format is Format.json:
        out.file.write(rows_json(columns, rows) + "\n")
    else:
        print_rows(out, "csv", columns, rows)


def _print_report(cat: Catalog, run_id: str) -> None:
    """The per-condition table of a run and, if it has model players, how well their answers read."""
    out.print(report_table(cat.require_run(run_id), condition_summaries(cat, run_id)))
    answers = model_answers(cat, run_id)
    if answers:
        out.print(answers_table(answers))
    accuracy = comprehension_accuracy(cat, run_id)
    if accuracy:
        out.print(comprehension_table(accuracy))


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


@app.command()
def ui(
    results: ResultsOpt = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to serve on.")] = 8501,
    host: Annotated[
        str,
        typer.Option(
            help="Address to bind. Default loopback only; anything else lets whoever reaches it run paid "
            "experiments with your API keys and read your results."
        ),
    ] = "127.0.0.1",
) -> None:
    """Open the dashboard (Streamlit): run experiments, view results, replay games, tournaments.

    Example: `pdbench ui --results results --port 8501`, then open http://127.0.0.1:8501
    """
    from harness.ui.host_guard import is_loopback
    from harness.ui.launch import serve

    if not is_loopback(host):
        err.print(
            f"[yellow]warning:[/yellow] serving on {escape(host)}, beyond this machine: anyone who can reach "
            f"{escape(host)}:{port} can run experiments that spend your API keys (the OPENAI_API_KEY and "
            "ANTHROPIC_API_KEY of this environment) and can read every result in the folder. The page has no "
            "login; keep the default 127.0.0.1 unless every machine that can reach it is yours.",
            highlight=False,
            soft_wrap=True,
        )
    folder = results_dir(results).expanduser().resolve()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the results folder {folder}: {exc.strerror or exc}. Choose another with --results DIR."
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        err.print(
            f"[yellow]warning:[/yellow] the results folder {folder} is read-only: the dashboard shows its runs, "
            "but cannot save new ones (give a writable folder with --results DIR to run experiments)"
        )
    serve(folder, port, host)


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
    """Entry point of the ``pdbench`` script. A bug's traceback is printed as Python prints it, but without
    any API key in it (an exception's text may quote one; see harness.keys)."""
    try:
        app()
    except Exception as exc:
        sys.stderr.write(scrub("".join(traceback.format_exception(exc))))
        sys.exit(1)


if __name__ == "__main__":
    main()
