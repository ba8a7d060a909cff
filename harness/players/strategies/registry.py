"""Names users type, mapped to strategy classes; validated, reusable strategy settings."""

from __future__ import annotations

import difflib
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import AliasChoices, BaseModel, ValidationError

from harness.errors import ConfigError, UnknownStrategyError
from harness.game.rules import PayoffMatrix
from harness.players.strategies import (
    bayesian,
    grudger,
    majority,
    memoryone,
    prober,
    probes,
    simple,
    titfortat,
    zerodeterminant,
)
from harness.players.strategies.base import Strategy

_FAMILIES = (simple, titfortat, grudger, memoryone, zerodeterminant, majority, prober, bayesian, probes)

_ALL = {cls.name: cls for family in _FAMILIES for cls in family.STRATEGIES}
# The order users see in listings: the classic panel first, then the rest by family.
_ORDER = ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")
STRATEGIES: dict[str, type[Strategy]] = {
    **{name: _ALL[name] for name in _ORDER},
    **{name: cls for name, cls in _ALL.items() if name not in _ORDER},
}


def _key(name: str) -> str:
    """How a name is looked up: case, spaces, hyphens and underscores aside (``Tit for Tat``, ``TitForTat``)."""
    return re.sub(r"[\s_-]+", "", name).upper()


ALIASES: dict[str, str] = {
    alias: cls.name
    for cls in STRATEGIES.values()
    for alias in (*cls.aliases, *([cls.axelrod_name] if cls.axelrod_name else []))
    if _key(alias) != _key(cls.name)
}
"""The other names a strategy is known by (The Evolution of Trust's characters, the Axelrod library's classes),
each to the strategy whose rules it names exactly: see each class's ``aliases`` and ``axelrod_name``."""
_BY_KEY: dict[str, str] = {
    **{_key(cls.display_name): cls.name for cls in STRATEGIES.values() if re.fullmatch(r"[\w -]+", cls.display_name)},
    **{_key(a): name for a, name in ALIASES.items()},
    **{_key(n): n for n in STRATEGIES},
}
"""Every name a strategy may be given by, looked up as :func:`_key` writes it: its short name, its aliases and
its display name (``Tit for Tat``), which is its own."""


def known_names() -> list[str]:
    return list(STRATEGIES)


def aliases_of(name: str) -> list[str]:
    """The other names strategy ``name`` is known by, as they are written, but its display name's spellings."""
    shown = _key(STRATEGIES[name].display_name)
    return [alias for alias, canonical in ALIASES.items() if canonical == name and _key(alias) != shown]


def canonical_name(name: str) -> str | None:
    """The strategy's short name (``TFT``) for a name or alias in any case (``tft``, ``Copycat``, ``TitForTat``),
    or None if it names none."""
    if not isinstance(name, str):
        return None
    exact = name.strip().upper()
    return exact if exact in STRATEGIES else _BY_KEY.get(_key(name))


def unknown_strategy(*names: object) -> str:
    """What to say of names that are no strategy's: each with the names it is closest to, then every short
    name."""
    written = {_key(n): n for n in (*STRATEGIES, *ALIASES)}
    said = []
    for name in names:
        close = (
            [k for k in difflib.get_close_matches(_key(name), list(_BY_KEY), n=3) if k in written]
            if isinstance(name, str)
            else []
        )
        said.append(f"{name!r}" + (f" (did you mean {' or '.join(written[k] for k in close)}?)" if close else ""))
    return (
        f"unknown strateg{'ies' if len(names) > 1 else 'y'} {', '.join(said)}; known strategies: "
        f"{', '.join(STRATEGIES)}, and the other names `pdbench strategies` lists (The Evolution of Trust's, "
        "the Axelrod library's)"
    )


def get_strategy(name: str) -> type[Strategy]:
    """The class for a strategy name or alias (any case), or a clear error listing the names."""
    canonical = canonical_name(name)
    if canonical is None:
        raise UnknownStrategyError(unknown_strategy(name))
    return STRATEGIES[canonical]


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
        """The settings given, as plain JSON values (an enum setting as its text); a setting left
        at None, its "classic value" default, is not listed, so runs stored before it existed match."""
        return self.params.model_dump(mode="json", exclude_none=True)


