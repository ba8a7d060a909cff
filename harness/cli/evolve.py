"""``pdbench evolve``: a population of strategies (and language models) playing the iterated Prisoner's Dilemma
and changing by selection, one run or a sweep of them.

Only the options are defined at import; the engine, NumPy and the results store are imported when the command
runs (see ``tests/unit/test_startup.py``). Settings are checked as a whole before anything runs: every problem
in one message, exit code 2.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import (
    MaxCostOpt,
    NoCacheOpt,
    OverwriteOpt,
    PayoffMatrixOpt,
    PricesOpt,
    ResultsOpt,
    WidthOpt,
    app,
    err,
    laid_out,
    out,
)

MAX_PACE_S = 60.0

if TYPE_CHECKING:
    from harness.cli.play import EngineFlags
    from harness.engine.evolution.options import Cell, EvolutionOptions
    from harness.engine.evolution.phases import PhaseGames
    from harness.engine.evolution.sweep import Job
    from harness.engine.interrupts import StopFlag
    from harness.evolution import EvolutionSettings, PayoffTable
    from harness.evolution.scenarios import Scenario

EVOLVE_HELP = """Evolve a population of strategies (and models) by selection, after The Evolution of Trust.

Each generation everyone plays everyone (iterated Prisoner's Dilemma matches), and the population changes by
the chosen dynamics: `generational` (the next generation drawn in proportion to fitness), `moran` (one birth
and one death a step), `trust` (the k lowest scorers replaced by copies of the k highest), `replicator`
(the infinite-population ODE) or `squared_share` (below). Fitness is exp(w·score) or 1 - w + w·score with
selection intensity w, the score being an individual's mean payoff per round over the others it meets (on the
payoff matrix's scale, so w = 0.1 is weak selection whatever the rounds and N); `--score match_total` scores
whole-match totals instead.

`--dynamics squared_share` is Payne & Alloui-Cros (2025)'s rule: each phase every pair of individual agents plays
one match (each its own length under `--stop-prob P --max-rounds M`), each strategy's fitness is its pooled score
(its agents' points over all their matches / those matches' rounds), and its count is multiplied by
(fitness / unweighted mean fitness)², rounded (halves to even) and nudged back to N; no draw, no mutation,
extinction for good. `--generations` counts updates; one more phase is played on the last population (their 5
phases = `--generations 4`). Each phase's points and rounds per strategy are stored (table `phase_scores`).
A model's matches are played through the engine, one run a phase (`<run id>_phase<k>`: recorded, cached,
resumed when the same command runs again with the same `--run-id`); matches of two strategies in process.
`--selection`, `--fitness`, `--score`, `--mutation`, `--k` and `--payoff-mode estimated` are refused with it.

`--suite payne2025 --players MODEL --stop-prob P` plays Payne & Alloui-Cros (2025)'s protocol: their ten
strategies and the model, 2 agents each, squared_share with 4 updates, at most 30 rounds a match, P one of 0.1,
0.25 or 0.75, their prompt templates, temperature 0.7, 1000 tokens, the last-line reader with an unreadable reply
a flagged C; the options it fixes are refused, and the run stores `suite: payne2025`.

`--scenario NAME` replays a lesson of The Evolution of Trust, as the dashboard's 🧬 Evolution scenarios do, with the
same settings: exploited, few_rounds, noise, too_noisy, weak_selection or strong_selection (`--scenario list` shows
each with its lesson). Options given beside it override its settings (`--scenario few_rounds --rounds 10`); the
result ends with the lesson and the numbers of the run that show it, or says that the run did not show it.
`--pace 1` prints the population one generation a second once the run is done, slow enough to talk over.

Shows a bar per player while it runs; ends with the final shares, the winner or the fixation, and the run id.

Example: `pdbench evolve --players TFT,ALLD,ALLC,GRIM --counts 25,25,25,25 --generations 100 --noise 0.05`

