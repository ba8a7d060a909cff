"""Round-robin tournaments of classic strategies and models, expressed as an ordinary experiment config.

A tournament is just an experiment whose conditions are every unordered pair of players
(self-play included unless asked otherwise: Axelrod's tournaments play it too, and as they do,
the leaderboard leaves it out of scores, wins and ranking); it is stored and queried like any
other run, and its leaderboard is the ``tournament`` SQL view.

A player is a strategy name (``TFT``, any case) or a model named ``provider/model``
(``mock/tft``, ``openai/gpt-4o-mini``): a slash is what tells them apart, since no strategy
name has one and every model name does. Model players become ``{"model": name}`` agents,
checked by the same config validation as a YAML file's.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from harness.agents.strategies import STRATEGIES
from harness.config import ExperimentConfig, GameOptions, ModelAgentConfig, options_config
from harness.errors import ConfigError

DEFAULT_PLAYERS = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")


def is_model(player: str) -> bool:
    """A model player is named ``provider/model``; strategy names never contain a slash."""
    return "/" in player


def player_agent(player: str) -> dict[str, Any]:
    """The config agent of one player: ``{"model": ...}`` for a model, ``{"policy": ...}`` for a strategy."""
    name = player.strip()
    return {"model": name} if is_model(name) else {"policy": name}


def _identity(player: str) -> str:
    """What makes two players the same: strategy names ignore case, model names do not (``mock/TFT`` is
    not ``mock/tft``)."""
    name = player.strip()
    return name if is_model(name) else name.upper()


def _model_problem(name: str) -> str | None:
    """Why ``name`` is not a usable model name (the config's own check), once per model rather than
    once per condition it would appear in."""
    try:
        ModelAgentConfig.model_validate({"model": name})
    except ValidationError as exc:
        error = exc.errors()[0]
        cause = error.get("ctx", {}).get("error")
        return str(cause) if cause is not None else f"{name!r}: {error['msg']}"
    return None


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
    """The experiment config of a round robin among ``players`` (strategies and ``provider/model`` names);
    validated like a YAML file, so a bad model name fails here with the config's own message."""
    if not players:
        raise ConfigError("a tournament needs players: name at least one strategy (e.g. TFT) or model (e.g. mock/tft)")
    unknown = [p for p in players if not is_model(p) and p.strip().upper() not in STRATEGIES]
    if unknown:
        raise ConfigError(
            f"--players: unknown strateg{'ies' if len(unknown) > 1 else 'y'} {', '.join(map(repr, unknown))}; "
            f"known strategies: {', '.join(STRATEGIES)} (a model is named provider/model, e.g. mock/tft)"
        )
    bad_models = [
        problem for p in dict.fromkeys(p.strip() for p in players if is_model(p)) if (problem := _model_problem(p))
    ]
    if bad_models:
        raise ConfigError("--players: some model names are not usable:", bad_models)
    seen: set[str] = set()
    for p in players:
        if _identity(p) in seen:
            what = "a model" if is_model(p) else "a strategy"
            raise ConfigError(f"--players lists {what} twice: {', '.join(players)}")
        seen.add(_identity(p))
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i if self_play else i + 1 :]]
    if not pairs:
        raise ConfigError("a tournament without self-play needs at least two players")
    conditions = [{"agent_a": player_agent(a), "agent_b": player_agent(b)} for a, b in pairs]
    options = GameOptions(rounds, stop_prob, max_rounds, replicates, noise, seed, payoff_matrix)
    return options_config("tournament", conditions, options, default_rounds=200, source="the tournament options",
                          fix_hint="see `pdbench tournament --help`")  # fmt: skip
