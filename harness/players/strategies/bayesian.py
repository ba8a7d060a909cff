"""Payne & Alloui-Cros (2025)'s Bayesian agent: it guesses which of ten strategies the opponent plays and
answers the guess. Ported as their code plays it, odd predictions included, so their tournaments can be rerun.

Source: github.com/HCSS-Data-Lab/Strategic-LLM-IPD, ``evolutionary_PD_expanded.py`` (commit 5a61dcb),
``BayesianAgent``. What it does, move by move (t rounds played so far):

- Round 1: C. Round 2: the opponent's last move (Tit for Tat): there is no evidence yet.
- From round 3, it first updates a posterior over ten hypotheses (uniform 0.1 each at the start): the
  opponent's last move has likelihood 0.95 under a hypothesis that predicted it and 0.05 under one that did
  not (0.5 under RANDOM); then it normalises. Each prediction is of the opponent's move in round t, made
  from the rounds before it, and some read differently from the strategy they are named after:
  TIT_FOR_TAT and SUSPICIOUS_TFT predict this player's move of round t - 1; GENEROUS_TFT the same, or C with
  probability 0.1 (a draw from this player's stream, every update); WIN_STAY_LOSE_SHIFT the opponent's own
  move of round t - 1; GRIM_TRIGGER and GRADUAL predict D if the opponent has defected in any round up to
  and including round t; PROBER predicts D in round 2, C in round 3, then D if the opponent played C in
  rounds 2 and 3, else the opponent's move of round t - 1; ALTERNATOR C in odd rounds, D in even ones;
  ALWAYS_COOPERATE C.
- If the most likely hypothesis (of equals, the first as :class:`Hypothesis` lists them) has a probability
  above 0.7 and at least 3 updates have been made, it plays the counter-move for it
  (:meth:`BayesianPayne._counter`); else Tit for Tat.
"""

from __future__ import annotations

import enum

from harness.game.rules import Action
from harness.players.strategies.base import INFINITE_MEMORY, Strategy


class Hypothesis(enum.IntEnum):
    """The opponent strategies it weighs, in the order their code lists them (which decides ties)."""

    TIT_FOR_TAT = 0
    GRIM_TRIGGER = 1
    WIN_STAY_LOSE_SHIFT = 2
    RANDOM = 3
    GENEROUS_TFT = 4
    SUSPICIOUS_TFT = 5
    GRADUAL = 6
    PROBER = 7
    ALTERNATOR = 8
    ALWAYS_COOPERATE = 9


_PRIOR = 0.1
_HIT, _MISS, _COIN = 0.95, 0.05, 0.5
_CONFIDENT = 0.7  # the leading hypothesis must be above this...
_MIN_EVIDENCE = 3  # ...after at least this many updates
_FORGIVE = 0.1  # the GENEROUS_TFT hypothesis's forgiveness


def _other(move: Action) -> Action:
    return "D" if move == "C" else "C"


class BayesianPayne(Strategy):
    name = "PAYNE_BAYES"
    display_name = "Bayesian (Payne & Alloui-Cros)"
    description = (
        "Payne & Alloui-Cros (2025)'s Bayesian agent: a posterior over ten opponent strategies; "
        "above 0.7 after 3 updates, a counter-move for the leader, else Tit for Tat."
    )
    emoji = "🔮"
    memory_depth = INFINITE_MEMORY  # the posterior carries every round
    stochastic = True  # the GENEROUS_TFT hypothesis draws once per update

    __slots__ = ("evidence", "opponent_defected", "posterior")

    posterior: list[float]  # indexed by Hypothesis
    evidence: int  # updates made
    opponent_defected: bool  # the opponent has played D in some round (GRIM_TRIGGER and GRADUAL read it)

    def reset(self) -> None:
        self.posterior = [_PRIOR] * len(Hypothesis)
        self.evidence = 0
        self.opponent_defected = False

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not opp:
            return "C"
        if opp[-1] == "D":
            self.opponent_defected = True
        if len(opp) >= 2:
            self._update(own, opp)
        leader = max(Hypothesis, key=lambda h: self.posterior[h])  # max keeps the first of equals
        if self.posterior[leader] > _CONFIDENT and self.evidence >= _MIN_EVIDENCE:
            return self._counter(leader, own, opp)
        return opp[-1]

    def _update(self, own: list[Action], opp: list[Action]) -> None:
        seen = opp[-1]
        weighted = []
        for h in Hypothesis:
            predicted = self._predict(h, own, opp)
            likelihood = _COIN if predicted is None else _HIT if predicted == seen else _MISS
            weighted.append(self.posterior[h] * likelihood)
        total = 0.0
        for w in weighted:  # summed in order, as theirs is, so the floats agree
            total += w
        self.posterior = [w / total for w in weighted]
        self.evidence += 1

    def _predict(self, h: Hypothesis, own: list[Action], opp: list[Action]) -> Action | None:
        """The opponent's move of round t (= len(opp)) under ``h``, as their ``predict_strategy_move`` makes it."""
        my_before, their_before, index = own[-2], opp[-2], len(opp) - 1
        match h:
            case Hypothesis.TIT_FOR_TAT | Hypothesis.SUSPICIOUS_TFT:
                return my_before
            case Hypothesis.GRIM_TRIGGER | Hypothesis.GRADUAL:
                return "D" if self.opponent_defected else "C"
            case Hypothesis.WIN_STAY_LOSE_SHIFT:
                # their "win" test compares this player's move with the opponent's and returns this
                # player's move or its opposite: always the opponent's own previous move
                return my_before if my_before == their_before else _other(my_before)
            case Hypothesis.RANDOM:
                return None
            case Hypothesis.GENEROUS_TFT:
                return "C" if self.rng.random() < _FORGIVE else my_before
            case Hypothesis.PROBER:
                if index == 1:
                    return "D"
                if index == 2:
                    return "C"
                return "D" if opp[1] == "C" and opp[2] == "C" else their_before
            case Hypothesis.ALTERNATOR:
                return "D" if index % 2 == 1 else "C"
            case Hypothesis.ALWAYS_COOPERATE:
                return "C"

    def _counter(self, leader: Hypothesis, own: list[Action], opp: list[Action]) -> Action:
        """Their ``choose_counter_strategy``. Left out, as they never run: its PROBER branch's C while fewer
        than 3 rounds are played and its WIN_STAY_LOSE_SHIFT branch's C before any round (3 updates need 4
        rounds), and its closing Tit for Tat (every hypothesis has a branch)."""
        match leader:
            case Hypothesis.ALWAYS_COOPERATE | Hypothesis.GENEROUS_TFT | Hypothesis.ALTERNATOR | Hypothesis.RANDOM:
                return "D"
            case Hypothesis.GRIM_TRIGGER | Hypothesis.SUSPICIOUS_TFT | Hypothesis.GRADUAL:
                return "D" if self.opponent_defected else "C"
            case Hypothesis.TIT_FOR_TAT:
                return "C"
            case Hypothesis.WIN_STAY_LOSE_SHIFT:
                return "D" if len(own) % 2 == 0 else "C"
            case Hypothesis.PROBER:
                return opp[-1]


STRATEGIES: tuple[type[Strategy], ...] = (BayesianPayne,)
