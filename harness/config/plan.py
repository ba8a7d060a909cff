"""From a validated config to the games to play: lazily, so a huge plan costs no memory.

Every game gets a seed derived from the run seed, its condition name and its replicate
number, and each source of randomness in the game (horizon length, noise, each player)
draws from its own stream derived from that seed. So a game's result does not depend on
which other games are in the run, in what order they are played, or how many at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.config import ConditionConfig, ExperimentConfig, ModelAgentConfig, PolicyAgentConfig, plan_size_problem
from harness.errors import ConfigError
from harness.game.horizon import Horizon
from harness.game.rules import PayoffMatrix
from harness.game.seeds import derive_seed
from harness.players.strategies import StrategySpec

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, slots=True)
class StrategyPlan:
    """A seat played by a classic strategy; ``params_json`` is its parameters as stored in
    ``games.params_a``/``params_b`` (None if it has none), made once with the plan, not once a game."""

    name: str
    spec: StrategySpec
    params_json: str | None


@dataclass(frozen=True, slots=True)
class ModelPlan:
    """A seat played by a language model, with everything needed to talk to it."""

    name: str
    config: ModelAgentConfig

    @property
    def params_json(self) -> str:
        """The model's settings as stored in ``games.params_a``/``params_b``; also what tells two model
        configurations apart (see :class:`harness.engine.scheduler.ModelPlayers`)."""
        return json.dumps(self.config.resolved(), sort_keys=True)


PlayerPlan = StrategyPlan | ModelPlan
"""A seat's player: a strategy or a model."""


def _params_json(spec: StrategySpec) -> str | None:
    params = spec.params_dict()
    return json.dumps(params, sort_keys=True) if params else None


def _player(agent: PolicyAgentConfig | ModelAgentConfig) -> PlayerPlan:
    if isinstance(agent, ModelAgentConfig):
        return ModelPlan(agent.label, agent)
    return StrategyPlan(agent.label, agent.spec, _params_json(agent.spec))


@dataclass(frozen=True, slots=True)
class ConditionPlan:
    """One condition with everything a game of it needs, resolved once."""

    index: int
    name: str
    player_a: PlayerPlan
    player_b: PlayerPlan
    game: PayoffMatrix
    horizon: Horizon
    noise: float

    @property
    def model_seats(self) -> int:
        """How many of the two seats a model plays (0, 1 or 2)."""
        return isinstance(self.player_a, ModelPlan) + isinstance(self.player_b, ModelPlan)

    def strategies(self) -> tuple[StrategySpec, StrategySpec]:
        """Both seats' strategies, for the strategy-only path; a model seat there is a bug, not a user error."""
        a, b = self.player_a, self.player_b
        if not isinstance(a, StrategyPlan) or not isinstance(b, StrategyPlan):
            raise TypeError(f"condition {self.name!r} has a model player; it cannot be played as strategies only")
        return a.spec, b.spec


@dataclass(frozen=True, slots=True)
class GamePlan:
    game_id: int
    condition: ConditionPlan
    replicate: int
    seed: int


def condition_plans(config: ExperimentConfig) -> list[ConditionPlan]:
    out = []
    for i, cond in enumerate(config.experiment.conditions):
        out.append(_condition_plan(config, i, cond))
    return out


def _condition_plan(config: ExperimentConfig, index: int, cond: ConditionConfig) -> ConditionPlan:
    game = (cond.game or config.game).payoff_matrix
    horizon = (cond.horizon or config.horizon).to_horizon()
    noise = (cond.noise or config.noise).prob
    assert cond.name is not None
    return ConditionPlan(
        index=index,
        name=cond.name,
        player_a=_player(cond.agent_a),
        player_b=_player(cond.agent_b),
        game=game,
        horizon=horizon,
        noise=noise,
    )


def iter_games(config: ExperimentConfig, replicates: int | None = None) -> Iterator[GamePlan]:
    """Every (condition, replicate) game, replicate by replicate: replicate 0 of every condition,
    then replicate 1, ... So a run stopped early has a balanced sample of every condition rather
    than all of the first ones. ``game_id`` counts from 0 in this order."""
    reps = replicates or config.experiment.replicates
    seed = config.run.seed
    conds = condition_plans(config)
    game_id = 0
    for rep in range(reps):
        for cond in conds:
            yield GamePlan(game_id=game_id, condition=cond, replicate=rep, seed=derive_seed(seed, cond.name, rep))
            game_id += 1


def skip_games(plans: Iterator[GamePlan], finished: np.ndarray) -> Iterator[GamePlan]:
    """The plans whose game is not in ``finished`` (game ids in ascending order, as the plan has them), one at
    a time: a merge of two sorted sequences, so a resume keeps 4 bytes per finished game in memory rather
    than a Python set of them, and the plan is still never built."""
    i, n = 0, len(finished)
    for plan in plans:
        while i < n and finished[i] < plan.game_id:
            i += 1
        if i < n and finished[i] == plan.game_id:
            continue
        yield plan


@dataclass(frozen=True, slots=True)
class PlanSummary:
    conditions: int
    replicates: int
    games: int
    expected_rounds: float
    model_calls: float
    fixed_rounds: bool

    @property
    def has_models(self) -> bool:
        return self.model_calls > 0


def summarize(config: ExperimentConfig, replicates: int | None = None) -> PlanSummary:
    """Sizes of the plan, for ``--dry-run``: games, expected rounds, expected model calls. Refuses a plan
    too large to play (see :func:`harness.config.plan_size_problem`), e.g. one that ``--replicates`` made so."""
    problem = plan_size_problem(config, replicates)
    if problem:
        raise ConfigError(f"{problem}.")
    reps = replicates or config.experiment.replicates
    conds = condition_plans(config)
    rounds = sum(c.horizon.expected_length() for c in conds) * reps
    seats = sum(c.horizon.expected_length() * c.model_seats for c in conds) * reps
    return PlanSummary(
        conditions=len(conds),
        replicates=reps,
        games=len(conds) * reps,
        expected_rounds=rounds,
        model_calls=seats,  # at least one call per model seat per round; re-asks and retries add more
        fixed_rounds=not any(c.horizon.random_length for c in conds),
    )