A model is a player like any strategy (`--players TFT,ALLD,mock/tft`): under the other dynamics its payoffs
come from a tournament of the distinct players played through the engine first (`--replicates` games a pair;
cached, recorded as run `<run id>_payoffs`, resumed when the same command runs again with the same `--run-id`).
`--model-settings FILE` gives each model its settings, the keys of a model agent in an experiment file, e.g.
`openai/gpt-4o-mini: {temperature: 0.7, max_tokens: 1000, parse: {reader: last_line, max_retries: 0}}`;
they are checked before anything runs and stored with the run's settings.

Sweeps: `--sweep noise=0,0.05,0.1 --seeds 20` runs every cell × seed (in `--workers` processes, or on a Ray
cluster with `--ray ADDRESS`), each its own run `<sweep id>_c<cell>_s<seed>`; `pdbench report <sweep id>`
gives each player's final share per cell with a 95% confidence interval over seeds. A sweep stopped or killed
is resumed by the same command (with its `--run-id`): complete runs are kept, the others played again.
"""


@app.command(help=EVOLVE_HELP)
def evolve(
    ctx: typer.Context,
    players: Annotated[
        str, typer.Option(help="Comma-separated strategies (TFT, GTFT(p=0.3)) and models (provider/model).")
    ] = "TFT,ALLD,ALLC,GRIM",
    counts: Annotated[str | None, typer.Option(help="Initial individuals per player, e.g. 25,25,25,25.")] = None,
    shares: Annotated[
        str | None, typer.Option(help="Initial share per player, summing to 1 (with --population).")
    ] = None,
    population: Annotated[int | None, typer.Option(help="Number of individuals N (with --shares).")] = None,
    generations: Annotated[
        int | None, typer.Option(help="Generations (Moran: steps; replicator: units of time). Default 100.")
    ] = None,
    dynamics: Annotated[
        str | None, typer.Option(help="generational (default), moran, trust, replicator or squared_share.")
    ] = None,
    rounds: Annotated[int | None, typer.Option(help="Rounds per match (fixed horizon; default 200).")] = None,
    stop_prob: Annotated[float | None, typer.Option(help="Geometric horizon: per-round stop probability.")] = None,
    max_rounds: Annotated[int | None, typer.Option(help="Cap on a geometric match's length.")] = None,
    noise: Annotated[
        float | None, typer.Option(help="Execution noise: probability that a move is flipped (a mistake).")
    ] = None,
    observation_noise: Annotated[
        float | None,
        typer.Option(
            help="Observation noise: probability that a player sees the other's move flipped (misperception)."
        ),
    ] = None,
    payoff_matrix: PayoffMatrixOpt = None,
    payoff_mode: Annotated[
        str | None,
        typer.Option(help="exact (random pairs play afresh each generation) or estimated (once, --replicates M)."),
    ] = None,
    payoffs: Annotated[str | None, typer.Option(hidden=True, help="The old name of --payoff-mode.")] = None,
    replicates: Annotated[
        int | None,
        typer.Option(
            help="Matches per pair for estimated payoffs, and games per pair with a model (not used by "
            "squared_share: one match a pair of agents a phase)."
        ),
    ] = None,
    selection: Annotated[
        float | None, typer.Option(help="Selection intensity w (0: neutral drift). Default 1.")
    ] = None,
    fitness: Annotated[str | None, typer.Option(help="linear (1 - w + w·score, default) or exponential.")] = None,
    score: Annotated[
        str | None,
        typer.Option(help="per_round (default: mean payoff per round over the others met) or match_total."),
    ] = None,
    mutation: Annotated[float | None, typer.Option(help="Probability that an offspring is another type.")] = None,
    k: Annotated[int | None, typer.Option("--k", help="Individuals replaced per generation (trust).")] = None,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same run.")] = 0,
    suite: Annotated[
        str | None,
        typer.Option(help="A published protocol to reproduce: payne2025 (with --players MODEL and --stop-prob P)."),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(
            metavar="NAME|list",
            help="A lesson of The Evolution of Trust, as the dashboard's scenarios: exploited, few_rounds, noise, "
            "too_noisy, weak_selection or strong_selection (`list` shows each with its lesson). Options given beside "
            "it override its settings.",
        ),
    ] = None,
    pace: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=MAX_PACE_S,
            metavar="SECONDS",
            help="Once the run is done, print the population one generation every SECONDS (those where nothing "
            "changed skipped), to talk over; off by default.",
        ),
    ] = None,
    model_settings: Annotated[
        Path | None,
        typer.Option(
            help="YAML file mapping each model player to its settings (prompts, temperature, max_tokens, parse, "
            "...), as a model agent of an experiment file."
        ),
    ] = None,
    sweep: Annotated[
        list[str] | None,
        typer.Option(help="KEY=V1,V2,... : run the grid of these values (repeat for more keys)."),
    ] = None,
    seeds: Annotated[int | None, typer.Option(help="Sweep: seeds per cell (seed, seed+1, ...). Default 1.")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Sweep: processes on this machine (default: its CPU count).")
    ] = None,
    ray: Annotated[
        str | None, typer.Option("--ray", help="Sweep: run the cells on the Ray cluster at ADDRESS.")
    ] = None,
    results: ResultsOpt = None,
    run_id: Annotated[
        str | None, typer.Option(help="Run id (default `evolution_<timestamp>`); a sweep's id for a sweep.")
    ] = None,
    overwrite: OverwriteOpt = False,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
    width: WidthOpt = None,
) -> None:
    ctx.with_resource(laid_out(width))  # the result laid out for --width columns, until the command ends
    from harness.cli.experiments import _given
    from harness.cli.play import EngineFlags, chosen_run_id
    from harness.config.loading import load_model_settings
    from harness.config.presets.payoffs import payoff_matrix_option
    from harness.config.run_settings import results_dir
    from harness.engine.evolution.options import EvolutionOptions, parse_sweep
    from harness.engine.interrupts import StopFlag, graceful_interrupt

    if scenario is not None and scenario.strip().lower() == "list":
        _list_scenarios()
        return
    given = _given(ctx)
    if suite is not None:  # before anything else is read: the options it fixes are refused, not read
        if scenario is not None:
            from harness.errors import ConfigError

            raise ConfigError("--suite and --scenario each set a whole population: give one of them")
        settings = _suite_settings(suite, given, players, stop_prob, seed)
        rid = chosen_run_id(run_id)
        folder = results_dir(results)
        stop = StopFlag()
        with graceful_interrupt(stop):
            _single(settings, rid, folder, overwrite, EngineFlags(max_cost, no_cache, prices), stop, pace=pace)
        return
    lesson = None if scenario is None else _scenario(scenario, given)
    if lesson is not None:  # the scenario's players and seed unless given
        base = lesson.settings()
        players = players if "--players" in given else ",".join(base.players)
        seed = seed if "--seed" in given else base.seed
    options = EvolutionOptions(
        players,
        counts,
        shares,
        population,
        generations,
        dynamics,
        rounds,
        stop_prob,
        max_rounds,
        noise,
        _renamed_payoffs(payoff_mode, payoffs),
        replicates,
        selection,
        fitness,
        score,
        mutation,
        k,
        seed,
        model_settings=None if model_settings is None else load_model_settings(model_settings),
        payoff_matrix=None if payoff_matrix is None else payoff_matrix_option(payoff_matrix),
        observation_noise=observation_noise,
    )
    for warning in [] if options.payoff_matrix is None else options.payoff_matrix.warnings():
        err.print(f"[yellow]warning:[/yellow] payoff_matrix: {warning}", highlight=False)
    flags = EngineFlags(max_cost, no_cache, prices)
    rid = chosen_run_id(run_id)
    if sweep:
        from harness.errors import ConfigError

        if lesson is not None:
            raise ConfigError(
                f"--scenario {lesson.key} is one run, read for its lesson: leave out --sweep, or sweep its settings "
                "with the options themselves (see `pdbench evolve --scenario list` for what each sets)"
            )
        if pace is not None:
            raise ConfigError("--pace narrates one run, generation by generation: leave it out of a sweep")
        _check_sweep_options(seeds, workers)
        cells = parse_sweep(sweep or [])
        folder = results_dir(results)
        stop = StopFlag()
        with graceful_interrupt(stop):
            _sweep(options, cells, seeds or 1, rid, folder, workers, ray, overwrite, flags, stop)
        return
    _refuse_sweep_only(seeds=seeds, workers=workers, ray=ray)
    settings = options.settings() if lesson is None else options.over(lesson.settings(), f"--scenario {lesson.key}")
    folder = results_dir(results)
    stop = StopFlag()
    with graceful_interrupt(stop):
        _single(settings, rid, folder, overwrite, flags, stop, pace=pace, scenario=lesson)


def _scenario(name: str, given: list[str]) -> Scenario:
    """The scenario ``name`` (a one-paragraph error with the closest name otherwise); ``--model-settings`` is
    refused with it, as its population has no model."""
    from harness.errors import ConfigError
    from harness.evolution.scenarios import scenario_named

    chosen = scenario_named(name)
    if "--model-settings" in given:
        raise ConfigError(f"--scenario {chosen.key} plays strategies only: leave out --model-settings")
    return chosen


def _list_scenarios() -> None:
    """Each scenario: its name, its lesson and what it sets."""
    from rich.table import Table

    from harness.evolution.scenarios import SCENARIOS

    table = Table(box=None, show_header=True, header_style="bold", title_justify="left", pad_edge=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("lesson (and what it sets)")
    for s in SCENARIOS:
        table.add_row(s.key, f"{s.lesson}\n[dim]{s.blurb}[/dim]")
    out.print(table)
    out.print(
        "Run one: pdbench evolve --scenario NAME (options given beside it override its settings).", highlight=False
    )


def _suite_settings(name: str, given: list[str], players: str, stop_prob: float | None, seed: int) -> EvolutionSettings:
    """The settings of suite ``name`` for the models of ``--players``: every other option the suite fixes is
    refused (all at once), and the settings store ``suite: NAME``."""
    from harness.config.presets.evolve_suites import check_evolve_options, get_evolve_suite
    from harness.config.presets.players import split_players
    from harness.errors import ConfigError
    from harness.evolution import EvolutionSettings

    preset = get_evolve_suite(name)
    check_evolve_options(preset, given)
    if "--players" not in given:
        raise ConfigError(
            f"--suite {preset.name} needs the language models that join its strategies: give them with --players "
            "(e.g. --players openai/gpt-4o-mini, or two separated by a comma)"
        )
    data = preset.settings_data(split_players(players), stop_prob, seed)
    return EvolutionSettings.model_validate({**data, "suite": preset.name})


def _renamed_payoffs(payoff_mode: str | None, payoffs: str | None) -> str | None:
    """``--payoff-mode`` as given, or as given by its old name ``--payoffs`` (with a warning): renamed because
    teachers read it as the game's payoffs, which are ``--payoff-matrix``; given those, it says so."""
    from harness.config.presets.payoffs import payoff_matrix_option
    from harness.errors import ConfigError

    if payoffs is None:
        return payoff_mode
    if payoff_mode is not None:
        raise ConfigError("--payoffs is the old name of --payoff-mode: give --payoff-mode alone")
    try:
        payoff_matrix_option(payoffs)
    except ConfigError:
        err.print(f"[yellow]warning:[/yellow] --payoffs is now --payoff-mode: read as --payoff-mode {payoffs}")
        return payoffs
    raise ConfigError(
        f"--payoffs {payoffs}: that is the game's payoffs, which are --payoff-matrix T,R,P,S (temptation, reward, "
        f"punishment, sucker's payoff, e.g. --payoff-matrix 5,3,1,0) or a preset (axelrod, trust); --payoffs is "
        "the old name of --payoff-mode, how matches are played (exact or estimated)"
    )


