"""What an evolution run produced: the population after every generation, whether and when one player
took over, and the payoff table the dynamics read. Plain data: storage and views read it as it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from harness.errors import ConfigError

OnGeneration = Callable[[int, np.ndarray], object]
"""Called with (generation, population) for generation 0 (the initial population) and after each
generation: counts (int64) for the finite dynamics, shares (float64) for the replicator. The array
is read-only; copy it to keep it."""


class PayoffSource(StrEnum):
    """How the payoff table was obtained."""

    played_once = "played_once"
    """Every pair is deterministic (no noise, no random strategy, a fixed horizon): one match each."""
    per_generation = "per_generation"
    """Random pairs played a fresh match every generation; each cell is the mean of the matches played
    for it (deterministic pairs: their one match)."""
    estimated = "estimated"
    """Each random pair's cell is the mean of ``replicates`` seeded matches, estimated once."""
    supplied = "supplied"
    """Given by the caller (e.g. from games with a language model played through the engine)."""


@dataclass(frozen=True, slots=True, eq=False)
class PayoffTable:
    """``values[i, j]``: the mean total payoff of one match of player ``i`` (row) against player ``j``
    (column), over the matches in ``matches[i, j]``. A cell that was never needed (the two players never
    met) is NaN with 0 matches. The diagonal is a player against another individual of its own type
    (the mean of both seats), never against itself. ``rates[i, j]``, when known, is the mean over the same
    matches of each match's payoff per round (its total over its rounds): what the per-round score reads.
    The store keeps ``values`` only, so a table read back has no ``rates``.
    """

    players: tuple[str, ...]
    values: np.ndarray  # float64 [k, k]
    matches: np.ndarray  # int64 [k, k]
    source: PayoffSource
    replicates: int | None = None  # matches per random pair, for PayoffSource.estimated
    rates: np.ndarray | None = None  # float64 [k, k], payoff per round

    def per_round(self, expected_length: float) -> np.ndarray:
        """The payoffs per round: :attr:`rates`, else each mean match payoff over the expected match length
        (the same for a fixed horizon; for a random one, the payoff per round played)."""
        if self.rates is not None:
            return self.rates
        rates = np.asarray(self.values / expected_length, dtype=np.float64)
        rates.setflags(write=False)
        return rates

    @classmethod
    def supplied_by_caller(
        cls, players: tuple[str, ...], values: object, matches: np.ndarray | None = None, rates: object = None
    ) -> PayoffTable:
        """A caller's k×k table of finite mean match payoffs, checked; ``matches`` (how many games each
        cell averages, when the caller knows) is kept, else taken as 1; so is ``rates`` (the mean payoff per
        round of the same games), when given."""
        k = len(players)
        try:
            array = np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            array = np.empty(0)
        if array.shape != (k, k) or not np.isfinite(array).all():
            raise ConfigError(
                f"the payoff table given for the {k} players ({', '.join(players)}) must be a {k}×{k} table of "
                f"finite numbers (row player's mean match payoff against the column player); got shape "
                f"{array.shape if array.size else 'unreadable'}"
                + ("" if not array.size or np.isfinite(array).all() else " with a NaN or infinite cell")
            )
        array.setflags(write=False)
        counted = np.ones((k, k), dtype=np.int64) if matches is None else np.array(matches, dtype=np.int64)
        if counted.shape != (k, k):
            raise ConfigError(f"the payoff table's match counts must be a {k}×{k} table, like its values")
        counted.setflags(write=False)
        per_round = None
        if rates is not None:
            per_round = np.array(rates, dtype=np.float64)
            if per_round.shape != (k, k) or not np.isfinite(per_round).all():
                raise ConfigError(f"the payoff table's payoffs per round must be a {k}×{k} table of finite numbers")
            per_round.setflags(write=False)
        return cls(players, array, counted, PayoffSource.supplied, rates=per_round)

    def describe(self) -> str:
        """How the table was obtained, in one line."""
        if self.source == PayoffSource.estimated:
            return f"estimated: mean of {self.replicates} matches per random pair, one match per deterministic pair"
        return {
            PayoffSource.played_once: "played once: every pair is deterministic",
            PayoffSource.per_generation: "random pairs played afresh every generation (cells: mean over matches)",
            PayoffSource.supplied: "supplied by the caller",
        }[self.source]


@dataclass(frozen=True, slots=True, eq=False)
class PhaseScores:
    """The tallies of one phase of the squared-share dynamics (every pair of agents met once), per player in the
    run's order: what its update read, so a reader can recompute it. ``points[i]``: the payoff of every agent of
    player i summed over all its matches of the phase; ``rounds[i]``: the rounds of those same matches, summed
    (a match between two agents of player i counts both sides' points and its rounds twice); ``matches[i]``: how
    many matches its agents played (each agent meets the N - 1 others). The pooled fitness is points / rounds.
    ``generation`` is the population row the phase was played on; the last phase has no update after it."""

    generation: int
    points: np.ndarray  # float64 [k]
    rounds: np.ndarray  # int64 [k]
    matches: np.ndarray  # int64 [k]


@dataclass(frozen=True, slots=True)
class Fixation:
    """The first generation (or Moran step) at which every individual played ``player``."""

    generation: int
    player: str


@dataclass(frozen=True, slots=True, eq=False)
class Trajectory:
    """The population after each generation: row 0 is the initial population, row ``g`` the population
    after generation (or Moran step) ``g``.

    ``population`` holds counts (int64, rows summing to ``size``) for the finite dynamics, and shares
    (float64, rows summing to 1) for the replicator, whose ``size`` is None. A run without mutation stops
    at fixation, so it may have fewer rows than generations + 1. ``fixation`` is the first monomorphic
    generation (with mutation the population may later leave it), None if there was none; the replicator
    never fixes exactly.
    """

    players: tuple[str, ...]
    population: np.ndarray
    size: int | None
    fixation: Fixation | None
    payoffs: PayoffTable
    phases: tuple[PhaseScores, ...] = ()
    """Squared-share dynamics only: one entry per phase played, in order (one more than the updates)."""

    @property
    def generations(self) -> int:
        """Generations (or Moran steps) run: rows - 1."""
        return int(self.population.shape[0]) - 1

    def shares(self) -> np.ndarray:
        """Shares per generation (float64 [generations + 1, players], rows summing to 1)."""
        if self.size is None:
            return np.asarray(self.population, dtype=np.float64)
        return np.asarray(self.population, dtype=np.float64) / self.size

    def final_shares(self) -> dict[str, float]:
        """Each player's share after the last generation."""
        last = self.shares()[-1]
        return {p: float(x) for p, x in zip(self.players, last, strict=True)}

    def winner(self) -> str | None:
        """The player with the largest final share (after a fixation, the one that fixed); None on a tie."""
        last = self.shares()[-1]
        best = float(last.max())
        leaders = [p for p, x in zip(self.players, last, strict=True) if abs(float(x) - best) <= 1e-12]
        return leaders[0] if len(leaders) == 1 else None
