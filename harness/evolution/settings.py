"""What an evolution run is: the dynamics, the population, the games its members play, and how
selection reads their scores. Validated in one place, every problem reported at once.

Players are written as users type them (``TFT``, ``ALLD``, ``GTFT(p=0.3)``; a language model as
``provider/model``) and stored under their canonical label (``GTFT(generous_prob=0.3)``), which is
also what seeds their matches, so the same population always plays the same games.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, Self

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from harness.config.sections import MAX_SEED, HorizonSection
from harness.errors import ConfigError, UnknownStrategyError
from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon, HorizonKind
from harness.game.rules import PayoffMatrix
from harness.players.strategies import StrategySpec, parse_spec, spec_label
from harness.players.strategies.registry import unknown_strategy

DEFAULT_MATCH_ROUNDS = 200  # a match's rounds when the settings name no horizon
MAX_GENERATIONS = 10_000_000  # generations, or Moran steps (one birth and one death each)
MAX_POPULATION = 1_000_000
MAX_REPLICATES = 100_000
MAX_SELECTION = 1e6
MAX_AGENTS_PER_PHASE = 1_000  # squared_share: every pair of agents plays, ~500,000 matches a phase at this size
SHARE_TOLERANCE = 1e-9


class Dynamics(StrEnum):
    """How the population changes from one generation to the next."""

    moran = "moran"
    """Birth-death Moran process: each step one individual reproduces, chosen in proportion to fitness,
    and its offspring replaces one chosen uniformly at random (possibly the parent)."""
    generational = "generational"
    """The guide's process: everyone plays everyone, then all N of the next generation are drawn by
    roulette wheel in proportion to fitness."""
    trust = "trust"
    """The Evolution of Trust's rule: play a round robin, remove the k lowest scorers, copy the k highest."""
    replicator = "replicator"
    """Replicator dynamics of an infinite population, a deterministic ODE: the analytic reference."""
    squared_share = "squared_share"
    """Payne & Alloui-Cros (2025)'s phases: every pair of individual agents plays one match, then each strategy's
    count is multiplied by its squared pooled fitness relative to the unweighted mean, rounded and nudged back to
    N; deterministic given the games. One more phase is played after the last update (see
    :mod:`harness.evolution.phases`)."""


class Score(StrEnum):
    """What an individual's score is, before the fitness mapping reads it."""

    per_round = "per_round"
    """The mean, over the N - 1 others it meets, of the payoff per round of its match against each (each
    match's payoff over that match's rounds): on the payoff matrix's scale (between S and T) whatever the
    rounds and the population size, so that ``w`` means the same in every population."""
    match_total = "match_total"
    """The total payoff of its whole matches against the N - 1 others (hundreds or thousands of points, as the
    Axelrod library's MoranProcess scores). Runs stored before this setting existed used it
    (:meth:`EvolutionSettings.from_stored`)."""

    def describe(self) -> str:
        """What selection read, in words, for a report."""
        if self == Score.per_round:
            return "the mean payoff per round over the others met (on the payoff matrix's scale)"
        return (
            "whole-match totals against everyone (as runs made before scores were per round; there, w = 0.1 "
            "selects almost as w = 1)"
        )


class Fitness(StrEnum):
    """How an individual's score (see :class:`Score`) becomes its fitness, given the selection intensity ``w``.

    With the per-round score, ``w`` reads on the payoff matrix's scale: under the linear mapping ``w = 0.1``
    is weak selection (fitnesses within a few tenths of 1), ``w = 1`` fitness equal to the score."""

    exponential = "exponential"
    """``exp(w * score)``: always positive; ``w = 0`` is neutral drift."""
    linear = "linear"
    """``1 - w + w * score``: ``w = 1`` is the score itself (as the guide's roulette wheel and the Axelrod
    library's MoranProcess), ``w = 0`` is neutral drift."""


class PayoffMode(StrEnum):
    """Where the payoffs of pairs whose match outcome is random (noise, a random strategy, a geometric
    horizon) come from. Deterministic pairs are played once in both modes."""

    exact = "exact"
    """Random pairs play a fresh match every generation (or Moran step), seeded by the run seed, the
    generation and the pair, so each generation sees real games."""
    estimated = "estimated"
    """A payoff table estimated once, as the mean over ``replicates`` seeded matches per pair, then
    used for every generation."""


def _default_horizon() -> HorizonSection:
    return HorizonSection(type=HorizonKind.FIXED, n_rounds=DEFAULT_MATCH_ROUNDS)


