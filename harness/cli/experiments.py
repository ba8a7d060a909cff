"""The commands that plan and play games: ``validate``, ``run``, ``tournament``, ``eval`` and ``resume``.

Only what the options need (their bounds, defaults and help) is imported with this module; the engine, the
config models and the results store are imported by the command that uses them, so that ``pdbench --help``
and the commands that play nothing start at once (see ``tests/unit/test_startup.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import (
    AllowKeyToOpt,
    DespiteEstimateOpt,
    MaxCostOpt,
    MaxRoundsOpt,
    NoCacheOpt,
    NoiseOpt,
    ObservationNoiseOpt,
    OverwriteOpt,
    PayoffMatrixOpt,
    PricesOpt,
    ResultsOpt,
    SeedOpt,
    StopProbOpt,
    app,
    err,
    out,
)
from harness.config.presets.panels import DEFAULT_PANEL, DEFAULT_PLAYERS
from harness.config.presets.suites import PROTOCOL_OPTIONS, SUITES, check_options, get_suite
from harness.errors import ConfigError
from harness.game.rules import MAX_ROUNDS
from harness.util.bounds import MAX_CONCURRENCY, MAX_REPLICATES, MAX_RPM, MAX_TPM, MIN_RPM, MIN_TPM
from harness.util.plural import plural

if TYPE_CHECKING:
    from harness.cli.play import EngineFlags
    from harness.config import ExperimentConfig
    from harness.engine.runner import RunResult
    from harness.store.catalog import Catalog


def _warn(config: ExperimentConfig) -> None:
    for w in config.warnings():
        err.print(f"[yellow]warning:[/yellow] {w}")


@app.command()
def validate(
    file: Annotated[Path, typer.Argument(help="Experiment YAML file.")],
    allow_key_to: AllowKeyToOpt = None,
) -> None:
    """Check an experiment file and report every problem at once.

    Example: `pdbench validate configs/experiment.yaml`
    """
    from harness.config import load_experiment
    from harness.config.plan import summarize
    from harness.engine.preflight import check_key_destinations
    from harness.providers.registry import allow_keys_to

    allow_keys_to(allow_key_to or [])
    config = load_experiment(file)
    check_key_destinations(config)
    _warn(config)
    s = summarize(config)
    out.print(
        f"[green]OK[/green] {file}: {_count(s.conditions, 'condition')} × {_count(s.replicates, 'replicate')} "
        f"= {_count(s.games, 'game')}, {_rounds(s.expected_rounds)}."
    )


def _count(n: int, noun: str) -> str:
    """The plan's conditions, replicates or games, as plain digits (``1000 games``)."""
    return plural(n, noun, grouped=False)


def _rounds(expected: float) -> str:
    """The plan's expected rounds (geometric games' lengths are drawn), rounded to a whole number."""
    return plural(round(expected), "round", number=f"about {expected:,.0f}")


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
    despite_estimate: DespiteEstimateOpt = False,
    allow_key_to: AllowKeyToOpt = None,
) -> None:
    """Play every condition × replicate of an experiment and store it in DuckDB.

    Example: `pdbench run configs/experiment.yaml --replicates 10`
    """
    from harness.cli.play import EngineFlags, chosen_run_id, play
    from harness.cli.show import show_report
    from harness.config import load_experiment
    from harness.config.run_settings import results_dir, run_id_prefix
    from harness.engine.runner import default_run_id
    from harness.providers.registry import allow_keys_to

    allow_keys_to(allow_key_to or [])
    config = load_experiment(file)
    _warn(config)
    folder = results_dir(results, config)
    rid = chosen_run_id(run_id or None, config)  # an empty --run-id leaves the config's (tournament and eval refuse it)
    flags = EngineFlags(max_cost, no_cache, prices, despite_estimate)
    if dry_run:
        _print_plan(file, config, replicates, folder, rid)
        _dry_run_estimate(config, replicates, folder, flags)
        return
    rid = rid or default_run_id(run_id_prefix(file.stem), folder)
    play(config, folder=folder, run_id=rid, replicates=replicates, overwrite=overwrite, flags=flags, show=show_report)


def _dry_run_estimate(config: ExperimentConfig, replicates: int | None, folder: Path, flags: EngineFlags) -> None:
    """The estimate under the plan; exit 1 when the run would not start (a key is missing) or, under
    ``--max-cost``, would be refused (estimated above it)."""
    from harness.calls.pricing import PriceTable
    from harness.cli.estimate_view import print_estimate, refuse_over_budget, warn_unpriced_cache

    table = PriceTable.load(*flags.options(folder).prices)
    warn_unpriced_cache(config, table)
    if not print_estimate(config, replicates, table):
        raise typer.Exit(1)
    if flags.max_cost is not None and not flags.despite_estimate:
        refuse_over_budget(config, replicates, table, flags.max_cost)


