"""The payoff table between the players of a population, played through the engine.

Every cell is the total payoff of one match of the row player against the column player (the
diagonal: two individuals of the same type, the mean of both seats), and beside it the same match's payoff
per round (its total over its rounds), which the per-round score reads (:class:`~harness.evolution.settings.Score`);
both are played by
:func:`harness.players.strategies.play.play_seeded`, the runner's own game, so a cell is a real game of PDBench.

A pair is *deterministic* when its game is (:func:`harness.players.strategies.games.is_deterministic`:
neither strategy is stochastic and there is no noise): its moves are fixed, so it is played once, through
the cache of deterministic games tournaments use as well (:class:`~harness.players.strategies.games.StrategyGames`).
With a fixed horizon its payoff is then fixed; with a geometric horizon only the length varies, and a match
of length L is the first L rounds of the pairing's one long match (which the cache plays again, longer, when a
longer length is drawn). Every other pair is *random*:

- ``PayoffMode.exact``: each generation (or Moran step) plays one fresh match per random pair whose
  two types are both present (a type with itself: at least two individuals), seeded by the run seed,
  the generation and the two players' labels; every individual of type i meeting one of type j
  scores that match's payoff. So a generation costs at most k(k+1)/2 matches, not N(N-1)/2.
- ``PayoffMode.estimated``: each random pair's cell is the mean of ``replicates`` seeded matches,
  computed once, and the table is fixed.

The replicator reads a fixed table, so under it the exact mode is estimated as well. The squared-share
dynamics plays one match per pair of *individuals* itself (:meth:`Payoffs.match`, through the same cache), so no
pair is played ahead and its table is the mean of exactly the matches its phases played, a language model's
matches (played through the engine and counted in with :meth:`Payoffs.count`) included.
"""

from __future__ import annotations

import numpy as np

from harness.errors import ConfigError
from harness.evolution.settings import Dynamics, EvolutionSettings, PayoffMode, Score
from harness.evolution.trajectory import PayoffSource, PayoffTable
from harness.game.seeds import derive_seed
from harness.players.strategies import StrategySpec
from harness.players.strategies.games import StrategyGames, is_deterministic