def make_spec(name: str, params: Mapping[str, Any] | None = None) -> StrategySpec:
    """Validate ``params`` for strategy ``name``; errors name the strategy and each bad setting."""
    cls = get_strategy(name)
    given = dict(params or {})
    for old, new in cls.renamed_params.items():
        if old in given:
            if new in given:
                raise ConfigError(f"{cls.name} is given both {new} and {old}, its former name: give {new} alone")
            given[new] = given.pop(old)  # the warning is the config's (see renamed_parameters)
    try:
        # strict: a boolean or a quoted number is not a number (``p: true`` is refused, not read as 1.0)
        validated = cls.Params.model_validate(given, strict=True)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"]) or "(parameters)"
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(_parameter_names(cls.Params)) or "none"
                problems.append(f"{cls.name} has no parameter {key!r} (parameters: {allowed})")
            else:
                problems.append(f"{cls.name}.{key}: {err['msg']}")
        raise ConfigError("; ".join(problems)) from None
    return StrategySpec(cls=cls, params=validated)


def renamed_parameters(name: str, params: Mapping[str, Any]) -> list[str]:
    """A warning for each parameter of strategy ``name`` given by its former name (read under its name)."""
    cls = get_strategy(name)
    return [
        f"{old} is {cls.name}'s former name for {new}: read as {new}: {setting_text(params[old])}; write {new}"
        for old, new in cls.renamed_params.items()
        if old in params
    ]


def _parameter_names(params: type[BaseModel]) -> list[str]:
    """Each parameter with the other names it may be given by: ``generous_prob (or p)``."""
    out = []
    for key, field in params.model_fields.items():
        others = [field.alias] if field.alias else []
        if isinstance(field.validation_alias, AliasChoices):
            others += [c for c in field.validation_alias.choices if isinstance(c, str) and c != key]
        out.append(f"{key} (or {', '.join(others)})" if others else key)
    return out


_SPEC_TEXT = re.compile(r"^\s*([A-Za-z0-9_][A-Za-z0-9_ -]*?)\s*(?:\((.*)\))?\s*$", re.DOTALL)  # names: Always Cheat
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


def parse_spec(text: str) -> StrategySpec:
    """A strategy as users type it on one line: ``TFT``, ``gtft(p=0.3)``, ``RAND(p=0.7)``, ``DONCE(round=3)``.

    The parameters are ``key=value`` pairs separated by commas; a value is read as a whole number, a
    decimal number, ``true``/``false`` or ``none``, else kept as text (and then refused by the strategy's
    own validation, with its name). Raises :class:`ConfigError` naming what to write instead.
    """
    match = _SPEC_TEXT.match(text) if isinstance(text, str) else None
    if match is None:
        raise ConfigError(
            f"{text!r} is not a strategy as written on one line: write its name, with its parameters in "
            "parentheses if any, e.g. TFT, GTFT(p=0.3) or RAND(p=0.7)"
        )
    name, inside = match.group(1), match.group(2)
    params: dict[str, Any] = {}
    items = inside.split(",") if inside is not None and inside.strip() else []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(
                f"{text!r}: the parameters in parentheses must be key=value pairs separated by commas, "
                f"e.g. {name.upper()}(p=0.3); {item.strip()!r} is not one"
            )
        if key.strip() in params:
            raise ConfigError(f"{text!r} gives the parameter {key.strip()!r} twice: give it once")
        params[key.strip()] = _value(value.strip())
    return make_spec(name, params)


def _value(text: str) -> object:
    if _INTEGER.match(text):
        return int(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def spec_label(spec: StrategySpec) -> str:
    """The strategy as one writes it, with every setting that differs from its default:
    ``GTFT(generous_prob=0.3)``, ``TFT``; :func:`parse_spec` reads it back to the same spec."""
    settings = spec.params.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if not settings:
        return spec.name
    return f"{spec.name}({','.join(f'{k}={setting_text(v)}' for k, v in settings.items())})"


def setting_text(value: object) -> str:
    """A setting as written in a name: exact (two different values never print alike), 3 rather than 3.0."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)
