"""Round-robin tournaments of classic strategies, expressed as an ordinary experiment config.

A tournament is just an experiment whose conditions are every unordered pair of players
(self-play included, as in Axelrod's tournaments, unless asked otherwise); it is stored
and queried like any other run, and its leaderboard is the ``tournament`` SQL view.
"""

from __future__ import annotations

from typing import Any

from harness.agents.strategies import STRATEGIES
from harness.config import ExperimentConfig, horizon_options, parse_experiment
from harness.errors import ConfigError

DEFAULT_PLAYERS = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")


def parse_players(text: str, option: str = "--players") -> list[str]:
    players = [p.strip() for p in text.split(",") if p.strip()]
    if not players:
        raise ConfigError(f"{option} needs at least one strategy name, e.g. {option} ALLC,ALLD,TFT")
    return players


def tournament_config(
    players: list[str],
    *,
    rounds: int | None = None,
    stop_prob: float | None = None,
    max_rounds: int | None = None,
    replicates: int = 1,
    noise: float = 0.0,
    seed: int = 0,
    self_play: bool = True,
    payoff_matrix: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """The experiment config of a round robin among ``players``; validated like a YAML file."""
    unknown = [p for p in players if p.strip().upper() not in STRATEGIES]
    if unknown:
        raise ConfigError(
            f"--players: unknown strateg{'ies' if len(unknown) > 1 else 'y'} {', '.join(map(repr, unknown))}; "
            f"known strategies: {', '.join(STRATEGIES)}"
        )
    if len(set(p.upper() for p in players)) != len(players):
        raise ConfigError(f"--players lists a strategy twice: {', '.join(players)}")
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i if self_play else i + 1 :]]
    if not pairs:
        raise ConfigError("a tournament without self-play needs at least two players")
    horizon = horizon_options(rounds, stop_prob, max_rounds, default_rounds=200)
    data: dict[str, Any] = {
        "kind": "tournament",
        "run": {"seed": seed},
        "horizon": horizon,
        "noise": {"prob": noise},
        "experiment": {
            "replicates": replicates,
            "conditions": [{"agent_a": {"policy": a}, "agent_b": {"policy": b}} for a, b in pairs],
        },
    }
    if payoff_matrix is not None:
        data["game"] = {"payoff_matrix": payoff_matrix}
    return parse_experiment(data, source="the tournament options", fix_hint="see `pdbench tournament --help`")
