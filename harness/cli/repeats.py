"""Whether a config's replicates will repeat one game, said before the run (`pdbench eval`).

A condition whose both seats are deterministic, with no noise and a fixed number of rounds, plays the same game
in every replicate: its replicates measure one game again, not the player's spread, and the scorecard then shows
the condition as "all alike", without an interval. Said before the run, so that a researcher can add noise, a
temperature or shuffled options, or use one replicate, rather than pay for copies.
"""

from __future__ import annotations

from harness.config.experiment import ExperimentConfig
from harness.config.plan import ConditionPlan, ModelPlan, PlayerPlan, StrategyPlan, condition_plans
from harness.providers.mock import BEHAVIOURS, MockOptions
from harness.providers.registry import is_offline

# Mock behaviours that answer the same to the same prompt (``random`` draws; the others draw only for their
# unparseable, error_rate and confused options).
_FIXED_MOCKS = tuple(b for b in BEHAVIOURS if b != "random")


def _deterministic(player: PlayerPlan) -> bool:
    if isinstance(player, StrategyPlan):
        return not player.spec.cls.stochastic
    assert isinstance(player, ModelPlan)
    agent = player.config
    if agent.prompts.shuffle_options:
        return False
    if is_offline(agent.model):
        opts = MockOptions.parse(agent.model.partition("/")[2])
        return opts.behaviour in _FIXED_MOCKS and not (opts.unparseable or opts.error_rate or opts.confused)
    return agent.temperature == 0


def _repeats(cond: ConditionPlan) -> bool:
    return (
        cond.noise == 0
        and cond.observation_noise == 0
        and not cond.horizon.random_length
        and _deterministic(cond.player_a)
        and _deterministic(cond.player_b)
    )


def repeated_conditions(config: ExperimentConfig) -> list[str]:
    """The conditions whose replicates will all be one game (none when there is one replicate)."""
    if config.experiment.replicates < 2:
        return []
    return [c.name for c in condition_plans(config) if _repeats(c)]


def repeats_note(config: ExperimentConfig) -> str | None:
    """The note `pdbench eval` prints before the run, or None."""
    repeated = repeated_conditions(config)
    if not repeated:
        return None
    which = "every condition" if len(repeated) == len(config.experiment.conditions) else ", ".join(repeated)
    return (
        f"note: the {config.experiment.replicates} replicates of {which} will repeat one game (a deterministic "
        "player: temperature 0 or a fixed mock, against deterministic strategies, with no noise, no shuffled "
        "options and a fixed number of rounds); they measure that game again, not the player's spread, and the "
        "scorecard shows them as 'all alike'. For a spread: --noise, a temperature above 0, or shuffled options."
    )