def _refuse_sweep_only(**given: object) -> None:
    """Options of a sweep given without ``--sweep``: refused, rather than turning one evolution into a sweep
    of one cell (other run ids, other processes) without a word."""
    from harness.errors import ConfigError

    names = [f"--{name}" for name, value in given.items() if value is not None]
    if names:
        them = "them" if len(names) > 1 else "it"
        raise ConfigError(
            f"{' and '.join(names)} only appl{'y' if len(names) > 1 else 'ies'} to a sweep: add --sweep KEY=V1,V2,... "
            f"(one value is a sweep too: --sweep selection=1 --seeds 20 plays 20 seeds at selection 1), or leave "
            f"{them} out to run one evolution"
        )


def _check_sweep_options(seeds: int | None, workers: int | None) -> None:
    from harness.engine.evolution.options import MAX_SEEDS
    from harness.errors import ConfigError

    if seeds is not None and not 1 <= seeds <= MAX_SEEDS:
        raise ConfigError(f"--seeds {seeds}: give between 1 and {MAX_SEEDS:,} seeds per cell")
    if workers is not None and not 1 <= workers <= 1024:
        raise ConfigError(f"--workers {workers}: give between 1 and 1,024 processes")


def _single(
    settings: EvolutionSettings,
    rid: str | None,
    folder: Path,
    overwrite: bool,
    flags: EngineFlags,
    stop: StopFlag,
    *,
    pace: float | None = None,
    scenario: Scenario | None = None,
) -> None:
    """One run, shown live (or, with ``pace``, narrated generation by generation once done), then its result and,
    for a scenario, its lesson as the run shows it."""
    from contextlib import nullcontext

    from harness.cli.evolve_view import LiveView, live, narrate, print_lesson, print_outcome
    from harness.engine.evolution.phases import unfinished
    from harness.engine.evolution.run import run_evolution
    from harness.engine.runner import default_run_id
    from harness.errors import RunExistsError
    from harness.evolution import Dynamics
    from harness.store.run_file import run_path

    rid = rid or default_run_id("evolution", folder)
    phased = bool(settings.models) and settings.dynamics == Dynamics.squared_share
    again = phased and not overwrite and unfinished(folder, rid, settings)
    if run_path(folder, rid).exists() and not overwrite and not again:
        raise RunExistsError(
            f"a run with id {rid!r} already exists ({run_path(folder, rid)}). Choose another run id (--run-id), "
            "or pass --overwrite to replace it."
        )
    table: PayoffTable | None = None
    payoff_run: str | None = None
    phases: PhaseGames | None = None
    if phased:
        phases = _phase_games(settings, rid, folder, overwrite, flags, stop)
        if again:
            err.print(
                f"Run {rid} stopped before its end: playing it again, its complete phase runs read as they are "
                "and an unfinished one resumed.",
                highlight=False,
            )
    elif settings.models:
        table, payoff_run = _model_payoffs(settings, rid, folder, overwrite, flags, stop)
    view = LiveView(settings, rid)
    with live(view, err) if pace is None else nullcontext():
        outcome = run_evolution(
            settings,
            results_dir=folder,
            run_id=rid,
            overwrite=overwrite or again,
            stop=stop,
            on_generation=view.update,
            payoffs=table,
            payoff_run=payoff_run,
            model_matches=phases,
        )
    if pace is not None and outcome.trajectory is not None:
        narrate(out, outcome.trajectory, settings, pace, stop.wait)
    print_outcome(out, err, outcome, settings)
    if scenario is not None:
        print_lesson(out, scenario, settings, outcome.trajectory)
    if outcome.status != "complete":
        raise typer.Exit(130)


