"""The Evolution of Trust's lessons as scenarios: settings, and a one-line lesson read from the run.

Shared by the dashboard's 🧬 Evolution view (its scenario buttons) and ``pdbench evolve --scenario NAME``, so a
teacher gets the same run and the same reading from either. A :class:`Scenario` is its settings and a lesson that
is *read from the run*, never asserted beside it: :attr:`Scenario.shows` looks at the trajectory and returns the
evidence (numbers of that run) or None when the run does not show the lesson. Both front ends print the lesson
only with that evidence, and the tests run every scenario with its seed and check the lesson with their own
reading of the trajectory (tests/unit/evolution/test_scenarios.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.config.presets.payoffs import PAYOFF_PRESETS
from harness.errors import ConfigError
from harness.evolution.fixation import fixation_probability
from harness.evolution.settings import Dynamics, EvolutionSettings, Fitness, PayoffMode
from harness.evolution.trajectory import Trajectory
from harness.game.horizon import HorizonKind

Reader = Callable[[EvolutionSettings, Trajectory], str | None]


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


def _alld_beat_tft(t: Trajectory) -> bool:
    """ALLD took over, having scored more against TFT than TFT against it (the two ALLD lessons' evidence)."""
    return _fixed(t, "ALLD") and _match(t, "ALLD", "TFT") > _match(t, "TFT", "ALLD")


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
    if t.fixation is None or not _alld_beat_tft(t):
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
    if t.fixation is None or not _alld_beat_tft(t):
        return None
    return (
        f"With {s.noise:.0%} of moves flipped, two TFTs made only {_n(_match(t, 'TFT', 'TFT'))} points a match, "
        f"and ALLD made {_n(_match(t, 'ALLD', 'TFT'))} against TFT, which got {_n(_match(t, 'TFT', 'ALLD'))}: ALLD "
        f"went from {_count(t, 'ALLD', 0)} of {t.size} to all of them by generation {t.fixation.generation}."
    )


WEAK, STRONG = 0.01, 1.0  # the selection scenarios' w


def _odds(s: EvolutionSettings, t: Trajectory, w: float) -> float:
    """The probability that the first player takes over this run's population from its start at selection ``w``
    (the Moran process's closed form, on the per-round payoffs of the run's table)."""
    rates = t.payoffs.per_round(s.game_horizon.expected_length())
    start = int(t.population[0][0])
    return fixation_probability(np.asarray(rates), int(t.size or 0), start, w, s.fitness)


def _selection(s: EvolutionSettings, t: Trajectory) -> str | None:
    """Someone took over; the exact odds at both strengths say how much of it was selection."""
    if t.fixation is None or len(t.players) != 2 or s.dynamics != Dynamics.moran:
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


@dataclass(frozen=True, slots=True)
class Scenario:
    """A lesson of The Evolution of Trust: its settings (the keys of :class:`EvolutionSettings`) and the reading
    of a run that shows it (see the module's doc)."""

    key: str
    title: str
    blurb: str
    lesson: str
    data: dict[str, Any] = field(repr=False)
    shows: Reader = field(repr=False)

    def settings(self) -> EvolutionSettings:
        return EvolutionSettings.model_validate(self.data)

    def evidence(self, settings: EvolutionSettings, trajectory: Trajectory) -> str | None:
        """The lesson's evidence in this run, or None when the run does not show it; a run whose players are not
        the scenario's (one changed from the command line) may not show it, and is read only if it has them all."""
        if not set(self.data["players"]) <= set(trajectory.players):
            return None
        return self.shows(settings, trajectory)


# The Evolution of Trust's game: its coins, 10 rounds a match, 5 of 25 agents replaced each generation.
_TRUST: dict[str, Any] = {
    "dynamics": Dynamics.trust.value,
    "generations": 50,
    "horizon": {"type": HorizonKind.FIXED.value, "n_rounds": 10},
    "noise": 0.0,
    "payoff_matrix": PAYOFF_PRESETS["trust"].to_mapping(),
    "selection": 1.0,
    "fitness": Fitness.exponential.value,
    "mutation": 0.0,
    "k": 5,
    "seed": 0,
    "payoff_mode": PayoffMode.exact.value,
}
# The selection scenarios: two halves of TFT and ALLD under the Moran process, 1,000 steps (enough to fix)
_TWO_HALVES = {
    **_TRUST,
    "players": ["TFT", "ALLD"],
    "counts": [10, 10],
    "dynamics": Dynamics.moran.value,
    "generations": 1000,
    "k": 1,
}

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        key="exploited",
        title="🕊️ Exploited",
        blurb="15 ALLC, 5 ALLD and 5 TFT, 10 rounds a match.",
        lesson="ALLC is exploited and dies out; then TFT takes over.",
        data={**_TRUST, "players": ["ALLC", "ALLD", "TFT"], "counts": [15, 5, 5]},
        shows=_exploited,
    ),
    Scenario(
        key="few_rounds",
        title="⏱️ Few rounds",
        blurb="ALLC, ALLD, TFT and GRIM, only 2 rounds a match.",
        lesson="With few rounds per match, ALLD takes over.",
        data={
            **_TRUST,
            "players": ["ALLC", "ALLD", "TFT", "GRIM"],
            "counts": [7, 6, 6, 6],
            "horizon": {"type": HorizonKind.FIXED.value, "n_rounds": 2},
        },
        shows=_few_rounds,
    ),
    Scenario(
        key="noise",
        title="🎲 A little noise",
        blurb="17 TFT and 8 GTFT, 50 rounds a match, 5% of moves flipped.",
        lesson="Noise lets Generous TFT overtake TFT.",
        data={
            **_TRUST,
            "players": ["TFT", "GTFT"],
            "counts": [17, 8],
            "horizon": {"type": HorizonKind.FIXED.value, "n_rounds": 50},
            "noise": 0.05,
            "generations": 200,
        },
        shows=_noise_gtft,
    ),
    Scenario(
        key="too_noisy",
        title="🌪️ Too much noise",
        blurb="ALLC, ALLD and TFT, 20% of moves flipped (payoffs estimated once).",
        lesson="With too much noise, ALLD takes over.",
        data={
            **_TRUST,
            "players": ["ALLC", "ALLD", "TFT"],
            "counts": [8, 8, 9],
            "noise": 0.2,
            "payoff_mode": PayoffMode.estimated.value,
        },
        shows=_too_noisy,
    ),
    Scenario(
        key="weak_selection",
        title="🎚️ Weak selection",
        blurb=f"10 TFT and 10 ALLD, Moran process, w = {WEAK:g}.",
        lesson="Under weak selection, chance decides which half takes over.",
        data={**_TWO_HALVES, "selection": WEAK},
        shows=_selection,
    ),
    Scenario(
        key="strong_selection",
        title="💪 Strong selection",
        blurb=f"The same 10 TFT and 10 ALLD at w = {STRONG:g}.",
        lesson="Under strong selection, TFT takes over almost surely.",
        data={**_TWO_HALVES, "selection": STRONG},
        shows=_strong,
    ),
)
SCENARIOS_BY_KEY = {s.key: s for s in SCENARIOS}


def same_settings(a: EvolutionSettings, b: EvolutionSettings) -> bool:
    """Whether two runs were asked for alike (every setting, as stored)."""
    return a.model_dump(mode="json") == b.model_dump(mode="json")


def scenario_of(settings: EvolutionSettings) -> Scenario | None:
    """The scenario whose settings these are, if any (a run made from a scenario and left unchanged)."""
    return next((s for s in SCENARIOS if same_settings(s.settings(), settings)), None)


def scenario_named(name: str) -> Scenario:
    """The scenario ``name`` (``few_rounds`` or ``few-rounds``); a one-paragraph :class:`ConfigError` naming them
    all, with the closest, otherwise."""
    key = name.strip().lower().replace("-", "_")
    if key in SCENARIOS_BY_KEY:
        return SCENARIOS_BY_KEY[key]
    close = difflib.get_close_matches(key, list(SCENARIOS_BY_KEY), n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise ConfigError(
        f"--scenario {name!r} is not a scenario{hint}; the scenarios are {', '.join(SCENARIOS_BY_KEY)}: "
        "`pdbench evolve --scenario list` shows each with its lesson"
    )
