"""The squared_share dynamics (harness/evolution/phases.py): Payne & Alloui-Cros (2025)'s phases, a round robin of
individual agents with one match per pair, then the squared-share update on each strategy's pooled score.

The update rule itself is pinned by tests/unit/test_squared_share.py (hand-worked phases and the 16 released
updates); here: who meets whom, what a phase tallies, the last phase, seeding, and what the dynamics refuses.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.evolution import EvolutionSettings, evolve
from harness.evolution.squared_share import next_counts
from harness.game.seeds import derive_seed
from harness.players.strategies import parse_spec
from harness.players.strategies.play import play_seeded


def _settings(**changes: object) -> EvolutionSettings:
    base: dict[str, object] = {
        "dynamics": "squared_share",
        "players": ["TFT", "ALLD", "ALLC"],
        "counts": [1, 1, 2],
        "generations": 2,
        "horizon": {"type": "fixed", "n_rounds": 3},
    }
    return EvolutionSettings.model_validate({**base, **changes})


def test_a_small_population_worked_by_hand() -> None:
    """TFT x1, ALLD x1, ALLC x2, 3-round matches, T=5 R=3 P=1 S=0; 2 updates, so 3 phases.

    Phase 1 (agents TFT, ALLD, ALLC, ALLC; 6 matches of 3 rounds):
      TFT-ALLD  C D D / D D D: TFT 0+1+1 = 2, ALLD 5+1+1 = 7
      TFT-ALLC x2: 9 / 9 each;  ALLD-ALLC x2: 15 / 0 each;  ALLC-ALLC: 9 / 9 (both sides count)
      pooled: TFT 2+9+9 = 20 over 9 rounds; ALLD 7+15+15 = 37 over 9; ALLC (9+0+9) x 2 = 36 over 18
      fitness 20/9, 37/9, 2; unweighted mean (20/9 + 37/9 + 18/9) / 3 = 25/9
      squared relative x count: TFT (20/25)^2 = 0.64 -> 1; ALLD (37/25)^2 = 2.19 -> 2; ALLC (18/25)^2 x 2 = 1.04 -> 1
      total 4 = N: TFT 1, ALLD 2, ALLC 1.
    Phase 2 (agents TFT, ALLD, ALLD, ALLC):
      TFT-ALLD x2: 2 / 7 each; TFT-ALLC: 9 / 9; ALLD-ALLD: 3 / 3; ALLD-ALLC x2: 15 / 0 each
      pooled: TFT 2+2+9 = 13 over 9; ALLD (7+3+15) x 2 = 50 over 18; ALLC 9+0+0 = 9 over 9
      fitness 13/9, 25/9, 1; mean 47/27
      TFT (39/47)^2 = 0.69 -> 1; ALLD (75/47)^2 x 2 = 5.09 -> 5; ALLC (27/47)^2 = 0.33 -> 0 (extinct)
      total 6 > 4: the lowest-fitness strategy still above 0 loses one, twice: TFT 1 -> 0, then ALLD 5 -> 4.
    Phase 3, on the last population (ALLD x4, no update after it): 6 matches of 3 x P: 36 points over 36 rounds.
    """
    trajectory = evolve(_settings())
    assert trajectory.population.tolist() == [[1, 1, 2], [1, 2, 1], [0, 4, 0]]
    assert [p.generation for p in trajectory.phases] == [0, 1, 2]
    assert [p.points.tolist() for p in trajectory.phases] == [[20, 37, 36], [13, 50, 9], [0, 36, 0]]
    assert [p.rounds.tolist() for p in trajectory.phases] == [[9, 9, 18], [9, 18, 9], [0, 36, 0]]
    # each agent meets the N - 1 = 3 others once
    assert [p.matches.tolist() for p in trajectory.phases] == [[3, 3, 6], [3, 6, 3], [0, 12, 0]]
    assert trajectory.fixation is not None and trajectory.fixation.generation == 2
    # the payoff table is the mean over exactly the matches played: TFT-ALLD 3 (1 + 2), ALLD-ALLD 1 + 6
    assert trajectory.payoffs.matches[0, 1] == 3 and trajectory.payoffs.matches[1, 1] == 7
    assert trajectory.payoffs.values[0, 1] == 2 and trajectory.payoffs.values[1, 0] == 7


def test_extinction_is_permanent_and_every_phase_is_played() -> None:
    # After fixation the run goes on (as theirs did): every update leaves ALLD x4 and every phase is played.
    trajectory = evolve(_settings(generations=4))
    assert trajectory.population.tolist()[2:] == [[0, 4, 0]] * 3
    assert len(trajectory.phases) == 5  # their 5 phases = 4 updates
    assert trajectory.phases[-1].generation == 4 and trajectory.phases[-1].points.tolist() == [0, 36, 0]


GEOMETRIC = {"type": "geometric", "stop_prob": 0.25, "max_rounds": 30}


def test_each_match_draws_its_own_length_from_the_run_seed() -> None:
    # Phase 1's tallies recomputed independently: every agent pair i < j (in population order) plays one game with
    # play_seeded, seeded by (run seed, "evolution", "phase", 0, i, j), its length drawn by the horizon.
    settings = _settings(
        players=["TFT", "ALLD", "RAND"], counts=[2, 2, 2], horizon=GEOMETRIC, generations=1, seed=11
    )  # fmt: skip
    trajectory = evolve(settings)
    agents = [0, 0, 1, 1, 2, 2]
    specs = [parse_spec(p) for p in settings.players]
    points, rounds, lengths = np.zeros(3), np.zeros(3, dtype=int), []
    for i in range(6):
        for j in range(i + 1, 6):
            seed = derive_seed(11, "evolution", "phase", 0, i, j)
            match = play_seeded(
                specs[agents[i]], specs[agents[j]], settings.payoff_matrix, settings.game_horizon, 0, seed
            )
            points[agents[i]] += match.score_a
            points[agents[j]] += match.score_b
            rounds[agents[i]] += match.rounds_played
            rounds[agents[j]] += match.rounds_played
            lengths.append(match.rounds_played)
    assert len(set(lengths)) > 1  # the 15 matches do not share one length
    first = trajectory.phases[0]
    assert first.points.tolist() == points.tolist() and first.rounds.tolist() == rounds.tolist()
    fitness = {p: points[t] / rounds[t] for t, p in enumerate(settings.players)}
    expected = next_counts(dict(zip(settings.players, [2, 2, 2], strict=True)), fitness)
    assert trajectory.population[1].tolist() == [expected.get(p, 0) for p in settings.players]


def test_the_same_seed_replays_the_same_run() -> None:
    settings = _settings(players=["TFT", "ALLD", "RAND", "GTFT(p=0.1)"], counts=[3, 3, 3, 3], horizon=GEOMETRIC)
    one, two = evolve(settings), evolve(settings)
    assert one.population.tolist() == two.population.tolist()
    assert [p.points.tolist() for p in one.phases] == [p.points.tolist() for p in two.phases]
    assert [p.rounds.tolist() for p in one.phases] == [p.rounds.tolist() for p in two.phases]
    other = evolve(settings.model_copy(update={"seed": 1}))
    assert [p.rounds.tolist() for p in other.phases] != [p.rounds.tolist() for p in one.phases]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"mutation": 0.01}, "mutation 0.01"),
        ({"selection": 0.1}, "selection 0.1"),
        ({"fitness": "exponential"}, "fitness exponential"),
        ({"score": "match_total"}, "score match_total"),
        ({"payoff_mode": "estimated"}, "payoff_mode estimated"),
        ({"k": 2}, "k 2"),
        ({"counts": [500, 500, 1]}, "at most 1,000 agents"),
    ],
)
def test_options_it_cannot_honour_are_refused(change: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match="squared_share") as caught:
        _settings(**change)
    assert named in str(caught.value)


def test_wsls_as_payne_codes_it_and_tft_stay_two_types() -> None:
    """WSLS(win=CC_or_DD) plays Tit for Tat's moves, but Payne & Alloui-Cros count it as its own strategy:
    selection must keep its copies apart from TFT's.

    TFT x1, WSLS(win=CC_or_DD) x1, ALLD x2, 3-round matches, one update. Phase 1 (6 matches):
      TFT-WSLS: 9 / 9; TFT-ALLD and WSLS-ALLD (x2 each): 2 / 7; ALLD-ALLD: 3 / 3
      pooled: TFT 9+2+2 = 13 over 9 rounds; WSLS the same, 13 over 9; ALLD (7+7+3) x 2 = 34 over 18
      fitness 13/9, 13/9, 17/9; unweighted mean 43/27
      TFT and WSLS (39/43)^2 = 0.82 -> 1 each; ALLD (51/43)^2 x 2 = 2.81 -> 3; total 5 > 4: the lowest
      fitness still above 0 loses one, ties to the first in population order: TFT 1 -> 0.
    Two types, so three counts a generation and two fitnesses in the mean, though their moves are the same.
    """
    settings = _settings(players=["TFT", "WSLS(win=CC_or_DD)", "ALLD"], counts=[1, 1, 2], generations=1)
    assert settings.players == ["TFT", "WSLS(win=CC_or_DD)", "ALLD"]
    trajectory = evolve(settings)
    assert trajectory.phases[0].points.tolist() == [13, 13, 34]
    assert trajectory.population.tolist() == [[1, 1, 2], [0, 1, 3]]