def _phase_games(
    settings: EvolutionSettings, rid: str, folder: Path, overwrite: bool, flags: EngineFlags, stop: StopFlag
) -> PhaseGames:
    """Check the models' keys (on the games they will play), then what plays each phase's model matches."""
    from harness.calls.pricing import PriceTable
    from harness.engine.evolution.models import payoff_tournament
    from harness.engine.evolution.phases import PhaseGames, phase_run_id
    from harness.engine.preflight import check_models, check_prices
    from harness.engine.structured_probe import check_structured_replies

    phase_run_id(rid, settings.generations)  # the longest phase run id: too long is refused now, not in phase 0
    engine = flags.options(folder)
    config = payoff_tournament(settings)  # every model agent, with its settings, as the phase runs will have them
    check_models(config)
    if engine.max_cost is not None:
        check_prices(config, PriceTable.load(*engine.prices))
    check_structured_replies(config, engine)
    err.print(
        f"The models' matches are played through the engine, one run a phase ({rid}_phase0, {rid}_phase1, ...).",
        highlight=False,
    )
    return PhaseGames(settings, folder, rid, engine=engine, stop=stop, overwrite=overwrite)


def _model_payoffs(
    settings: EvolutionSettings,
    rid: str,
    folder: Path,
    overwrite: bool,
    flags: EngineFlags,
    stop: StopFlag,
    payoff_id: str | None = None,
) -> tuple[PayoffTable, str]:
    """Check the models' keys, then play (or resume, or reuse) the payoff tournament; exits 130 if it stopped."""
    from harness.calls.pricing import PriceTable
    from harness.cli.play import announce
    from harness.cli.progress import live_display
    from harness.engine.evolution.models import payoff_run_id, payoff_tournament, payoffs_from_run, play_payoffs
    from harness.engine.preflight import check_models, check_prices
    from harness.engine.structured_probe import check_structured_replies

    engine = flags.options(folder)
    config = payoff_tournament(settings)
    check_models(config)
    if engine.max_cost is not None:
        check_prices(config, PriceTable.load(*engine.prices))
    check_structured_replies(config, engine)
    tid = payoff_id or payoff_run_id(rid)
    err.print(
        f"Playing the payoff games of the population's players (run {tid}): "
        f"{settings.replicates} a pair, self-play included.",
        highlight=False,
    )
    result, tid = play_payoffs(
        settings,
        results_dir=folder,
        run_id=tid,
        engine=engine,
        stop=stop,
        monitor=lambda m: live_display(m, err),
        overwrite=overwrite,
    )
    if result is None:
        err.print(f"The payoff games of run {tid} are complete: reusing them.", highlight=False)
    else:
        announce(result)
        if result.status != "complete":
            err.print(
                f"The population did not evolve: its payoff games stopped. Run the same command with "
                f"--run-id {rid} to continue them where they stopped.",
                highlight=False,
            )
            raise typer.Exit(130)
    return payoffs_from_run(folder, tid, settings), tid