class Payoffs:
    """The table a generation reads (:meth:`at`, in match totals or per round) and, at the end, the table that
    was used (:meth:`table`)."""

    def __init__(self, settings: EvolutionSettings, specs: list[StrategySpec | None], *, estimate: bool) -> None:
        """``specs``: each player's strategy, None for a language model (only under squared_share, which plays no
        pair ahead and hands a model's matches to the engine)."""
        self.players = tuple(settings.players)
        self.specs = specs
        self.seed = settings.seed
        self.game = settings.payoff_matrix
        self.horizon = settings.game_horizon
        self.noise = settings.noise
        self.observation = settings.observation_noise
        self.replicates = settings.replicates
        k = len(specs)
        self.games = StrategyGames()
        self.matches = np.zeros((k, k), dtype=np.int64)
        self.sums = np.zeros((k, k))
        self.rate_sums = np.zeros((k, k))  # each match's payoff per round, summed
        self.random_pairs: list[tuple[int, int]] = []
        # squared_share plays every match itself (Payoffs.match): no pair is played ahead, and the table is the
        # mean of exactly the matches its phases played
        self.per_match = settings.dynamics == Dynamics.squared_share
        ahead = [] if self.per_match else [(i, j) for i in range(k) for j in range(i, k)]
        for i, j in ahead:
            if self._is_random(i, j):
                self.random_pairs.append((i, j))
            else:
                seed = derive_seed(self.seed, "evolution", "once", *self._labels(i, j))
                self._add(i, j, *self._play(i, j, seed))
        self.estimated = estimate and bool(self.random_pairs)
        if self.estimated:
            for i, j in self.random_pairs:
                for r in range(self.replicates):
                    seed = derive_seed(self.seed, "evolution", "estimate", r, *self._labels(i, j))
                    self._add(i, j, *self._play(i, j, seed))
            self.random_pairs = []
        # the fixed cells; a random pair's cells stay 0 until it meets (exact mode)
        self.base = np.divide(self.sums, self.matches, out=np.zeros((k, k)), where=self.matches > 0)
        self.base.setflags(write=False)
        self.rates = np.divide(self.rate_sums, self.matches, out=np.zeros((k, k)), where=self.matches > 0)
        self.rates.setflags(write=False)
        self.varies = bool(self.random_pairs)
        self.supplied: PayoffTable | None = None

    @classmethod
    def for_settings(cls, settings: EvolutionSettings, supplied: PayoffTable | np.ndarray | None = None) -> Payoffs:
        """The payoffs of ``settings``' players: the caller's table if given, else played here."""
        if supplied is not None:
            return _Supplied(settings, supplied)
        if settings.models and settings.dynamics != Dynamics.squared_share:
            what = "is a language model" if len(settings.models) == 1 else "are language models"
            raise ConfigError(
                f"{', '.join(settings.models)} {what}, whose payoffs come from games played through the "
                "engine (with its cache and records), not here: run the population with pdbench evolve, "
                "or pass the payoff table to evolve(payoffs=...)"
            )
        specs = settings.specs
        estimate = settings.payoff_mode == PayoffMode.estimated or settings.dynamics == Dynamics.replicator
        return cls(settings, specs, estimate=estimate)

    def at(self, generation: int, counts: np.ndarray, unit: Score) -> np.ndarray:
        """The table generation ``generation`` reads, with ``counts`` individuals of each type (read-only), in
        ``unit``: each cell a match's total payoff, or its payoff per round. Cells of pairs that do not meet in
        this population are 0 (they are multiplied by a count of 0)."""
        per_round = unit == Score.per_round
        if not self.varies:
            return self.rates if per_round else self.base
        table = (self.rates if per_round else self.base).copy()
        for i, j in self.random_pairs:
            if counts[i] == 0 or counts[j] == 0 or (i == j and counts[i] < 2):
                continue
            seed = derive_seed(self.seed, "evolution", "generation", generation, *self._labels(i, j))
            a, b, rounds = self._play(i, j, seed)
            self._add(i, j, a, b, rounds)
            if per_round:
                a, b = a / rounds, b / rounds
            _fill(table, i, j, a, b)
        table.setflags(write=False)
        return table

    def match(self, i: int, j: int, seed: int) -> tuple[float, float, int]:
        """One match of an individual of player i (seat a) against one of player j (seat b) from ``seed``: both
        totals and its rounds, counted into the table's means. The squared-share dynamics plays its round robin of
        individuals through it; a deterministic pair's game comes from the cache, its length from the seed."""
        a, b, rounds = self._play(i, j, seed)
        self._add(i, j, a, b, rounds)
        return a, b, rounds

    def count(self, i: int, j: int, a: float, b: float, rounds: int) -> None:
        """Count one match of player i (seat a) against player j (seat b) played elsewhere (a language model's,
        through the engine) into the table's means, as :meth:`match` counts its own."""
        self._add(i, j, a, b, rounds)

    def table(self) -> PayoffTable:
        """The table the run used: every cell the mean of the matches played for it (see the module)."""
        if self.estimated:
            return PayoffTable(
                self.players, self.base, self.matches.copy(), PayoffSource.estimated, self.replicates, self.rates
            )
        if not self.varies and not self.per_match:
            return PayoffTable(self.players, self.base, self.matches.copy(), PayoffSource.played_once, rates=self.rates)
        values, rates = _means(self.sums, self.matches), _means(self.rate_sums, self.matches)
        return PayoffTable(self.players, values, self.matches.copy(), PayoffSource.per_generation, rates=rates)

    def _labels(self, i: int, j: int) -> tuple[str, str]:
        return self.players[i], self.players[j]

    def _is_random(self, i: int, j: int) -> bool:
        """Whether the cell of i against j varies from match to match: its game does, or its length."""
        spec_a, spec_b = self.specs[i], self.specs[j]
        assert spec_a is not None and spec_b is not None  # only squared_share takes models, and plays nothing ahead
        return not is_deterministic(spec_a, spec_b, self.noise, self.observation) or self.horizon.random_length

    def _play(self, i: int, j: int, seed: int) -> tuple[float, float, int]:
        """One match of player i (seat a) against player j (seat b), from ``seed``: both totals and its rounds."""
        spec_a, spec_b = self.specs[i], self.specs[j]
        assert spec_a is not None and spec_b is not None  # a model's matches are played through the engine
        match, _ = self.games.play(spec_a, spec_b, self.game, self.horizon, self.noise, seed, self.observation)
        return match.score_a, match.score_b, match.rounds_played

    def _add(self, i: int, j: int, a: float, b: float, rounds: int) -> None:
        """Count one match of i (seat a) against j (seat b) of ``rounds`` rounds into the running means."""
        if i == j:
            self.sums[i, i] += (a + b) / 2
            self.rate_sums[i, i] += (a + b) / 2 / rounds
            self.matches[i, i] += 1
        else:
            self.sums[i, j] += a
            self.sums[j, i] += b
            self.rate_sums[i, j] += a / rounds
            self.rate_sums[j, i] += b / rounds
            self.matches[i, j] += 1
            self.matches[j, i] += 1


def _means(sums: np.ndarray, matches: np.ndarray) -> np.ndarray:
    """Each cell's mean over its matches; NaN for a cell that never met (read-only)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(matches > 0, sums / np.maximum(matches, 1), np.nan)
    values.setflags(write=False)
    return values


def _fill(table: np.ndarray, i: int, j: int, a: float, b: float) -> None:
    if i == j:
        table[i, i] = (a + b) / 2
    else:
        table[i, j] = a
        table[j, i] = b


class _Supplied(Payoffs):
    """A table obtained elsewhere (a model's games played through the engine), used as it is. Its payoffs per
    round are the caller's, else its match totals over the horizon's (expected) length."""

    def __init__(self, settings: EvolutionSettings, supplied: PayoffTable | np.ndarray) -> None:
        self.players = tuple(settings.players)
        if isinstance(supplied, PayoffTable):
            if supplied.players != self.players:
                raise ConfigError(
                    f"the payoff table given is for the players {', '.join(supplied.players)}, not for this "
                    f"population's {', '.join(self.players)}: give one row and column per player, in its order"
                )
            self.supplied = PayoffTable.supplied_by_caller(
                self.players, supplied.values, supplied.matches, supplied.rates
            )
        else:
            self.supplied = PayoffTable.supplied_by_caller(self.players, supplied)
        self.base = self.supplied.values
        self.rates = self.supplied.per_round(settings.game_horizon.expected_length())
        self.varies = False
        self.per_match = False
        self.random_pairs = []
        self.estimated = False

    def table(self) -> PayoffTable:
        assert self.supplied is not None
        return self.supplied
