"""``pdbench fingerprint``: play a model or a strategy against a grid of Ashlock or transitive probes, as a run.

The run is an ordinary experiment (``harness.config.presets.fingerprint``): played by the engine, stored, its model
answers cached by their sample identity, so a finer grid replays a coarser one's points from the cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.base import MaxCostOpt, NoCacheOpt, OverwriteOpt, PricesOpt, ResultsOpt, SeedOpt, app, out
from harness.errors import ConfigError
from harness.game.rules import MAX_ROUNDS
from harness.util.bounds import MAX_REPLICATES

if TYPE_CHECKING:
    from harness.cli.play import EngineFlags
    from harness.config import ExperimentConfig
    from harness.config.presets.fingerprint import Grid


@app.command()
def fingerprint(
    model: Annotated[str | None, typer.Option(help="The model, as provider/model (e.g. mock/tft).")] = None,
    strategy: Annotated[
        str | None, typer.Option(help="A strategy instead of a model, e.g. TFT or GTFT(p=0.1).")
    ] = None,
    kind: Annotated[
        str,
        typer.Option(help="ashlock (a TFT probe with joint noise at each (x, y)) or transitive (RAND(p) opponents)."),
    ] = "ashlock",
    step: Annotated[
        float | None, typer.Option(help="Spacing of the probe points (Axelrod's step): int(1/step)+1 per axis.")
    ] = None,
    grid_points: Annotated[
        int | None,
        typer.Option(
            "--grid", help="Probe points per axis (transitive: opponents). Default: ashlock 3 x 3, transitive 5."
        ),
    ] = None,
    rounds: Annotated[int, typer.Option(min=1, max=MAX_ROUNDS, help="Rounds per game.")] = 20,
    repetitions: Annotated[int, typer.Option(min=1, max=MAX_REPLICATES, help="Games per probe point.")] = 3,
    seed: SeedOpt = 0,
    base_url: Annotated[str | None, typer.Option(help="An OpenAI-compatible server (or $OPENAI_BASE_URL).")] = None,
    model_settings: Annotated[
        Path | None,
        typer.Option(
            "--model-settings",
            help="A YAML file of the model's settings, the keys of a model agent in an experiment file, as "
            "`pdbench evolve --model-settings` takes them: {openai/gpt-4o-mini: {temperature: 0, prompts: "
            "{answer_format: structured}}}.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan and its estimate (calls, tokens, cost); play nothing.")
    ] = False,
    max_cost: MaxCostOpt = None,
    no_cache: NoCacheOpt = False,
    prices: PricesOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default `fingerprint_<timestamp>`).")] = None,
    overwrite: OverwriteOpt = False,
    results: ResultsOpt = None,
) -> None:
    """Fingerprint a model or a strategy as Axelrod 4.14's AshlockFingerprint and TransitiveFingerprint do.

    Ashlock: the player's mean payoff per round against a Tit for Tat probe that cooperates outright with
    probability x and defects with probability y (its dual where x + y >= 1), at each point of a grid. Transitive:
    the player's cooperation in each round against RAND(p) opponents, p from 0 to 1. Each probe point is its own
    condition named by the point, so a finer grid replays a coarser one's games (a model's answers from the
    cache). The calls and cost are estimated before anything runs; under --max-cost a grid estimated above it is
    refused.

    Example: `pdbench fingerprint --model openai/gpt-4o-mini --kind ashlock --step 0.5 --max-cost 1`
    (`pdbench plot latest --kind fingerprint --out fp.png` draws it)
    """
    from harness.cli.experiments import _dry_run_estimate, _play_built_in, _print_plan
    from harness.cli.play import EngineFlags
    from harness.config.presets.fingerprint import FingerprintKind, Grid, fingerprint_config, grid

    try:
        which = FingerprintKind(kind)
    except ValueError:
        raise ConfigError(f"--kind is ashlock or transitive; got {kind!r}") from None
    the_grid = grid(which, step=step, points=grid_points)
    subject = _subject(model, strategy, base_url, model_settings)
    flags = EngineFlags(max_cost, no_cache, prices)
    if max_cost is not None:  # before the grid's config is built: a fine grid's takes a while
        one_point = Grid(which, 1)  # every point plays the same games: its estimate, times the points
        single = fingerprint_config(subject, one_point, rounds=rounds, repetitions=repetitions, seed=seed)
        _refuse_grid_over_budget(single, the_grid, flags, max_cost)
    config = fingerprint_config(subject, the_grid, rounds=rounds, repetitions=repetitions, seed=seed)
    if dry_run:
        from pathlib import Path

        from harness.config.run_settings import results_dir

        folder = results_dir(results, config)
        out.print(f"Fingerprint ({which.value}): {the_grid.describe()}, {repetitions} × {rounds} rounds each")
        _print_plan(Path(f"pdbench fingerprint --kind {which.value}"), config, None, folder, run_id)
        _dry_run_estimate(config, None, folder, flags)
        return
    _play_built_in(config, "fingerprint", results, run_id, overwrite, flags)


def _subject(
    model: str | None, strategy: str | None, base_url: str | None, settings_file: Path | None = None
) -> dict[str, object]:
    """The fingerprinted player as an agent: a model or a strategy (with its parameters), exactly one; a model
    with its settings from ``--model-settings`` (checked with the whole config, as an experiment file's agent)."""
    if (model is None) == (strategy is None):
        raise ConfigError(
            "give the player to fingerprint: --model provider/model (e.g. mock/tft) or --strategy NAME (e.g. TFT), "
            "one of them"
        )
    if strategy is not None:
        if base_url is not None or settings_file is not None:
            raise ConfigError(
                "--base-url and --model-settings are a model's; a strategy plays on this machine: leave them out"
            )
        from harness.players.strategies.registry import parse_spec

        spec = parse_spec(strategy)
        return {"policy": spec.name, **spec.params_dict()}
    assert model is not None  # exactly one of the two, checked above
    agent: dict[str, object] = {"model": model}
    if settings_file is not None:
        from harness.config.loading import load_model_settings

        every = load_model_settings(settings_file)
        mine = every.get(model)
        if not isinstance(mine, dict) or set(every) != {model}:
            raise ConfigError(
                f"{settings_file} must map the fingerprinted model, and only it, to its settings, e.g. "
                f"{{{model}: {{temperature: 0, prompts: {{answer_format: structured}}}}}}; "
                f"it names {', '.join(map(str, every))}"
            )
        agent.update({k: v for k, v in mine.items() if k != "model"})
    if base_url is not None:
        agent["base_url"] = base_url
    return agent


def _refuse_grid_over_budget(single: ExperimentConfig, the_grid: Grid, flags: EngineFlags, max_cost: float) -> None:
    """One paragraph before anything runs when the grid's estimated cost exceeds ``--max-cost``, naming the finest
    grid that fits. ``single`` is the fingerprint at one probe point: every point plays the same games (the same
    player, rounds and repetitions; the probe's moves are not in the player's prompts before they are played), so the
    grid's estimate is the point's times the number of points, at once however fine the grid."""
    from harness.calls.pricing import PriceTable
    from harness.config.presets.fingerprint import FingerprintKind
    from harness.config.run_settings import results_dir
    from harness.engine.estimate import estimate

    if max_cost == 0:
        return
    table = PriceTable.load(*flags.options(results_dir(None, single)).prices)
    estimates = estimate(single)
    per_point = sum(c for est in estimates if (c := est.cost(table, est.tier, cached=True)) is not None)
    points = len(the_grid.points)
    total = per_point * points
    if total <= max_cost:
        return
    calls = sum(est.calls for est in estimates) * points
    square = the_grid.kind is FingerprintKind.ASHLOCK
    fits = max((n for n in range(2, the_grid.axis) if (n * n if square else n) * per_point <= max_cost), default=None)
    advice = (
        f"--grid {fits} ({fits * fits if square else fits} points) fits"
        if fits is not None
        else "no grid of 2 or more points per axis fits at these rounds and repetitions"
    )
    raise ConfigError(
        f"this {the_grid.kind.value} fingerprint, {the_grid.describe()} ({points} points × "
        f"{single.experiment.replicates} repetitions, {calls:,.0f} model calls), is estimated at ${total:,.4f}, "
        f"above --max-cost ${max_cost:g}; nothing was played. {advice[0].upper()}{advice[1:]}; fewer --repetitions "
        "or --rounds also cost less, and --dry-run shows the estimate."
    )
