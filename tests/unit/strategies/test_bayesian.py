"""PAYNE_BAYES (Payne & Alloui-Cros 2025's BayesianAgent) through real matches against scripted opponents.

Each expectation is worked from their code (github.com/HCSS-Data-Lab/Strategic-LLM-IPD, evolutionary_PD_expanded.py,
``BayesianAgent``): round 1 C, round 2 Tit for Tat; from round 3 an update of the posterior over ten hypotheses
(prior 0.1 each; 0.95 for a hypothesis whose prediction of the opponent's last move was right, 0.05 if wrong, 0.5 for
RANDOM), then the counter-move for the leader if it is above 0.7 after at least 3 updates, else Tit for Tat.
"""

from __future__ import annotations

import random

import pytest

from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies import make_spec
from harness.players.strategies.bayesian import BayesianPayne, Hypothesis
from tests.unit.strategies.versus import versus

# Random(5) draws 0.623 0.742 0.795 0.942 0.740 0.922: none below 0.1, so in each update the GENEROUS_TFT
# hypothesis predicts what TIT_FOR_TAT does (this player's move of the round before).
SEED = 5


def test_it_finds_the_alternator_and_defects_against_it() -> None:
    """Against ALT (C, D, C, D, ...). Hypotheses right (+) or wrong (-) about the opponent's move just played;
    RANDOM always 0.5. Posteriors are exact arithmetic on the prior 0.1 and these hits:

    round 3, seeing D (round 2): + GRIM GRADUAL (a D was played) PROBER (D in round 2) ALT; - TFT STFT GTFT
      (this player's C of round 1) WSLS (the opponent's own C of round 1) ALLC. Leaders 0.2088: TFT, D.
    round 4, seeing C: + TFT STFT GTFT (this player's C of round 2) PROBER (C in round 3) ALT ALLC; - GRIM GRADUAL
      WSLS. Leaders PROBER and ALT 0.3853 after 2 updates: TFT, C.
    round 5, seeing D: + TFT STFT GTFT (this player's D of round 3) GRIM GRADUAL ALT; - WSLS PROBER (round 2 was D:
      it predicts the opponent's previous move, C) ALLC. ALT 0.6828, not above 0.7: TFT, D.
    round 6, seeing C: + TFT STFT GTFT ALT ALLC; - GRIM GRADUAL WSLS PROBER. ALT 0.8028 after 4 updates: its
      counter-move, D.
    round 7, seeing D: + TFT STFT GTFT (this player's D of round 5) GRIM GRADUAL ALT; - WSLS PROBER ALLC.
      ALT 0.8305: D.
    round 8, seeing C: + ALT ALLC; - the rest (this player's D of round 6, the opponent's D of round 6, a D
      played). ALT 0.9709: D.
    """
    versus("PAYNE_BAYES", "CD", "CC CD DC CD DC DD DC DD", seed=SEED)
    leaders = [(h, round(p, 4)) for h, p in _posteriors("CDCDCDC", "CCDCDDD")]
    assert leaders == [
        (Hypothesis.GRIM_TRIGGER, 0.2088),
        (Hypothesis.PROBER, 0.3853),
        (Hypothesis.ALTERNATOR, 0.6828),
        (Hypothesis.ALTERNATOR, 0.8028),
        (Hypothesis.ALTERNATOR, 0.8305),
        (Hypothesis.ALTERNATOR, 0.9709),
    ]


def _posteriors(theirs: str, mine: str) -> list[tuple[Hypothesis, float]]:
    """The leading hypothesis and its probability after each update, feeding the rounds one by one."""
    player = make_spec("PAYNE_BAYES").build(PayoffMatrix(), random.Random(SEED))
    assert isinstance(player, BayesianPayne)
    own: list[Action] = []
    opp: list[Action] = []
    out = []
    for my_move, their_move in zip(mine, theirs, strict=True):
        evidence = player.evidence
        player.move(own, opp)
        if player.evidence > evidence:
            leader = max(Hypothesis, key=lambda h: player.posterior[h])
            out.append((leader, player.posterior[leader]))
        own.append("C" if my_move == "C" else "D")
        opp.append("C" if their_move == "C" else "D")
    player.move(own, opp)
    leader = max(Hypothesis, key=lambda h: player.posterior[h])
    return [*out, (leader, player.posterior[leader])]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_always_defect_three_hypotheses_tie_and_it_plays_tit_for_tat(seed: int) -> None:
    # From round 3 GRIM, GRADUAL (a D was played) and WSLS (the opponent's own previous move, D) are right each
    # round: none can pass 1/3, so it never leaves Tit for Tat, whatever its draws.
    versus("PAYNE_BAYES", "D", "CD DD DD DD DD DD DD DD DD DD", seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_always_cooperate_seven_hypotheses_tie_and_it_never_exploits(seed: int) -> None:
    # TFT, STFT, GTFT (this player's C), GRIM, GRADUAL (no D), WSLS (the opponent's C) and ALLC are right every
    # round: at most 1/7 each, so Tit for Tat: C for ever, though ALLC is the hypothesis it would exploit.
    versus("PAYNE_BAYES", "C", "CC CC CC CC CC CC CC CC CC CC", seed=seed)
