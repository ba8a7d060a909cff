"""Names users type, mapped to strategy classes; validated, reusable strategy settings."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.agents.strategies import grudger, majority, memoryone, prober, simple, titfortat
from harness.agents.strategies.base import Strategy
from harness.errors import ConfigError, UnknownStrategyError
from harness.game import PayoffMatrix

_FAMILIES = (simple, titfortat, grudger, memoryone, majority, prober)

_ALL = {cls.name: cls for family in _FAMILIES for cls in family.STRATEGIES}
# The order users see in listings: the classic panel first, then the rest by family.
_ORDER = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")
STRATEGIES: dict[str, type[Strategy]] = {
    **{name: _ALL[name] for name in _ORDER},
    **{name: cls for name, cls in _ALL.items() if name not in _ORDER},
}


def known_names() -> list[str]:
    return list(STRATEGIES)


def get_strategy(name: str) -> type[Strategy]:
    """The class for a strategy name (case-insensitive), or a clear error listing the names."""
    cls = STRATEGIES.get(name.strip().upper()) if isinstance(name, str) else None
    if cls is None:
        raise UnknownStrategyError(f"unknown strategy {name!r}; known strategies: {', '.join(STRATEGIES)}")
    return cls


@dataclass(frozen=True, slots=True)
class StrategySpec:
    """A strategy with validated parameters: built once per config, instantiated once per game."""

    cls: type[Strategy]
    params: BaseModel

    @property
    def name(self) -> str:
        return self.cls.name

    def build(self, game: PayoffMatrix, rng: random.Random) -> Strategy:
        return self.cls(self.params, game, rng)

    def params_dict(self) -> dict[str, Any]:
        return self.params.model_dump(exclude_none=True)


def make_spec(name: str, params: Mapping[str, Any] | None = None) -> StrategySpec:
    """Validate ``params`` for strategy ``name``; errors name the strategy and each bad setting."""
    cls = get_strategy(name)
    try:
        # strict: a boolean or a quoted number is not a number (``p: true`` is refused, not read as 1.0)
        validated = cls.Params.model_validate(dict(params or {}), strict=True)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"]) or "(parameters)"
            if err["type"] == "extra_forbidden":
                allowed = (
                    ", ".join(f"{k} (or {f.alias})" if f.alias else k for k, f in cls.Params.model_fields.items())
                    or "none"
                )
                problems.append(f"{cls.name} has no parameter {key!r} (parameters: {allowed})")
            else:
                problems.append(f"{cls.name}.{key}: {err['msg']}")
        raise ConfigError("; ".join(problems)) from None
    return StrategySpec(cls=cls, params=validated)