def _sweep(
    options: EvolutionOptions,
    cells: list[Cell],
    seeds: int,
    rid: str | None,
    folder: Path,
    workers: int | None,
    ray: str | None,
    overwrite: bool,
    flags: EngineFlags,
    stop: StopFlag,
) -> None:
    import time
    from dataclasses import replace

    from harness.cli.evolve_view import sweep_done, sweep_line
    from harness.engine.evolution.sweep import JobResult, plan_sweep, resume_sweep, run_local, run_ray
    from harness.engine.runner import default_run_id
    from harness.errors import ConfigError
    from harness.evolution import Dynamics
    from harness.util.plural import plural

    sweep_id = rid or default_run_id("sweep", folder)
    planned = plan_sweep(options, cells, range(options.seed, options.seed + seeds), sweep_id)
    phased = next(
        (j.settings for j in planned if j.settings.models and j.settings.dynamics == Dynamics.squared_share), None
    )
    if phased is not None:  # any cell: dynamics may be one of the swept keys
        raise ConfigError(
            f"a sweep of squared_share with language models ({', '.join(phased.models)}) is not built: each run plays "
            "its models' matches through the engine phase by phase, so run each cell as its own `pdbench evolve` "
            "(with its --run-id)"
        )
    # The same command again resumes the sweep: complete runs are kept, unfinished ones played again.
    jobs, kept = (planned, []) if overwrite else resume_sweep(planned, folder, sweep_id)
    if not jobs:
        err.print(f"Sweep {sweep_id}: its {plural(len(kept), 'run')} are complete already.", highlight=False)
    if jobs and jobs[0].settings.models:  # the whole sweep's payoff runs (kept ones reused), in the same order
        paid = {j.run_id: j for j in _sweep_payoffs(planned, sweep_id, folder, overwrite, flags, stop)}
        jobs = [replace(paid[j.run_id], rerun=j.rerun) for j in jobs]
    n_workers = workers or os.cpu_count() or 1
    where = f"the Ray cluster at {ray}" if ray else f"{min(n_workers, len(jobs))} processes"
    resumed = f" ({len(kept)} complete already, kept; {len(jobs)} to play)" if kept and jobs else ""
    if jobs:
        err.print(
            f"Sweep {sweep_id}: {len(cells)} cells × {seeds} seeds = {len(planned)} runs on {where}{resumed}.",
            highlight=False,
        )
    started = time.monotonic()
    done: list[JobResult] = list(kept)

    def on_done(result: JobResult) -> None:
        done.append(result)
        lead = max(result.final_shares, key=result.final_shares.__getitem__) if result.final_shares else None
        err.print(
            sweep_line(len(done), len(planned), result.run_id, result.status, lead, time.monotonic() - started),
            highlight=False,
        )
        if result.reason and result.status != "complete":
            err.print(f"  {result.reason}", highlight=False)

    if jobs and ray:
        run_ray(
            jobs, address=ray, results_dir=folder, sweep_id=sweep_id, stop=stop, on_done=on_done, overwrite=overwrite
        )
    elif jobs:
        run_local(
            jobs,
            results_dir=folder,
            sweep_id=sweep_id,
            workers=n_workers,
            stop=stop,
            on_done=on_done,
            overwrite=overwrite,
        )
    out.print(sweep_done(len(done), len(cells), seeds, sweep_id, started), highlight=False)
    if stop.is_set() or any(r.status != "complete" for r in done) or len(done) < len(planned):
        raise typer.Exit(130 if stop.is_set() else 1)


def _sweep_payoffs(
    jobs: list[Job], sweep_id: str, folder: Path, overwrite: bool, flags: EngineFlags, stop: StopFlag
) -> list[Job]:
    """A population with models: one payoff tournament per distinct game of the sweep (its horizon, noise,
    payoff matrix and games per pair), at the first seed, played before the sweep; each run reads its table."""
    from dataclasses import replace

    from harness.config import check_run_id

    tables: dict[str, tuple[PayoffTable, str]] = {}
    base_seed = jobs[0].seed
    out_jobs = []
    for job in jobs:
        s = job.settings
        key = repr((s.horizon, s.noise, s.observation_noise, s.payoff_matrix, s.replicates))
        if key not in tables:
            game = s.model_copy(update={"seed": base_seed})
            tid = check_run_id(f"{sweep_id}_g{len(tables)}_payoffs")
            tables[key] = _model_payoffs(game, sweep_id, folder, overwrite, flags, stop, payoff_id=tid)
        table, tid = tables[key]
        out_jobs.append(replace(job, payoffs=table, payoff_run=tid))
    return out_jobs