class EvolutionSettings(BaseModel):
    """The settings of one evolution run. Construction (``EvolutionSettings(...)`` or
    :meth:`model_validate`) raises :class:`ConfigError` listing every problem, never a pydantic error.

    Population: give ``counts`` (individuals per player, in the order of ``players``; ``population``
    may be omitted or must equal their sum) or ``shares`` (summing to 1 within 1e-9, with
    ``population`` the number of individuals; counts are then apportioned by largest remainder).
    Every player starts with at least one individual. The replicator reads the same initial mix as shares.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    dynamics: Dynamics = Dynamics.generational
    players: list[str] = Field(min_length=2, description="strategies as typed (TFT, GTFT(p=0.3)) or provider/model")
    counts: list[int] | None = Field(None, description="initial individuals per player")
    shares: list[float] | None = Field(None, description="initial share per player, summing to 1")
    population: int | None = Field(None, ge=2, le=MAX_POPULATION, description="number of individuals N")
    generations: int = Field(
        100,
        ge=1,
        le=MAX_GENERATIONS,
        description="generations, or Moran steps (the Moran process stops earlier at "
        "fixation when there is no mutation); for the replicator, units of time",
    )
    horizon: HorizonSection = Field(default_factory=_default_horizon, description="rounds per match")
    noise: float = Field(0.0, ge=0.0, le=1.0, description="execution noise: probability that a move is flipped")
    # Left out of the stored settings when 0, so runs stored before it existed keep their config_json.
    observation_noise: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        exclude_if=lambda given: not given,
        description="observation noise: probability that a player sees the other's move flipped",
    )
    payoff_matrix: PayoffMatrix = Field(default_factory=PayoffMatrix, description="default T=5, R=3, P=1, S=0")
    selection: float = Field(1.0, ge=0.0, le=MAX_SELECTION, description="selection intensity w")
    fitness: Fitness = Fitness.linear
    score: Score = Score.per_round
    mutation: float = Field(0.0, ge=0.0, le=1.0, description="probability that an offspring is another type")
    k: int = Field(1, ge=1, description="individuals replaced per generation by the trust rule (at most N/2)")
    seed: int = Field(0, ge=0, le=MAX_SEED)
    payoff_mode: PayoffMode = PayoffMode.exact
    replicates: int = Field(50, ge=1, le=MAX_REPLICATES, description="matches per pair for estimated payoffs")
    # Left out of the stored settings when empty, so runs stored before it existed keep their config_json.
    model_settings: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        exclude_if=lambda given: not given,
        description="each model player's settings (prompts, temperature, max_tokens, parse, ...), the keys of a "
        "model agent in an experiment file, by the player's name",
    )
    # Left out of the stored settings when None, as model_settings.
    suite: str | None = Field(
        None,
        exclude_if=lambda given: given is None,
        description="the published protocol these settings follow (pdbench evolve --suite); checked to follow it",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """As pydantic's, raising :class:`ConfigError` with every problem."""
        try:
            return super().model_validate(
                obj,
                strict=strict,
                extra=extra,
                from_attributes=from_attributes,
                context=context,
                by_alias=by_alias,
                by_name=by_name,
            )
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: Any = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """As pydantic's, raising :class:`ConfigError` with every problem."""
        try:
            return super().model_validate_json(
                json_data, strict=strict, extra=extra, context=context, by_alias=by_alias, by_name=by_name
            )
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def from_stored(cls, config: dict[str, Any]) -> Self:
        """The settings of a stored run (its ``config_json``, without the store's own keys). A run stored
        before the ``score`` setting existed scored whole-match totals, so it is read as
        :attr:`Score.match_total`: it keeps the meaning it was run with.

        What was checked before the run is not checked again: the model players' settings (their templates are
        found relative to the folder the run was started from) and the suite's conformance (a later PDBench may
        correct a suite's value, and a run keeps the settings it played). Reading a run must not depend on where
        it is read from or on today's suites."""
        reading = _READING_STORED.set(True)  # a context var: pydantic calls our __init__, which drops a context
        try:
            return cls.model_validate({"score": Score.match_total.value, **config})
        finally:
            _READING_STORED.reset(reading)

    @field_validator("horizon", mode="before")
    @classmethod
    def _horizon(cls, value: Any) -> Any:
        return HorizonSection.of(value) if isinstance(value, (FixedHorizon, GeometricHorizon)) else value

    @field_validator("payoff_matrix", mode="before")
    @classmethod
    def _matrix(cls, value: Any) -> PayoffMatrix:
        return value if isinstance(value, PayoffMatrix) else PayoffMatrix.from_mapping(value)

    @field_serializer("payoff_matrix")
    def _matrix_out(self, matrix: PayoffMatrix) -> dict[str, dict[str, list[float]]]:
        """Dumped in the config's form, so that ``model_validate(model_dump())`` gives the same settings."""
        return matrix.to_mapping()

    @field_validator("dynamics", "fitness", "score", "payoff_mode", mode="before")
    @classmethod
    def _enum(cls, value: Any, info: ValidationInfo) -> Any:
        kind = {"dynamics": Dynamics, "fitness": Fitness, "score": Score, "payoff_mode": PayoffMode}[
            str(info.field_name)
        ]
        if isinstance(value, str) and not isinstance(value, StrEnum):
            choices = {member.value: member for member in kind}
            if value.strip().lower() not in choices:
                raise ValueError(f"{value!r} is not one of {', '.join(choices)}")
            return choices[value.strip().lower()]
        return value

    @field_validator("selection")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("players")
    @classmethod
    def _players(cls, value: list[str]) -> list[str]:
        labels: list[str] = []
        problems: list[str] = []
        unknown: list[str] = []
        for text in value:
            try:
                labels.append(_player_label(text))
            except UnknownStrategyError:
                unknown.append(text)
            except ConfigError as exc:
                problems.append(str(exc))
        if unknown:
            problems.insert(
                0,
                unknown_strategy(*unknown) + " (a language model is named provider/model, e.g. mock/tft)",
            )
        if problems:
            raise ValueError("; ".join(problems))
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise ValueError(
                f"{', '.join(twice)} {'is' if len(twice) == 1 else 'are'} named twice: name each player once "
                "(its count, or share, says how many individuals play it)"
            )
        return labels

    @model_validator(mode="after")
    def _population(self) -> Self:
        problems = _population_problems(self, stored=_READING_STORED.get())
        if problems:
            raise ConfigError(_HEAD.format(n=len(problems), s="s" if len(problems) > 1 else ""), problems)
        return self

    @property
    def initial_counts(self) -> np.ndarray:
        """The individuals of each player at generation 0 (int64, summing to :attr:`size`)."""
        if self.counts is not None:
            return np.array(self.counts, dtype=np.int64)
        if self.shares is None or self.population is None:  # a replicator given shares only
            raise ConfigError(
                "these settings give shares without a population size: set population to count individuals"
            )
        return _apportion(self.shares, self.population)

    @property
    def initial_shares(self) -> np.ndarray:
        """The initial mix as shares (float64, summing to 1): what the replicator starts from."""
        if self.shares is not None and self.counts is None:
            return np.array(self.shares, dtype=np.float64)
        counts = self.initial_counts
        return np.asarray(counts / counts.sum(), dtype=np.float64)

    @property
    def size(self) -> int:
        """The number of individuals N."""
        return int(self.initial_counts.sum())

    @property
    def game_horizon(self) -> Horizon:
        return self.horizon.to_horizon()

    @property
    def specs(self) -> list[StrategySpec | None]:
        """Each player's strategy with its parameters, or None for a language model."""
        return [None if is_model(p) else parse_spec(p) for p in self.players]

    @property
    def models(self) -> list[str]:
        """The players that are language models (their payoffs must be supplied to :func:`evolve`)."""
        return [p for p in self.players if is_model(p)]

    def model_agent(self, player: str) -> dict[str, Any]:
        """Model player ``player`` as an experiment file writes a model agent: its model and its settings."""
        return {"model": player, **self.model_settings.get(player, {})}


