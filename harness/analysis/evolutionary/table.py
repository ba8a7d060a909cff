"""A payoff table measured from games: per pair of players, every complete game's payoff per round to each of the
two, so that the table can be resampled game by game.

The unit of resampling is the game, not the cell: one game of i against j gives both a_ij and a_ji, so a bootstrap
draw resamples the games of each pair (with replacement, as many as there are) and takes both cells from the same
draws, which keeps their correlation. A self-play game gives a_ii twice (one value a seat); its cell is the mean of
both seats, as the ``matchups`` view's diagonal is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class MeasuredTable:
    """``games[(i, j)]`` for i <= j: a (games × 2) array, each row one complete game of ``players[i]`` against
    ``players[j]`` (either seat), column 0 the payoff per round of i and column 1 that of j. ``origin`` says where
    the games come from, for the output."""

    players: tuple[str, ...]
    games: dict[tuple[int, int], np.ndarray]
    origin: str

    @property
    def size(self) -> int:
        return len(self.players)

    def point(self) -> np.ndarray:
        """The table of means: ``a[i, j]`` the mean payoff per round of i against j over their games."""
        return self._table({pair: rows.mean(axis=0) for pair, rows in self.games.items()})

    def resample(self, rng: np.random.Generator) -> np.ndarray:
        """One bootstrap draw of the table: each pair's games drawn with replacement, as many as it has."""
        means = {}
        for pair, rows in self.games.items():
            means[pair] = rows[rng.integers(0, len(rows), len(rows))].mean(axis=0)
        return self._table(means)

    def fewest_games(self) -> int:
        """The fewest games any pair has: with one, its cells cannot vary in a bootstrap."""
        return min(len(rows) for rows in self.games.values())

    def span(self) -> tuple[float, float]:
        """The lowest and highest payoff per round of any game: every resampled mean lies between them."""
        values = np.concatenate([rows.ravel() for rows in self.games.values()])
        return float(values.min()), float(values.max())

    def _table(self, means: dict[tuple[int, int], np.ndarray]) -> np.ndarray:
        k = self.size
        table = np.empty((k, k), dtype=np.float64)
        for (i, j), (mine, theirs) in means.items():
            if i == j:
                table[i, i] = (mine + theirs) / 2
            else:
                table[i, j], table[j, i] = mine, theirs
        return table