def _print_plan(file: Path, config: ExperimentConfig, replicates: int | None, folder: Path, rid: str | None) -> None:
    from harness.cli.render import label
    from harness.config.plan import summarize

    s = summarize(config, replicates)
    out.print(f"Plan for {file} (nothing played):")
    for cond in config.experiment.conditions:
        out.print(f"  {cond.name}: {label(cond.agent_a.label)} vs {label(cond.agent_b.label)}")
    rounds = f"{s.expected_rounds:,.0f}" if s.fixed_rounds else f"about {s.expected_rounds:,.0f} (expected)"
    out.print(
        f"{_count(s.conditions, 'condition')} × {_count(s.replicates, 'replicate')} = {_count(s.games, 'game')}; "
        f"rounds: {rounds}; model calls: {s.model_calls:,.0f}; results to "
        f"{rid or '<new run id>'} in {folder}/"
    )
    from harness.engine.structured_probe import structured_probes

    for probe in structured_probes(config):
        out.print(
            f"Before any game, a run would send {probe.where} one request to check that it follows the structured "
            "reply's JSON schema (not sent now).",
            highlight=False,
        )


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
    observation_noise: ObservationNoiseOpt = 0.0,
    payoff_matrix: PayoffMatrixOpt = None,
    seed: SeedOpt = 0,
    self_play: Annotated[
        bool,
        typer.Option(
            "--self-play/--no-self-play",
            help="Include each player against itself (shown in the matchups, never scored).",
        ),
    ] = True,
    results: ResultsOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default `tournament_<timestamp>`).")] = None,
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
    (add a model as a player: `--players TFT,ALLD,mock/tft`; other payoffs: `--payoff-matrix trust`)
    """
    from harness.cli.play import EngineFlags
    from harness.config.presets.payoffs import payoff_matrix_option
    from harness.config.presets.players import parse_players
    from harness.config.presets.tournament import tournament_config

    config = tournament_config(
        parse_players(players),
        rounds=rounds,
        stop_prob=stop_prob,
        max_rounds=max_rounds,
        replicates=replicates,
        noise=noise,
        observation_noise=observation_noise,
        seed=seed,
        self_play=self_play,
        payoff_matrix=None if payoff_matrix is None else payoff_matrix_option(payoff_matrix).to_mapping(),
    )
    _warn(config)  # e.g. payoffs that are not a prisoner's dilemma
    _play_built_in(config, "tournament", results, run_id, overwrite, EngineFlags(max_cost, no_cache, prices))


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
    observation_noise: ObservationNoiseOpt = 0.0,
    payoff_matrix: PayoffMatrixOpt = None,
    persona: Annotated[str | None, typer.Option(help="A persona from personas/ (or a .md file).")] = None,
    temperature: Annotated[float | None, typer.Option(min=0.0, max=2.0, help="Sampling temperature.")] = None,
    comprehension: Annotated[
        str | None,
        typer.Option(
            help="Ask the model the rules before its move in these rounds (e.g. 1,10): a comprehension "
            "check, scored in the scorecard."
        ),
    ] = None,
    answer_format: Annotated[
        str | None,
        typer.Option(
            help="How the model is asked for its move: free (default), json, label, or structured (the provider's "
            "constrained output: a JSON schema, or Anthropic's forced tool call)."
        ),
    ] = None,
    prompt_layout: Annotated[
        str | None,
        typer.Option(
            help="cached (default: each round's prompt extends the last one's, so the provider's prompt cache "
            "reads all but the newest round) or classic (PDBench 0.1's prompts, rebuilt every round)."
        ),
    ] = None,
    seed: SeedOpt = 0,
    base_url: Annotated[str | None, typer.Option(help="An OpenAI-compatible server (or $OPENAI_BASE_URL).")] = None,
    service_tier: Annotated[
        str | None,
        typer.Option(
            help="standard (default); flex: OpenAI's half-price, slower tier (900 s timeout; its 'resource "
            "unavailable' 429s are retried); batch: as --batch."
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Buy the model's answers through its provider's batch API (OpenAI Batch, Anthropic Message "
            "Batches) at half price: the games play in lock step, one batch per round, answered within 24 h.",
        ),
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=MAX_CONCURRENCY, help="Max requests in flight to the endpoint.")
    ] = None,
    rpm: Annotated[float | None, typer.Option(min=MIN_RPM, max=MAX_RPM, help="Requests per minute allowed.")] = None,
    tpm: Annotated[float | None, typer.Option(min=MIN_TPM, max=MAX_TPM, help="Tokens per minute allowed.")] = None,
    max_cost: MaxCostOpt = None,
    despite_estimate: DespiteEstimateOpt = False,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the plan and its estimate (calls, tokens, cost, time); play nothing."),
    ] = False,
    run_id: Annotated[str | None, typer.Option(help="Run id (default `eval_<timestamp>`).")] = None,
    overwrite: OverwriteOpt = False,
    results: ResultsOpt = None,
) -> None:
    from harness.cli.play import EngineFlags
    from harness.cli.repeats import repeats_note
    from harness.config.presets.evaluation import checked_tier, comprehension_rounds, eval_config
    from harness.config.presets.payoffs import payoff_matrix_option
    from harness.config.presets.players import parse_players

    limits = {k: v for k, v in (("concurrency", concurrency), ("rpm", rpm), ("tpm", tpm)) if v is not None}
    checked = comprehension_rounds(comprehension)
    if batch:
        if service_tier not in (None, "batch"):
            raise ConfigError(
                f"--batch buys at the batch tier and --service-tier {service_tier} at another: give one of them"
            )
        service_tier = "batch"
    if suite is not None:
        preset = get_suite(suite)
        check_options(preset, _given(ctx))
        if answer_format is not None:
            raise ConfigError(
                f"--answer-format cannot be combined with --suite {preset.name}: the suite fixes how the model is "
                "asked for its move; leave --answer-format out, or drop --suite and set the game yourself"
            )
        config = preset.config(
            model,
            replicates=replicates,
            seed=seed,
            base_url=base_url,
            limits=limits,
            comprehension=checked,
            service_tier=None if service_tier is None else checked_tier(service_tier),
        )
    else:
        panel = parse_players(opponents, option="--opponents")
        config = eval_config(
            model,
            opponents=panel,
            rounds=rounds,
            stop_prob=stop_prob,
            max_rounds=max_rounds,
            replicates=replicates,
            noise=noise,
            observation_noise=observation_noise,
            payoff_matrix=None if payoff_matrix is None else payoff_matrix_option(payoff_matrix).to_mapping(),
            persona=persona,
            temperature=temperature,
            seed=seed,
            base_url=base_url,
            limits=limits,
            comprehension=checked,
            answer_format=answer_format,
            prompt_layout=prompt_layout,
            service_tier=service_tier,
        )
    _warn(config)  # e.g. flex for a model the price table gives no flex price
    flags = EngineFlags(max_cost, no_cache, prices, despite_estimate)
    if dry_run:
        from harness.config.run_settings import results_dir

        folder = results_dir(results, config)
        _print_plan(Path(f"pdbench eval --model {model}"), config, None, folder, run_id)
        _dry_run_estimate(config, None, folder, flags)
        return
    if (note := repeats_note(config)) is not None:
        err.print(f"[cyan]{note}[/cyan]", highlight=False)
    _play_built_in(config, "eval", results, run_id, overwrite, flags)


def _play_built_in(
    config: ExperimentConfig, kind: str, results: str | None, run_id: str | None, overwrite: bool, flags: EngineFlags
) -> None:
    """Play a tournament or an eval built from options, under ``--run-id`` or ``<kind>_<timestamp>``, and
    print its leaderboard or scorecard."""
    from harness.cli.play import chosen_run_id, play
    from harness.cli.show import show_for
    from harness.config.run_settings import results_dir
    from harness.engine.runner import default_run_id

    rid = chosen_run_id(run_id)
    folder = results_dir(results)
    rid = rid or default_run_id(kind, folder)
    play(config, folder=folder, run_id=rid, replicates=None, overwrite=overwrite, flags=flags, show=show_for(kind))


def _given(ctx: typer.Context) -> list[str]:
    """The options the user typed (or set through the environment), as they are spelt on the command line."""
    given = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        # By name: Typer carries its own copy of click, whose ParameterSource is not click's.
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given.append(next((o for o in param.opts if o.startswith("--")), str(param.name)))
    return given


@app.command(name="resume")
def resume_(
    run_id: Annotated[
        str, typer.Argument(help="The interrupted or crashed run: its id, a unique prefix of it, or `latest`.")
    ],
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
    allow_key_to: AllowKeyToOpt = None,
) -> None:
    """Continue an interrupted, crashed or partly failed run; recorded answers come from the cache, not the API.

    Example: `pdbench resume eval_20261122_120000`
    """
    from harness.cli.play import EngineFlags, resume
    from harness.config.run_settings import results_dir
    from harness.providers.registry import allow_keys_to
    from harness.store.run_ref import resolve_run_id

    allow_keys_to(allow_key_to or [])
    folder = results_dir(results)
    run_id = resolve_run_id(folder, run_id)
    resume(folder, run_id, flags=EngineFlags(max_cost, no_cache, prices), retry_failed=retry_failed, show=_show_run)


def _show_run(cat: Catalog, result: RunResult) -> int:
    """What fits the run's kind: a scorecard, a leaderboard or the report."""
    from harness.cli.show import show_for

    return show_for(str(cat.require_run(result.run_id)["kind"]))(cat, result)