_READING_STORED: ContextVar[bool] = ContextVar("reading_stored_evolution_settings", default=False)
"""True while :meth:`EvolutionSettings.from_stored` validates a stored run's settings."""


def is_model(player: str) -> bool:
    """A model is named ``provider/model``; no strategy name has a slash."""
    return "/" in player


def _player_label(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("a player is empty: name a strategy (TFT, GTFT(p=0.3)) or a model (provider/model)")
    if is_model(text):
        from harness.config import ModelAgentConfig

        try:
            ModelAgentConfig.model_validate({"model": text.strip()})
        except ValidationError as exc:
            error = exc.errors()[0]
            cause = error.get("ctx", {}).get("error")
            raise ConfigError(str(cause) if cause is not None else f"{text!r}: {error['msg']}") from None
        return text.strip()
    return spec_label(parse_spec(text))


_HEAD = "the evolution settings have {n} problem{s}; fix each and run again:"


def _config_error(exc: ValidationError) -> ConfigError:
    problems = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "settings"
        message = str(err["ctx"]["error"]) if "ctx" in err and "error" in err["ctx"] else err["msg"]
        if err["type"] == "extra_forbidden":
            message = f"is not a setting (settings: {', '.join(EvolutionSettings.model_fields)})"
        elif err["type"] == "missing":
            message = "is required"
        problems.append(f"{key}: {message}")
    return ConfigError(_HEAD.format(n=len(problems), s="s" if len(problems) > 1 else ""), problems)


def _population_problems(s: EvolutionSettings, *, stored: bool = False) -> list[str]:
    """Every problem of the settings taken together: the population, k, mutation under the replicator
    (each field is valid by itself by now)."""
    problems: list[str] = []
    n_players = len(s.players)
    size: int | None = s.population
    if (s.counts is None) == (s.shares is None):
        problems.append(
            "give the initial population either as counts (individuals per player, e.g. counts [25, 25]) "
            "or as shares with a population size (e.g. shares [0.5, 0.5], population 50); "
            + ("both were given" if s.counts is not None else "neither was given")
        )
    elif s.counts is not None:
        if len(s.counts) != n_players:
            problems.append(f"counts has {len(s.counts)} numbers for {n_players} players: give one per player")
        if any(c < 1 for c in s.counts):
            problems.append(
                f"counts {s.counts}: every player needs at least one individual; drop a player to leave it out"
            )
        total = sum(s.counts)
        if s.population is not None and total != s.population:
            problems.append(
                f"counts sum to {total}, not to the population size {s.population}: "
                "make them add up, or leave population out"
            )
        size = total if s.population is None else s.population
        if total > MAX_POPULATION:
            problems.append(f"counts sum to {total:,}; a population has at most {MAX_POPULATION:,} individuals")
    elif s.shares is not None:
        if len(s.shares) != n_players:
            problems.append(f"shares has {len(s.shares)} numbers for {n_players} players: give one per player")
        if any(not math.isfinite(x) or x <= 0.0 or x > 1.0 for x in s.shares):
            problems.append(f"shares {s.shares}: each must be above 0 and at most 1; drop a player to leave it out")
        elif abs(math.fsum(s.shares) - 1.0) > SHARE_TOLERANCE:
            problems.append(
                f"shares sum to {math.fsum(s.shares):.12g}, not 1 (within {SHARE_TOLERANCE:g}): "
                "make them add up to 1, or give counts instead"
            )
        elif s.population is None and s.dynamics != Dynamics.replicator:
            problems.append("shares need a population size (population N), to know how many individuals they are")
        elif s.population is not None and s.population >= n_players and len(s.shares) == n_players:
            counts = _apportion(s.shares, s.population)
            empty = [p for p, c in zip(s.players, counts, strict=True) if c == 0]
            if empty:
                problems.append(
                    f"in a population of {s.population}, the shares give no individual to {', '.join(empty)}: "
                    "raise the population or their shares"
                )
    if size is not None and size < n_players:
        problems.append(
            f"a population of {size} is smaller than the {n_players} players: every player needs at least one "
            f"individual, so raise the population to {n_players} or more"
        )
    if s.dynamics == Dynamics.replicator and s.mutation > 0:
        problems.append(
            f"mutation {s.mutation:g}: the replicator dynamics here has no mutation (it is the analytic reference "
            "for selection alone); set mutation to 0, or choose the moran, generational or trust dynamics"
        )
    if s.dynamics == Dynamics.squared_share:
        problems.extend(_squared_share_problems(s, size))
    if not stored:  # checked before the run; see EvolutionSettings.from_stored
        problems.extend(_model_settings_problems(s))
        if s.suite is not None and not problems:
            problems.extend(_suite_problems(s))
    if size is not None and 2 * s.k > size:
        problems.append(
            f"k = {s.k} replaces more than half of a population of {size}: the trust rule removes the k lowest "
            f"scorers and copies the k highest, so k must be at most {size // 2}"
        )
    return problems


def _model_settings_problems(s: EvolutionSettings) -> list[str]:
    """Each model player's settings, validated as a model agent of an experiment file is (the same
    :class:`~harness.config.ModelAgentConfig`), so a temperature of 5 fails here, before any game; and settings
    for a player that is not a model of the population."""
    from harness.config import ModelAgentConfig

    problems: list[str] = []
    for player, given in s.model_settings.items():
        where = f"model_settings.{player}"
        if player not in s.models:
            models = f"its models are {', '.join(s.models)}" if s.models else "it has no model player"
            problems.append(
                f"{where}: {player!r} is not a model player of the population ({models}); name each model as "
                "the players name it"
            )
            continue
        fixed = [key for key in ("model", "name") if key in given]
        if fixed:
            problems.append(
                f"{where}: {' and '.join(fixed)} cannot be set here: a model player is named by its model, the key "
                "of its settings; remove " + ("it" if len(fixed) == 1 else "them")
            )
            continue
        try:
            ModelAgentConfig.model_validate(s.model_agent(player))
        except ValidationError as exc:
            for err in exc.errors():
                key = ".".join(str(p) for p in err["loc"])
                cause = err.get("ctx", {}).get("error")
                message = str(cause) if cause is not None else err["msg"]
                if err["type"] == "extra_forbidden":
                    message = "is not a setting of a model player"
                problems.append(f"{where}{'.' + key if key else ''}: {message}")
    return problems


def _suite_problems(s: EvolutionSettings) -> list[str]:
    """Where settings that name a suite depart from it (:mod:`harness.config.presets.evolve_suites`), one problem
    per setting, so a stored run cannot claim a protocol it did not play. The models, the seed and the stop
    probability (among the suite's) are the user's."""
    from harness.config.presets.evolve_suites import EVOLVE_SUITES

    assert s.suite is not None
    suite = EVOLVE_SUITES.get(s.suite)
    if suite is None:
        return [f"suite: {s.suite!r} is not a suite of pdbench evolve (the suites: {', '.join(EVOLVE_SUITES)})"]
    horizon = s.game_horizon
    stop_prob = horizon.stop_prob if isinstance(horizon, GeometricHorizon) else None
    try:
        wanted = EvolutionSettings.model_validate(suite.settings_data(s.models, stop_prob, s.seed))
    except ConfigError as exc:
        return [f"suite: {exc}"]
    want, got = wanted.model_dump(mode="json"), s.model_dump(mode="json", exclude={"suite"})
    return [
        f"{key}: suite {s.suite} fixes {want.get(key)!r}, the settings have {got.get(key)!r}; follow the protocol "
        f"or remove `suite: {s.suite}`"
        for key in EvolutionSettings.model_fields
        if want.get(key) != got.get(key)
    ]


def _squared_share_problems(s: EvolutionSettings, size: int | None) -> list[str]:
    """The settings the squared-share dynamics cannot honour: its fitness is the pooled points per round and its
    update has no parameter, no draw and no mutation, and its matches are played afresh for every pair of agents (a
    language model's through the engine, each phase: see :mod:`harness.evolution.phases`)."""
    problems: list[str] = []
    ignored = [
        f"{name} {value}"
        for name, value, default in (
            ("mutation", s.mutation, 0.0),
            ("selection", s.selection, 1.0),
            ("fitness", s.fitness.value, Fitness.linear.value),
            ("score", s.score.value, Score.per_round.value),
            ("payoff_mode", s.payoff_mode.value, PayoffMode.exact.value),
            ("k", s.k, 1),
        )
        if value != default
    ]
    if ignored:
        problems.append(
            f"{', '.join(ignored)}: the squared_share dynamics has none of these (its fitness is each strategy's "
            "pooled points per round, squared relative to the mean, with no selection intensity, no mutation, "
            "and a fresh match for every pair of agents in every phase); leave them out"
        )
    if size is not None and size > MAX_AGENTS_PER_PHASE:
        problems.append(
            f"a population of {size:,}: under squared_share every pair of agents plays a match each phase "
            f"({size * (size - 1) // 2:,} matches), so it takes at most {MAX_AGENTS_PER_PHASE:,} agents"
        )
    return problems


def _apportion(shares: list[float], population: int) -> np.ndarray:
    """Counts summing to ``population`` in the given shares: floors, then the largest remainders
    (earlier players first on equal remainders), so the rounding is deterministic."""
    quotas = [x * population for x in shares]
    counts = [math.floor(q) for q in quotas]
    left = population - sum(counts)
    order = sorted(range(len(shares)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[:left]:
        counts[i] += 1
    return np.array(counts, dtype=np.int64)
