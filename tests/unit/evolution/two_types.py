"""TFT against ALLD in a population of 10, worked out by hand, and PDBench's Moran runs from one mutant,
shared by the tests against the closed form and against the Axelrod library (run once per session)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from harness.evolution import EvolutionSettings, evolve

N = 10
# 200 rounds, T=5 R=3 P=1 S=0, worked out by hand: TFT-TFT 200 x 3 = 600; TFT-ALLD: S then 199 x P = 199;
# ALLD-TFT: T then 199 x P = 204; ALLD-ALLD 200 x P = 200.
TFT_TFT, TFT_ALLD, ALLD_TFT, ALLD_ALLD = 600, 199, 204, 200
TABLE = np.array([[TFT_TFT, TFT_ALLD], [ALLD_TFT, ALLD_ALLD]], dtype=float)  # players TFT, ALLD


def fixation_probability(f: object, g: object) -> float:
    """Nowak (2006), Evolutionary Dynamics, eq. 6.13: one mutant A among N - 1 residents B fixes with
    probability 1 / (1 + sum_{k=1}^{N-1} prod_{j=1}^{k} g_j / f_j), where f_j and g_j are the fitness of an
    A and of a B when there are j individuals of A. Exact in fractions."""
    total = Fraction(1)
    for k in range(1, N):
        product = Fraction(1)
        for j in range(1, k + 1):
            product *= Fraction(g(j), f(j))  # type: ignore[operator]
        total += product
    return float(1 / total)


ROUNDS = 200
# Per round: each match total over its 200 rounds (exact fractions: 3, 199/200, 204/200, 1).
PER_ROUND = {
    k: Fraction(v, ROUNDS) for k, v in {"TT": TFT_TFT, "TA": TFT_ALLD, "AT": ALLD_TFT, "AA": ALLD_ALLD}.items()
}


def per_round_scores(mutant: str, j: int) -> tuple[Fraction, Fraction]:
    """The per-round scores of a ``mutant`` (TFT or ALLD) and of a resident when j individuals play the mutant:
    each the mean, over its N - 1 others, of its payoff per round against each."""
    m, r = ("T", "A") if mutant == "TFT" else ("A", "T")
    mutant_score = ((j - 1) * PER_ROUND[m + m] + (N - j) * PER_ROUND[m + r]) / (N - 1)
    resident_score = (j * PER_ROUND[r + m] + (N - j - 1) * PER_ROUND[r + r]) / (N - 1)
    return mutant_score, resident_score


def linear_rho(mutant: str, w: Fraction) -> float:
    """One mutant's fixation probability under the linear fitness 1 - w + w * (per-round score), exactly."""
    return fixation_probability(
        lambda j: 1 - w + w * per_round_scores(mutant, j)[0], lambda j: 1 - w + w * per_round_scores(mutant, j)[1]
    )


def exponential_rho(mutant: str, w: float) -> float:
    """Under the exponential fitness exp(w * score): g_j / f_j = exp(w (score_B - score_A)) (Traulsen, Shoresh and
    Nowak 2008, the same ratio as the Fermi process of Traulsen et al. 2006), summed in floats."""
    total, product = 1.0, 1.0
    for k in range(1, N):
        a, b = per_round_scores(mutant, k)
        product *= math.exp(w * float(b - a))
        total += product
    return 1 / total


# One TFT among 9 ALLD (j counts TFT): a TFT's fitness is its total payoff against every other individual.
RHO_TFT = fixation_probability(
    lambda j: (j - 1) * TFT_TFT + (N - j) * TFT_ALLD,  # a TFT among j TFT (itself included) and N - j ALLD
    lambda j: j * ALLD_TFT + (N - j - 1) * ALLD_ALLD,  # an ALLD among them
)
# One ALLD among 9 TFT (j counts ALLD).
RHO_ALLD = fixation_probability(
    lambda j: (j - 1) * ALLD_ALLD + (N - j) * ALLD_TFT,  # an ALLD among j ALLD and N - j TFT
    lambda j: j * TFT_ALLD + (N - j - 1) * TFT_TFT,  # a TFT among them
)


@dataclass(frozen=True)
class Runs:
    """Moran processes from one mutant among N - 1 residents, one per seed 0..runs-1, until absorption."""

    runs: int
    fixations: int  # the mutant took over
    steps: tuple[int, ...]  # steps to absorption, per seed

    @property
    def frequency(self) -> float:
        return self.fixations / self.runs

    @property
    def mean_steps(self) -> float:
        return sum(self.steps) / self.runs

    @property
    def var_steps(self) -> float:
        mean = self.mean_steps
        return sum((s - mean) ** 2 for s in self.steps) / (self.runs - 1)


# The xdist group of the tests that read the default runs (one TFT among ALLD over 3,000 seeds, one ALLD among TFT
# over 6,000): in one worker, each is run once for the closed-form and the Axelrod tests (``mutant_runs`` caches).
MUTANT_RUNS = "moran-mutant-runs"


@cache
def mutant_runs(mutant: str, runs: int, **settings: object) -> Runs:
    """PDBench's Moran process (w = 1 linear unless ``settings`` say otherwise, no mutation) from one ``mutant``
    (TFT or ALLD) among the other."""
    players = [mutant, "ALLD" if mutant == "TFT" else "TFT"]
    table = TABLE if mutant == "TFT" else TABLE[::-1, ::-1]
    fixations, steps = 0, []
    for seed in range(runs):
        s = EvolutionSettings(
            players=players, counts=[1, N - 1], dynamics="moran", generations=1_000_000, seed=seed,
            **settings,  # type: ignore[arg-type]
        )  # fmt: skip
        trajectory = evolve(s, payoffs=table)
        assert trajectory.fixation is not None, "the step budget must reach absorption"
        fixations += trajectory.fixation.player == mutant
        steps.append(trajectory.generations)
    return Runs(runs, fixations, tuple(steps))


def within_3_se(observed: float, p: float, runs: int) -> bool:
    return abs(observed - p) <= 3 * math.sqrt(p * (1 - p) / runs)
