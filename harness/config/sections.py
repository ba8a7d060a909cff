"""The sections of an experiment config that are plain settings (run, game, horizon, noise, metrics), and
the bounds every number in a config is held to."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon, HorizonKind
from harness.game.rules import MAX_ROUNDS, PayoffMatrix
from harness.util.bounds import MAX_GAMES as MAX_GAMES
from harness.util.bounds import MAX_PLAN_ROUNDS as MAX_PLAN_ROUNDS
from harness.util.bounds import MAX_REPLICATES as MAX_REPLICATES
from harness.util.bounds import MAX_SEED as MAX_SEED

DEFAULT_ROUNDS = 50  # a fixed horizon's rounds when n_rounds is left out
MIN_UNCAPPED_STOP_PROB = 1e-4  # below this, a geometric game may exceed MAX_ROUNDS: ask for max_rounds
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"


def printable(value: str) -> str:
    """``value`` if every character of it shows as itself. Names (conditions, players, models) are printed
    on the terminal, in reports and in the dashboard: an escape sequence in one would clear the screen or
    rewrite what is shown, a line break or an invisible character would make two names look alike. They
    are refused where they enter, so no printer needs to guard against them."""
    for i, char in enumerate(value, start=1):
        if not char.isprintable():
            what = {"\n": "a line break", "\r": "a line break", "\t": "a tab"}.get(char)
            if what is None:
                kind = "a space other than ' '" if unicodedata.category(char) == "Zs" else "a control character"
                what = f"{kind} (U+{ord(char):04X})"
            raise ValueError(
                f"{value!r} has {what} at position {i}: a name is shown as it is written, so use "
                "visible characters and plain spaces"
            )
    return value


Label = Annotated[str, AfterValidator(printable)]
"""A name shown to users (a condition's, a player's): printable characters only (see :func:`printable`)."""


class Section(BaseModel):
    """A config section: unknown keys are refused, and numbers are strict (a boolean or a quoted number is
    no number)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class RunSection(Section):
    run_id: str | None = Field(
        None, pattern=RUN_ID_PATTERN, description="file-name-safe id; default: <config name>_<timestamp>"
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="master seed; every game's randomness derives from it")
    output: str | None = Field(None, min_length=1, description="results folder (default results/ or $PDBENCH_RESULTS)")


class GameSection(Section):
    payoff_matrix: PayoffMatrix = Field(default_factory=PayoffMatrix)

    @field_validator("payoff_matrix", mode="before")
    @classmethod
    def _matrix(cls, value: Any) -> PayoffMatrix:
        if isinstance(value, PayoffMatrix):
            return value
        return PayoffMatrix.from_mapping(value)


class HorizonSection(Section):
    """The ``horizon`` section as it is written (``{type: fixed, n_rounds: 50}`` or ``{type: geometric,
    stop_prob: 0.05, max_rounds: 500}``), and the one place a horizon is checked; the game reads the
    :class:`~harness.game.horizon.Horizon` it makes (:meth:`to_horizon`), never these fields."""

    type: HorizonKind = Field(HorizonKind.FIXED, strict=False)  # the config names the kind: "fixed" or "geometric"
    n_rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS)
    stop_prob: float | None = Field(None, gt=0.0, le=1.0)
    max_rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS)

    _horizon: Horizon = PrivateAttr()  # made by _complete, once every number is checked

    @model_validator(mode="after")
    def _complete(self) -> HorizonSection:
        self._horizon = self._fixed() if self.type is HorizonKind.FIXED else self._geometric()
        return self

    def _fixed(self) -> FixedHorizon:
        extra = [k for k in ("stop_prob", "max_rounds") if getattr(self, k) is not None]
        if extra:
            raise ValueError(f"{' and '.join(extra)} only apply to type: geometric (this horizon is fixed)")
        if self.n_rounds is None:
            if "n_rounds" in self.model_fields_set:  # written, but empty: not a wish for the default
                raise ValueError(
                    f"n_rounds is empty (null): give the number of rounds (1 to {MAX_ROUNDS:,}), or leave "
                    f"n_rounds out for the default of {DEFAULT_ROUNDS}"
                )
            self.n_rounds = DEFAULT_ROUNDS
        return FixedHorizon(self.n_rounds)

    def _geometric(self) -> GeometricHorizon:
        if self.n_rounds is not None:
            raise ValueError("n_rounds only applies to type: fixed; a geometric horizon has stop_prob and max_rounds")
        if self.stop_prob is None:
            raise ValueError("a geometric horizon needs stop_prob (the per-round stop probability)")
        if self.max_rounds is None and self.stop_prob < MIN_UNCAPPED_STOP_PROB:
            raise ValueError(
                f"stop_prob {self.stop_prob:g} makes games of about {1 / self.stop_prob:,.0f} rounds; "
                f"set max_rounds (at most {MAX_ROUNDS:,}) to cap them"
            )
        return GeometricHorizon(self.stop_prob, self.max_rounds)

    def to_horizon(self) -> Horizon:
        """The game's horizon: its kind, with only its own numbers."""
        return self._horizon

    @classmethod
    def of(cls, horizon: Horizon) -> HorizonSection:
        """The section that makes ``horizon``: what a horizon made in code is stored and replayed as."""
        match horizon:
            case FixedHorizon(n_rounds):
                return cls(type=HorizonKind.FIXED, n_rounds=n_rounds)
            case GeometricHorizon(stop_prob, max_rounds):
                return cls(type=HorizonKind.GEOMETRIC, stop_prob=stop_prob, max_rounds=max_rounds)


class NoiseSection(Section):
    """The ``noise`` section: ``{execution: p, observation: q}``, or ``noise: p`` for execution noise alone.

    Execution noise flips a move as it is played (both players and the payoffs see the flip): a mistake.
    Observation noise flips what one player sees of the other's move (its own draw; the payoffs use the move
    as played): a misperception. ``prob`` is the older name of ``execution``, and the name the resolved config
    is stored under (``runs.config_json``), so recorded runs and queries on them keep their meaning."""

    # A dynamic alias (AliasChoices) only widens what validation reads; the attribute keeps its name.
    prob: float = Field(  # type: ignore[pydantic-alias]
        0.0,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("execution", "prob"),
        description="execution noise: probability that an intended move is flipped as it is played",
    )
    observation: float = Field(
        0.0, ge=0.0, le=1.0, description="observation noise: probability that a player sees the other's move flipped"
    )

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, value: Any) -> Any:
        if isinstance(value, dict) and "execution" in value and "prob" in value:
            raise ValueError(
                "noise gives both execution and prob, two names of the execution noise; keep execution "
                "(noise: {execution: 0.05, observation: 0.02})"
            )
        return value

    @property
    def execution(self) -> float:
        """The execution noise (stored as ``prob``)."""
        return self.prob


def noise_shorthand(value: Any) -> Any:
    """``noise: 0.05`` is shorthand for ``noise: {execution: 0.05}`` (execution noise alone)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"prob": value}
    return value


class CollapseSection(Section):
    k: int = Field(10, ge=1, le=MAX_ROUNDS, description="window length in rounds (at most a game's longest)")
    cooperation_threshold: float = Field(0.2, ge=0.0, le=1.0)


class MetricsSection(Section):
    collapse: CollapseSection = Field(default_factory=CollapseSection)
