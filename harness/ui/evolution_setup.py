"""What the 🧬 Evolution view asks for, and its preset scenarios with their lessons.

:class:`Form` is the form's values as plain data, turned into :class:`~harness.evolution.EvolutionSettings`
(every check of the core, plus the view's own bounds) without Streamlit, so it is tested like the library.

A :class:`Preset` is a scenario of The Evolution of Trust: its settings, and a one-line lesson that is
*read from the run*, never asserted beside it. Its :attr:`~Preset.shows` looks at the trajectory and
returns the evidence (numbers of that run) or None when the run does not show the lesson; the view
prints the lesson only with that evidence, and the tests run every preset with its seed and check the
lesson with their own reading of the trajectory (tests/ui/test_evolution_setup.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.errors import ConfigError
from harness.evolution import Dynamics, EvolutionSettings, Fitness, PayoffMode, Trajectory
from harness.evolution.fixation import fixation_probability
from harness.game.horizon import HorizonKind

MAX_INDIVIDUALS = 200  # the view draws one emoji per individual; `pdbench evolve` takes more
MAX_COUNT = 50  # per player, on its slider
MAX_GENERATIONS = 1000
MAX_ROUNDS = 200

# The presets of `--payoff-matrix` (The Evolution of Trust's coins: R=2, S=-1, T=3, P=0; Axelrod's 3, 0, 5, 1).
PAYOFFS: dict[str, dict[str, dict[str, list[float]]]] = {
    name: PAYOFF_PRESETS[name].to_mapping() for name in ("trust", "axelrod")
}
PAYOFF_LABELS = {
    "trust": "🪙 The Evolution of Trust: R 2, S −1, T 3, P 0",
    "axelrod": "📐 Axelrod: R 3, S 0, T 5, P 1",
}
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
    k: int = 5
    payoffs: str = "trust"
    payoff_mode: str = PayoffMode.exact.value
    seed: int = 0

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
            "payoff_matrix": PAYOFFS[self.payoffs],
            "selection": self.selection,
            "fitness": self.fitness,
            "mutation": self.mutation,
            "k": k,
            "seed": self.seed,
            "payoff_mode": self.payoff_mode,
        }
        return EvolutionSettings.model_validate(data)


def same_settings(a: EvolutionSettings, b: EvolutionSettings) -> bool:
    """Whether two runs were asked for alike (every setting, as stored)."""
    return a.model_dump(mode="json") == b.model_dump(mode="json")


# ----------------------------------------------------------------------------------------- presets


def _share(trajectory: Trajectory, player: str, row: int = -1) -> float:
    return float(trajectory.shares()[row][trajectory.players.index(player)])


def _count(trajectory: Trajectory, player: str, row: int = -1) -> int:
    return int(trajectory.population[row][trajectory.players.index(player)])


def _match(trajectory: Trajectory, player: str, opponent: str) -> float:
    """The mean payoff of one match of ``player`` against ``opponent``, from the table the run used."""
    i, j = trajectory.players.index(player), trajectory.players.index(opponent)
    return float(trajectory.payoffs.values[i, j])


def _gone_at(trajectory: Trajectory, player: str) -> int | None:
    """The first generation after which ``player`` has no individual left (and none comes back), else None."""
    column = np.asarray(trajectory.population)[:, trajectory.players.index(player)]
    alive = np.flatnonzero(column > 0)
    if len(alive) == 0 or alive[-1] == len(column) - 1:
        return None
    return int(alive[-1]) + 1


def _n(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0")


def _fixed(t: Trajectory, player: str) -> bool:
    return t.fixation is not None and t.fixation.player == player


def _exploited(s: EvolutionSettings, t: Trajectory) -> str | None:
    """ALLC dies out, ALLD grows while it lasts, then TFT takes over."""
    gone = _gone_at(t, "ALLC")
    alld = np.asarray(t.population)[:, t.players.index("ALLD")]
    peak = int(alld.argmax())
    if gone is None or t.fixation is None or not _fixed(t, "TFT") or alld[peak] <= alld[0]:
        return None
    return (
        f"ALLD takes {_n(_match(t, 'ALLD', 'ALLC'))} points a match from ALLC, which gets "
        f"{_n(_match(t, 'ALLC', 'ALLD'))}: ALLC went from {_count(t, 'ALLC', 0)} to none by generation {gone}, and "
        f"ALLD grew on it from {int(alld[0])} to {int(alld[peak])} (generation {peak}); then, with no one left to "
        f"exploit, ALLD lost to TFT, which every individual plays from generation {t.fixation.generation}."
    )


def _few_rounds(s: EvolutionSettings, t: Trajectory) -> str | None:
    """ALLD takes over, having scored more against TFT than TFT against it."""
    if t.fixation is None or not _fixed(t, "ALLD") or _match(t, "ALLD", "TFT") <= _match(t, "TFT", "ALLD"):
        return None
    rounds = s.horizon.n_rounds
    return (
        f"In a {rounds}-round match ALLD takes {_n(_match(t, 'ALLD', 'TFT'))} from TFT, which gets "
        f"{_n(_match(t, 'TFT', 'ALLD'))}, and two TFTs make only {_n(_match(t, 'TFT', 'TFT'))}: reciprocity has no "
        f"time to pay back. ALLD went from {_count(t, 'ALLD', 0)} of {t.size} to all of them by generation "
        f"{t.fixation.generation}."
    )


def _noise_gtft(s: EvolutionSettings, t: Trajectory) -> str | None:
    """GTFT starts smaller than TFT and ends larger; two GTFTs score more together than two TFTs."""
    start_g, start_t = _count(t, "GTFT", 0), _count(t, "TFT", 0)
    end_g, end_t = _share(t, "GTFT"), _share(t, "TFT")
    tft, gtft = _match(t, "TFT", "TFT"), _match(t, "GTFT", "GTFT")
    if not (start_g < start_t and end_g > end_t and gtft > tft):
        return None
    return (
        f"With {s.noise:.0%} of moves flipped, two TFTs echo each mistake and made {_n(tft)} points a match, two "
        f"GTFTs, who forgive some, {_n(gtft)}, and GTFT made {_n(_match(t, 'GTFT', 'TFT'))} against TFT: GTFT went "
        f"from {start_g} of {t.size} to {end_g:.0%} of the population, TFT from {start_t} to {end_t:.0%}."
    )


def _too_noisy(s: EvolutionSettings, t: Trajectory) -> str | None:
    """ALLD takes over, having scored more against TFT than TFT against it."""
    if t.fixation is None or not _fixed(t, "ALLD") or _match(t, "ALLD", "TFT") <= _match(t, "TFT", "ALLD"):
        return None
    return (
        f"With {s.noise:.0%} of moves flipped, two TFTs made only {_n(_match(t, 'TFT', 'TFT'))} points a match, "
        f"and ALLD made {_n(_match(t, 'ALLD', 'TFT'))} against TFT, which got {_n(_match(t, 'TFT', 'ALLD'))}: ALLD "
        f"went from {_count(t, 'ALLD', 0)} of {t.size} to all of them by generation {t.fixation.generation}."
    )


WEAK, STRONG = 0.01, 1.0  # the selection presets' w


def _odds(s: EvolutionSettings, t: Trajectory, w: float) -> float:
    """The probability that the first player takes over this run's population from its start at selection ``w``
    (the Moran process's closed form, on the per-round payoffs of the run's table)."""
    rates = t.payoffs.per_round(s.game_horizon.expected_length())
    start = int(t.population[0][0])
    return fixation_probability(np.asarray(rates), int(t.size or 0), start, w, s.fitness)


def _selection(s: EvolutionSettings, t: Trajectory) -> str | None:
    """Someone took over; the exact odds at both strengths say how much of it was selection."""
    if t.fixation is None or len(t.players) != 2:
        return None
    first, other = t.players
    weak, strong = _odds(s, t, WEAK), _odds(s, t, STRONG)
    return (
        f"From {_count(t, first, 0)} {first} and {_count(t, other, 0)} {other}, {first} takes over in {weak:.0%} of "
        f"runs at w = {WEAK:g} and in {strong:.0%} at w = {STRONG:g} (the Moran process's exact fixation "
        f"probability on these payoffs per round). This run, at w = {s.selection:g}: {t.fixation.player} took over "
        f"at step {t.fixation.generation}."
    )


def _strong(s: EvolutionSettings, t: Trajectory) -> str | None:
    """TFT takes over, as selection makes near certain."""
    return _selection(s, t) if _fixed(t, "TFT") else None


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


@dataclass(frozen=True, slots=True)
class Preset:
    """A scenario: its form, and its lesson with the reading of a run that shows it (see the module's doc)."""

    key: str
    title: str
    blurb: str
    lesson: str
    form: Form
    shows: Callable[[EvolutionSettings, Trajectory], str | None] = field(repr=False)

    def settings(self) -> EvolutionSettings:
        return self.form.settings()


_TRUST = Form(players=(), counts=())  # The Evolution of Trust: 25 agents, 10 rounds a match, 5 replaced

# The selection presets: two halves of TFT and ALLD under the Moran process, 1,000 steps (enough to fix)
_TWO_HALVES = replace(_TRUST, players=("TFT", "ALLD"), counts=(10, 10), dynamics=Dynamics.moran.value, generations=1000)

PRESETS: tuple[Preset, ...] = (
    Preset(
        key="exploited",
        title="🕊️ Exploited",
        blurb="15 ALLC, 5 ALLD and 5 TFT, 10 rounds a match.",
        lesson="ALLC is exploited and dies out; then TFT takes over.",
        form=replace(_TRUST, players=("ALLC", "ALLD", "TFT"), counts=(15, 5, 5)),
        shows=_exploited,
    ),
    Preset(
        key="few_rounds",
        title="⏱️ Few rounds",
        blurb="ALLC, ALLD, TFT and GRIM, only 2 rounds a match.",
        lesson="With few rounds per match, ALLD takes over.",
        form=replace(_TRUST, players=("ALLC", "ALLD", "TFT", "GRIM"), counts=(7, 6, 6, 6), rounds=2),
        shows=_few_rounds,
    ),
    Preset(
        key="noise",
        title="🎲 A little noise",
        blurb="17 TFT and 8 GTFT, 50 rounds a match, 5% of moves flipped.",
        lesson="Noise lets Generous TFT overtake TFT.",
        form=replace(_TRUST, players=("TFT", "GTFT"), counts=(17, 8), rounds=50, noise=0.05, generations=200),
        shows=_noise_gtft,
    ),
    Preset(
        key="too_noisy",
        title="🌪️ Too much noise",
        blurb="ALLC, ALLD and TFT, 20% of moves flipped (payoffs estimated once).",
        lesson="With too much noise, ALLD takes over.",
        form=replace(
            _TRUST, players=("ALLC", "ALLD", "TFT"), counts=(8, 8, 9), noise=0.2, payoff_mode=PayoffMode.estimated.value
        ),
        shows=_too_noisy,
    ),
    Preset(
        key="weak_selection",
        title="🎚️ Weak selection",
        blurb=f"10 TFT and 10 ALLD, Moran process, w = {WEAK:g}.",
        lesson="Under weak selection, chance decides which half takes over.",
        form=replace(_TWO_HALVES, selection=WEAK),
        shows=_selection,
    ),
    Preset(
        key="strong_selection",
        title="💪 Strong selection",
        blurb=f"The same 10 TFT and 10 ALLD at w = {STRONG:g}.",
        lesson="Under strong selection, TFT takes over almost surely.",
        form=replace(_TWO_HALVES, selection=STRONG),
        shows=_strong,
    ),
)
PRESETS_BY_KEY = {p.key: p for p in PRESETS}


def preset_of(settings: EvolutionSettings) -> Preset | None:
    """The preset whose settings these are, if any (a run made from a preset and left unchanged)."""
    return next((p for p in PRESETS if same_settings(p.settings(), settings)), None)
