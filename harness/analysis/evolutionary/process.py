"""The finite-population process an analysis assumes: its update rule, its selection intensity and its size.

Two birth-death processes of N individuals, each individual's payoff being its mean payoff per round against the
N - 1 others (:func:`harness.evolution.fixation.pair_payoffs`):

* ``moran``: one individual reproduces with probability proportional to its fitness ``1 - w + w * payoff`` and its
  offspring replaces one of the N chosen uniformly (Nowak 2006, ch. 6; the Moran process of ``pdbench evolve``
  with the linear fitness).
* ``fermi``: pairwise comparison; a focal individual, chosen uniformly, copies a role model chosen among the other
  N - 1 with probability ``1 / (1 + exp(-beta * (payoff_model - payoff_focal)))`` (Traulsen, Nowak & Pacheco
  2006; EGTtools' ``StochDynamics`` and ``PairwiseComparison``). Its fixation probabilities are those of the Moran
  process with the exponential fitness ``exp(beta * payoff)``, whose ratio of transition probabilities is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from harness.errors import ConfigError
from harness.evolution.settings import Fitness


class Process(StrEnum):
    """The update rule (see the module)."""

    moran = "moran"
    fermi = "fermi"

    @property
    def fitness(self) -> Fitness:
        """The fitness mapping under which the Moran closed form gives this process's fixation probabilities."""
        return Fitness.linear if self is Process.moran else Fitness.exponential

    @property
    def intensity_name(self) -> str:
        return "w" if self is Process.moran else "beta"


@dataclass(frozen=True, slots=True)
class Population:
    """A population of ``size`` individuals under ``process`` at selection intensity ``intensity`` (w or beta)."""

    process: Process
    intensity: float
    size: int

    def check(self, players: int, span: tuple[float, float]) -> None:
        """Refuse, before anything runs, a population that cannot hold every player, or a linear fitness that a
        payoff per round in ``span`` (the lowest and highest of any game: every resampled mean lies inside) would
        make zero or negative."""
        problems = []
        if self.size < max(2, players):
            problems.append(
                f"a population of {self.size} is smaller than the {players} players of the table (and at least 2 are "
                "needed): give --population N of at least that"
            )
        if self.intensity < 0:
            problems.append(f"the selection intensity {self.intensity_label} must not be negative")
        low = 1.0 - self.intensity + self.intensity * span[0]  # the fitness grows with the payoff (w >= 0)
        if self.process is Process.moran and low <= 0:  # then span[0] < 1
            problems.append(
                f"the Moran fitness 1 - w + w * payoff is {low:g} at w = {self.intensity:g} for a game's payoff per "
                f"round of {span[0]:g}: fitness weighs reproduction, so it must be positive; lower --selection below "
                f"{1 / (1 - span[0]):.3g}, or use --dynamics fermi"
            )
        if len(problems) == 1:
            raise ConfigError(problems[0])
        if problems:
            raise ConfigError(f"the analysis settings have {len(problems)} problems:", problems)

    @property
    def intensity_label(self) -> str:
        return f"{self.process.intensity_name} = {self.intensity:g}"
