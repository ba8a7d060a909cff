"""The players of the built-in experiments (``pdbench eval``'s opponents, ``pdbench tournament``'s players,
the dashboard's tournament), named on one comma-separated line and checked in one place.

A player is a strategy name (``TFT``, any case) or a model named ``provider/model``
(``mock/tft``, ``openai/gpt-4o-mini``): a slash is what tells them apart, since no strategy
name has one and every model name does.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from harness.config import ModelAgentConfig
from harness.errors import ConfigError
from harness.players.strategies.registry import canonical_name, unknown_strategy


def is_model(player: str) -> bool:
    """A model player is named ``provider/model``; strategy names never contain a slash."""
    return "/" in player


def player_agent(player: str) -> dict[str, Any]:
    """The config agent of one player: ``{"model": ...}`` for a model, ``{"policy": ...}`` for a strategy."""
    name = player.strip()
    return {"model": name} if is_model(name) else {"policy": name}


def split_players(text: str) -> list[str]:
    """The items of a comma-separated list of players, trimmed, blanks dropped. A comma inside parentheses
    separates a strategy's parameters (``GTFT(p=0.3), RAND(p=0.7,x=1)``), not two players."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def parse_players(text: str, option: str = "--players") -> list[str]:
    """The players of a comma-separated option, blanks dropped; at least one. A strategy named by an alias
    (``Copycat``, ``TitForTat``) is given by its short name (``TFT``), so it plays and is stored as TFT is."""
    players = split_players(text)
    if not players:
        raise ConfigError(f"{option} needs at least one strategy name, e.g. {option} ALLC,ALLD,TFT")
    return [p if is_model(p) else canonical_name(p) or p for p in players]


def check_players(players: list[str], *, option: str, models: bool) -> None:
    """Refuse, before any config is built, an unknown strategy, an unusable model name (when ``models`` are
    allowed at all) and a player named twice; the message names the option the players came from."""
    unknown = [p for p in players if not (models and is_model(p)) and canonical_name(p) is None]
    if unknown:
        hint = " (a model is named provider/model, e.g. mock/tft)" if models else ""
        raise ConfigError(f"{option}: {unknown_strategy(*unknown)}{hint}")
    if models:
        names = dict.fromkeys(p.strip() for p in players if is_model(p))
        bad = [problem for name in names if (problem := _model_problem(name))]
        if bad:
            raise ConfigError(f"{option}: some model names are not usable:", bad)
    seen: set[str] = set()
    for p in players:
        if _identity(p) in seen:
            raise ConfigError(
                f"{option} lists {'a model' if is_model(p) else 'a strategy'} twice: {', '.join(players)}"
            )
        seen.add(_identity(p))


def _identity(player: str) -> str:
    """What makes two players the same: strategy names ignore case, model names do not (``mock/TFT`` is
    not ``mock/tft``)."""
    name = player.strip()
    return name if is_model(name) else canonical_name(name) or name.upper()


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
