"""Round-robin tournaments of classic strategies and models, expressed as an ordinary experiment config.

A tournament is just an experiment whose conditions are every unordered pair of players
(self-play included unless asked otherwise: Axelrod's tournaments play it too, and as they do,
the leaderboard leaves it out of scores, wins and ranking); it is stored and queried like any
other run, and its leaderboard is the ``tournament`` SQL view.

Players are named and checked as in :mod:`harness.config.presets.players`; model players become ``{"model": name}``
agents, checked by the same config validation as a YAML file's.
"""

from __future__ import annotations

from typing import Any

from harness.config import ExperimentConfig, GameOptions, options_config
from harness.config.presets.players import check_players, player_agent
from harness.errors import ConfigError


def tournament_config(
    players: list[str],
    *,
    rounds: int | None = None,
    stop_prob: float | None = None,
    max_rounds: int | None = None,
    replicates: int = 1,
    noise: float = 0.0,
    observation_noise: float = 0.0,
    seed: int = 0,
    self_play: bool = True,
    payoff_matrix: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """The experiment config of a round robin among ``players`` (strategies and ``provider/model`` names);
    validated like a YAML file, so a bad model name fails here with the config's own message."""
    if not players:
        raise ConfigError("a tournament needs players: name at least one strategy (e.g. TFT) or model (e.g. mock/tft)")
    check_players(players, option="--players", models=True)
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i if self_play else i + 1 :]]
    if not pairs:
        raise ConfigError("a tournament without self-play needs at least two players")
    conditions = [{"agent_a": player_agent(a), "agent_b": player_agent(b)} for a, b in pairs]
    options = GameOptions(rounds, stop_prob, max_rounds, replicates, noise, seed, payoff_matrix, observation_noise)
    return options_config(
        "tournament",
        conditions,
        options,
        default_rounds=200,
        source="the tournament options",
        fix_hint="see `pdbench tournament --help`",
    )
