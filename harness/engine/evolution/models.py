"""Language models in a population: their pairwise payoffs come from real games played through the engine.

A population with a model (``mock/tft``, ``openai/gpt-4o-mini``) cannot be simulated move by move, so before it
evolves, every pair of its distinct players (self-play included: two individuals of one type meet too) plays
``replicates`` games in an ordinary tournament run: cached through the shared response cache, recorded, and
resumable like any run. The mean match payoff of each pair (the ``matchups`` view) is the payoff table the
dynamics read, and the evolution run names the tournament run it came from.

The tournament's run id is the evolution's with ``_payoffs`` appended. Started again under the same run id, a
tournament that is complete is read as it is, one that was interrupted is resumed, and a new one (another run
id) is answered from the response cache: the same population runs again without a request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config import ExperimentConfig, GameOptions, options_config
from harness.config.engine_options import EngineOptions
from harness.engine.interrupts import StopFlag
from harness.engine.runner import RunResult, resume_run, run_experiment
from harness.errors import ConfigError, StoreError
from harness.evolution import EvolutionSettings, PayoffSource, PayoffTable
from harness.evolution.settings import is_model
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.states import RunStatus
from harness.store.evolution_writer import matchup_means, stored_run
from harness.store.run_file import run_path

if TYPE_CHECKING:
    from harness.engine.model_games import MonitorFactory

SUFFIX = "_payoffs"


def payoff_run_id(run_id: str) -> str:
    """The tournament run that gives the payoffs of evolution run ``run_id`` (a valid run id itself)."""
    from harness.config import check_run_id

    return check_run_id(f"{run_id}{SUFFIX}")


def agent_config(player: str, settings: EvolutionSettings) -> dict[str, Any]:
    """A player as the payoff tournament's (and the phase runs') config writes it: a model with its
    ``model_settings`` (prompts, temperature, max_tokens, parse, ...), or a strategy with its parameters, named by
    its label."""
    if is_model(player):
        return settings.model_agent(player)
    spec = settings.specs[settings.players.index(player)]
    assert spec is not None
    return {"policy": spec.name, **spec.params_dict(), "name": player}


def payoff_tournament(settings: EvolutionSettings) -> ExperimentConfig:
    """The round robin of the population's players (self-play included), ``settings.replicates`` games a pair,
    in the population's game: its horizon, noise, payoff matrix and seed."""
    players = settings.players
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i:]]
    conditions = [{"agent_a": agent_config(a, settings), "agent_b": agent_config(b, settings)} for a, b in pairs]
    return population_games(settings, conditions, settings.replicates)


def population_games(
    settings: EvolutionSettings, conditions: list[dict[str, Any]], replicates: int
) -> ExperimentConfig:
    """A tournament of ``conditions`` in the population's game (its horizon, noise, payoff matrix and seed),
    ``replicates`` games each."""
    rounds: int | None
    stop_prob: float | None
    max_rounds: int | None
    match settings.game_horizon:
        case FixedHorizon(n_rounds):
            rounds, stop_prob, max_rounds = n_rounds, None, None
        case GeometricHorizon(p, cap):
            rounds, stop_prob, max_rounds = None, p, cap
    options = GameOptions(
        rounds=rounds,
        stop_prob=stop_prob,
        max_rounds=max_rounds,
        replicates=replicates,
        noise=settings.noise,
        observation_noise=settings.observation_noise,
        seed=settings.seed,
        payoff_matrix=settings.payoff_matrix.to_mapping(),
    )
    return options_config(
        "tournament",
        conditions,
        options,
        default_rounds=200,
        source="the evolution settings",
        fix_hint="see `pdbench evolve --help`",
    )


def play_payoffs(
    settings: EvolutionSettings,
    *,
    results_dir: Path,
    run_id: str,
    engine: EngineOptions | None = None,
    stop: StopFlag | None = None,
    monitor: MonitorFactory | None = None,
    overwrite: bool = False,
) -> tuple[RunResult | None, str]:
    """Play (or resume, or reuse) the tournament ``run_id`` that gives the payoffs of ``settings``; returns its
    result (None when a complete one was reused) and its run id. Check the models' keys first
    (:func:`harness.engine.preflight.check_models` on :func:`payoff_tournament`)."""
    config = payoff_tournament(settings)
    result = play_stored(
        config,
        "this population's payoff games",
        results_dir=results_dir,
        run_id=run_id,
        engine=engine,
        stop=stop,
        monitor=monitor,
        overwrite=overwrite,
    )
    return result, run_id


def play_stored(
    config: ExperimentConfig,
    what: str,
    *,
    results_dir: Path,
    run_id: str,
    engine: EngineOptions | None = None,
    stop: StopFlag | None = None,
    monitor: MonitorFactory | None = None,
    overwrite: bool = False,
) -> RunResult | None:
    """Play run ``run_id`` of ``config`` (``what`` its games are, for an error), or resume it if it was
    interrupted, or reuse it (None) if it is complete. A stored run of other games is refused (unless
    ``overwrite``), so a run id never mixes two populations' games."""
    path = run_path(results_dir, run_id)
    if path.exists() and not overwrite:
        stored = stored_run(results_dir, run_id)
        wanted = config.resolved_dict()
        wanted["run"]["run_id"] = run_id
        if stored is None or stored[0] != "tournament" or json.loads(stored[2]) != wanted:
            raise StoreError(
                f"{path} holds other games than {what} (another population, other game settings, or not a "
                "tournament); choose another run id, or pass --overwrite to replace the evolution run and the runs "
                "it plays"
            )
        if stored[1] == RunStatus.COMPLETE.value:
            return None
        return resume_run(results_dir, run_id, stop=stop, engine=engine, monitor=monitor)
    return run_experiment(
        config, results_dir=results_dir, run_id=run_id, overwrite=overwrite, stop=stop, engine=engine, monitor=monitor
    )


def payoffs_from_run(results_dir: Path, run_id: str, settings: EvolutionSettings) -> PayoffTable:
    """The payoff table of ``settings``' players from the complete games of tournament ``run_id``: each cell the
    mean total payoff of the row player's games against the column player (the diagonal: both seats of the
    self-play games), with the number of games in ``matches`` and the mean of each game's payoff per round in
    ``rates``."""
    means = matchup_means(results_dir, run_id)
    players = tuple(settings.players)
    missing = [f"{a} against {b}" for a in players for b in players if (a, b) not in means]
    if missing:
        raise ConfigError(
            f"the payoff games of run {run_id!r} have no complete game of {', '.join(missing[:4])}"
            + (f" (and {len(missing) - 4} more pairs)" if len(missing) > 4 else "")
            + f"; see why with `pdbench report {run_id}`, then continue it with `pdbench resume {run_id} "
            "--retry-failed`"
        )
    import numpy as np

    values = np.array([[means[(a, b)][0] for b in players] for a in players], dtype=np.float64)
    matches = np.array([[means[(a, b)][1] for b in players] for a in players], dtype=np.int64)
    rates = np.array([[means[(a, b)][2] for b in players] for a in players], dtype=np.float64)
    values.setflags(write=False)
    rates.setflags(write=False)
    return PayoffTable(players, values, matches, PayoffSource.supplied, rates=rates)
