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
from harness.players.model.settings import ComprehensionSettings
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
class Work:
    """What a game asks of the run, counted as the live progress and the plan count it: rounds, model moves
    (one call per model seat a round) and comprehension questions (one call each), re-asks and retries apart
    (they depend on the answers). Expected values where a geometric game's length is not known yet."""

    rounds: float = 0.0
    moves: float = 0.0
    questions: float = 0.0

    @property
    def calls(self) -> float:
        """The model calls: the moves and the questions."""
        return self.moves + self.questions

    def __add__(self, other: Work) -> Work:
        return Work(self.rounds + other.rounds, self.moves + other.moves, self.questions + other.questions)

    def __sub__(self, other: Work) -> Work:
        return Work(self.rounds - other.rounds, self.moves - other.moves, self.questions - other.questions)

    def times(self, n: float) -> Work:
        return Work(self.rounds * n, self.moves * n, self.questions * n)


@dataclass(frozen=True, slots=True)
class ConditionPlan:
    """One condition with everything a game of it needs, resolved once."""

    index: int
    name: str
    player_a: PlayerPlan
    player_b: PlayerPlan
    game: PayoffMatrix
    horizon: Horizon
    noise: float  # execution noise
    observation_noise: float = 0.0

    @property
    def model_seats(self) -> int:
        """How many of the two seats a model plays (0, 1 or 2)."""
        return isinstance(self.player_a, ModelPlan) + isinstance(self.player_b, ModelPlan)

    def _checks(self) -> list[ComprehensionSettings]:
        """The comprehension checks of the model seats that ask one."""
        seats = (self.player_a, self.player_b)
        return [p.config.comprehension for p in seats if isinstance(p, ModelPlan) and p.config.comprehension]

    def work_at(self, round: int) -> Work:
        """Round ``round`` of a game: itself, a move per model seat, and the questions asked before the moves."""
        return Work(1.0, float(self.model_seats), float(sum(c.asked_at(round) for c in self._checks())))

    def work_through(self, rounds: int) -> Work:
        """Rounds 1 to ``rounds`` of a game, exactly."""
        questions = sum(c.asked_at(r) for c in self._checks() for r in c.rounds if r <= rounds)
        return Work(float(rounds), float(rounds * self.model_seats), float(questions))

    def expected_left(self, played: int = 0) -> Work:
        """What a game that has played ``played`` rounds and not ended is still expected to ask: a whole game's
        worth before its first round; each round after ``played`` weighted by its chance of being played
        (:meth:`~harness.game.horizon.FixedHorizon.reach`; 1 or 0 in a fixed game)."""
        rounds = self.horizon.expected_remaining(played)
        questions = sum(
            self.horizon.reach(r, played) * c.asked_at(r) for c in self._checks() for r in c.rounds if r > played
        )
        return Work(rounds, rounds * self.model_seats, questions)

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
    noise_section = cond.noise or config.noise
    assert cond.name is not None
    return ConditionPlan(
        index=index,
        name=cond.name,
        player_a=_player(cond.agent_a),
        player_b=_player(cond.agent_b),
        game=game,
        horizon=horizon,
        noise=noise_section.execution,
        observation_noise=noise_section.observation,
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
    model_calls: float  # moves and comprehension questions; re-asks and retries add more
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
    work = sum((c.expected_left() for c in conds), Work()).times(reps)
    return PlanSummary(
        conditions=len(conds),
        replicates=reps,
        games=len(conds) * reps,
        expected_rounds=work.rounds,
        model_calls=work.calls,
        fixed_rounds=not any(c.horizon.random_length for c in conds),
    )
