"""What the 🧬 Evolution view asks for: the form's values as plain data.

:class:`Form` is the form's values, turned into :class:`~harness.evolution.EvolutionSettings` (every check of the
core, plus the view's own bounds) without Streamlit, so it is tested like the library. The scenario buttons load a
:class:`~harness.evolution.scenarios.Scenario` (shared with ``pdbench evolve --scenario``) into the form through
:meth:`Form.of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.errors import ConfigError
from harness.evolution import Dynamics, EvolutionSettings, Fitness, PayoffMode
from harness.game.horizon import HorizonKind
from harness.game.rules import PayoffMatrix

MAX_INDIVIDUALS = 200  # the view draws one emoji per individual; `pdbench evolve` takes more
MAX_COUNT = 50  # per player, on its slider
MAX_GENERATIONS = 1000
MAX_ROUNDS = 200


class PayoffChoice(StrEnum):
    """The form's payoffs: a preset of ``--payoff-matrix`` (The Evolution of Trust's coins: R=2, S=-1, T=3, P=0;
    Axelrod's R=3, S=0, T=5, P=1), or the teacher's own T, R, P, S."""

    trust = "trust"
    axelrod = "axelrod"
    custom = "custom"


PAYOFF_LABELS = {
    PayoffChoice.trust.value: "🪙 The Evolution of Trust: T 3, R 2, P 0, S −1",
    PayoffChoice.axelrod.value: "📐 Axelrod: T 5, R 3, P 1, S 0",
    PayoffChoice.custom.value: "🎛️ Your own T, R, P, S",
}
TRUST_TRPS = (3.0, 2.0, 0.0, -1.0)
DEFAULT_K = 5  # the trust rule: 5 of The Evolution of Trust's 25 agents replaced each generation
PAYOFF_BOUND = 100.0  # each of T, R, P, S on its number input
DYNAMICS_LABELS = {
    Dynamics.trust.value: "🤝 The Evolution of Trust",
    Dynamics.generational.value: "🎡 Generational (roulette)",
    Dynamics.moran.value: "🔁 Moran process",
    Dynamics.replicator.value: "📈 Replicator (ODE)",
}


@dataclass(frozen=True, slots=True)
class Form:
    """The form's values. ``counts[i]`` individuals play ``players[i]``; a player at 0 is left out."""

    players: tuple[str, ...]
    counts: tuple[int, ...]
    dynamics: str = Dynamics.trust.value
    generations: int = 50
    rounds: int = 10
    noise: float = 0.0
    selection: float = 1.0
    fitness: str = Fitness.exponential.value
    mutation: float = 0.0
    k: int = DEFAULT_K
    payoffs: str = PayoffChoice.trust.value
    custom: tuple[float, float, float, float] = TRUST_TRPS  # T, R, P, S: read when ``payoffs`` is custom
    payoff_mode: str = PayoffMode.exact.value
    seed: int = 0

    @classmethod
    def of(cls, settings: EvolutionSettings) -> Form:
        """The form that makes ``settings`` (a scenario's): its payoffs a preset's name when they are one's, and
        k the form's default where the dynamics do not read it (the form sends 1 there)."""
        matrix = settings.payoff_matrix
        preset = next((name for name, m in PAYOFF_PRESETS.items() if m == matrix and name in PAYOFF_LABELS), None)
        return cls(
            players=tuple(settings.players),
            counts=tuple(int(c) for c in settings.initial_counts),
            dynamics=settings.dynamics.value,
            generations=settings.generations,
            rounds=int(settings.horizon.n_rounds or 0),
            noise=settings.noise,
            selection=settings.selection,
            fitness=settings.fitness.value,
            mutation=settings.mutation,
            k=settings.k if settings.dynamics == Dynamics.trust else DEFAULT_K,
            payoffs=preset or PayoffChoice.custom.value,
            custom=(matrix.T, matrix.R, matrix.P, matrix.S) if preset is None else TRUST_TRPS,
            payoff_mode=settings.payoff_mode.value,
            seed=settings.seed,
        )

    def matrix(self) -> PayoffMatrix:
        """The game these payoffs make (a custom one may not be a prisoner's dilemma: see its ``warnings``)."""
        if self.payoffs != PayoffChoice.custom.value:
            return PAYOFF_PRESETS[self.payoffs]
        t, r, p, s = self.custom
        return PayoffMatrix.from_rstp(R=r, S=s, T=t, P=p)

    def chosen(self) -> tuple[list[str], list[int]]:
        """The players with at least one individual, and their counts."""
        pairs = [(p, c) for p, c in zip(self.players, self.counts, strict=True) if c > 0]
        return [p for p, _ in pairs], [c for _, c in pairs]

    def settings(self) -> EvolutionSettings:
        """The run's settings (k only for the trust rule, which alone reads it); a :class:`ConfigError`
        (one paragraph, what to change) for what cannot run here."""
        players, counts = self.chosen()
        if len(players) < 2:
            raise ConfigError(
                "an evolution needs at least two players with one individual or more: choose players above and "
                "give each a count on its slider (a player at 0 is left out)"
            )
        if sum(counts) > MAX_INDIVIDUALS:
            raise ConfigError(
                f"{sum(counts)} individuals: the view draws each one, so it takes at most {MAX_INDIVIDUALS}; lower "
                f"the counts, or run a larger population with `pdbench evolve`"
            )
        k = self.k if self.dynamics == Dynamics.trust.value else 1
        data: dict[str, Any] = {
            "dynamics": self.dynamics,
            "players": players,
            "counts": counts,
            "generations": self.generations,
            "horizon": {"type": HorizonKind.FIXED.value, "n_rounds": self.rounds},
            "noise": self.noise,
            "payoff_matrix": self.matrix().to_mapping(),
            "selection": self.selection,
            "fitness": self.fitness,
            "mutation": self.mutation,
            "k": k,
            "seed": self.seed,
            "payoff_mode": self.payoff_mode,
        }
        return EvolutionSettings.model_validate(data)


def selection_note(s: EvolutionSettings) -> str:
    """What the run's selection read, in one line (a run stored before the per-round score read match totals)."""
    mapping = "exp(w · score)" if s.fitness == Fitness.exponential else "1 − w + w · score"
    if s.dynamics == Dynamics.trust:
        return "The trust rule ranks points won in the round robin; w > 0 does not change a rank."
    if s.dynamics == Dynamics.replicator:
        return f"Replicator: shares grow at w = {s.selection:g} times their payoff per round above the mean."
    if s.dynamics == Dynamics.squared_share:
        return "Squared share: each strategy's count times (its pooled points per round / the mean over strategies)²."
    return f"Fitness {mapping} at w = {s.selection:g}, the score being {s.score.describe()}."
