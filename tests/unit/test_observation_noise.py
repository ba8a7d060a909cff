"""Observation noise: each player sees the opponent's move flipped with probability q (its own draw), payoffs
use the moves as played. Pinned three ways: games without it are today's games bit for bit; hand-worked
sequences from scripted draws (TFT against TFT after one misperception: the echo of retaliation); and a
closed form for TFT against TFT under observation noise q alone (derived below)."""

from __future__ import annotations

import hashlib
import math
import random

import numpy as np
import pytest

from harness.game.horizon import FixedHorizon, FixedHorizonInfo, GeometricHorizon
from harness.game.match import Match, play_game
from harness.game.rules import PayoffMatrix
from harness.game.view import Decision, RoundView
from harness.players.strategies import make_spec
from harness.players.strategies.play import NO_DRAWS, play_seeded

GAME = PayoffMatrix()


class Scripted(random.Random):
    """A stream whose draws are written out: ``random()`` returns them in order, then 0.99 (no flip)."""

    def __init__(self, draws: list[float]) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0) if self.draws else 0.99


def _games_digest() -> str:
    """A digest of many seeded games of classic strategies (noiseless and noisy, fixed and geometric)."""
    h = hashlib.blake2b(digest_size=16)
    names = ["TFT", "WSLS", "GTFT", "RANDOM", "GRIM", "ALLC"]
    for i, x in enumerate(names):
        for y in names[i:]:
            for noise in (0.0, 0.05, 0.3):
                for seed in range(5):
                    for horizon in (FixedHorizon(40), GeometricHorizon(0.1, 200)):
                        m = play_seeded(make_spec(x), make_spec(y), GAME, horizon, noise, seed, observation=0.0)
                        assert m.observed_a == [] and m.observed_b == []
                        h.update("".join(m.moves_a + m.moves_b + m.intended_a + m.intended_b).encode())
                        h.update(repr((m.score_a, m.score_b)).encode())
    return h.hexdigest()


def test_without_observation_noise_games_are_those_played_before_it_existed() -> None:
    # The digest of the same games played by the code before observation noise existed (commit e01e672,
    # this digest function run against that commit's harness/): q = 0 draws nothing new and changes no move.
    assert _games_digest() == "b55ed79a01c19299b572e3d0d400aecf"


def test_observation_noise_leaves_the_execution_noise_draws_alone() -> None:
    # ALLC and ALLD ignore the history, so their played moves are the execution noise's flips alone: the same
    # with and without observation noise (its draws come from a stream of its own).
    horizon = FixedHorizon(300)
    for seed in range(3):
        plain = play_seeded(make_spec("ALLC"), make_spec("ALLD"), GAME, horizon, 0.1, seed)
        seen = play_seeded(make_spec("ALLC"), make_spec("ALLD"), GAME, horizon, 0.1, seed, observation=0.2)
        assert (seen.moves_a, seen.moves_b, seen.payoffs_a) == (plain.moves_a, plain.moves_b, plain.payoffs_a)
        assert seen.observed_a != seen.moves_b  # ... and some moves were seen flipped


# One misperception: in round 3 A sees B's C as a D (the observation draws go A's then B's, each round, so
# draw 4 is A's in round 3; q = 0.5 and a draw below it flips). Worked by hand, round by round:
#   round  1  2  3  4  5  6  7  8
#   A      C  C  C  D  C  D  C  D   A copies what it saw of B: B's C of round 3 seen as D -> A's D in round 4
#   B      C  C  C  C  D  C  D  C   B copies A: A's D of round 4 -> B's D in round 5, and so on, for ever
#   A saw  C  C  D  C  D  C  D  C   (B's moves, round 3 misperceived)
#   B saw  C  C  C  D  C  D  C  D   (A's moves, as played)
# Payoffs (R 3, S 0, T 5, P 1) follow the moves as played: A 3 3 3 5 0 5 0 5, B 3 3 3 0 5 0 5 0.
ECHO = {
    "moves_a": "CCCDCDCD",
    "moves_b": "CCCCDCDC",
    "observed_a": "CCDCDCDC",
    "observed_b": "CCCDCDCD",
    "payoffs_a": [3, 3, 3, 5, 0, 5, 0, 5],
    "payoffs_b": [3, 3, 3, 0, 5, 0, 5, 0],
}
MISS_A_ROUND_3 = [0.9, 0.9, 0.9, 0.9, 0.1, 0.9]


def _check_echo(m: Match) -> None:
    got = {k: getattr(m, k) for k in ECHO}
    got = {k: "".join(v) if k.startswith(("moves", "observed")) else v for k, v in got.items()}
    assert got == ECHO
    assert m.intended_a == m.moves_a and m.intended_b == m.moves_b  # no execution noise
    assert (m.score_a, m.score_b) == (24, 19)


def test_tft_against_tft_one_misperception_echoes_by_hand_fast_path() -> None:
    m = Match(GAME, 0.0, NO_DRAWS, observation=0.5, observation_rng=Scripted(MISS_A_ROUND_3))
    m.play(make_spec("TFT").build(GAME, NO_DRAWS), make_spec("TFT").build(GAME, NO_DRAWS), 8)
    _check_echo(m)


class _TFTAgent:
    """TFT as an awaited agent: it reads only its round view (what a model's prompt is made from)."""

    name = "tft-agent"

    def __init__(self) -> None:
        self.views: list[RoundView] = []

    async def act(self, view: RoundView) -> Decision:
        self.views.append(view)
        return Decision(view.opponent_moves[-1] if view.opponent_moves else "C")


async def test_tft_against_tft_one_misperception_echoes_by_hand_round_by_round() -> None:
    a, b = _TFTAgent(), _TFTAgent()
    m = Match(GAME, 0.0, NO_DRAWS, observation=0.5, observation_rng=Scripted(MISS_A_ROUND_3))
    await play_game(m, a, b, 8, FixedHorizonInfo(8))
    _check_echo(m)
    # What A was shown before round 5: B's moves as A saw them, and the payoffs of that view (its D of round 3
    # seen: A's C met a D, sucker's payoff 0 shown though 3 was paid), not the payoffs paid.
    before_5 = a.views[4]
    assert "".join(before_5.opponent_moves) == "CCDC"
    assert list(before_5.own_payoffs) == [3, 3, 0, 5] and list(before_5.opponent_payoffs) == [3, 3, 5, 0]
    assert (before_5.own_score, before_5.opponent_score) == (11, 11)
    assert "".join(b.views[4].opponent_moves) == "CCCD"  # B saw A's moves as played


def test_misperception_by_b_in_the_fast_path_and_recorded_path_agree() -> None:
    # Random draws from one seed through both paths: the same game, move for move and observation for observation.
    def fast() -> Match:
        m = Match(GAME, 0.1, random.Random(1), observation=0.2, observation_rng=random.Random(2))
        m.play(make_spec("TFT").build(GAME, NO_DRAWS), make_spec("WSLS").build(GAME, NO_DRAWS), 200)
        return m

    slow = Match(GAME, 0.1, random.Random(1), observation=0.2, observation_rng=random.Random(2))
    tft, wsls = make_spec("TFT").build(GAME, NO_DRAWS), make_spec("WSLS").build(GAME, NO_DRAWS)
    for _ in range(200):
        slow.record(tft.move(slow.moves_a, slow.observed_a), wsls.move(slow.moves_b, slow.observed_b))
    f = fast()
    for key in ("moves_a", "moves_b", "intended_a", "intended_b", "observed_a", "observed_b", "payoffs_a"):
        assert getattr(f, key) == getattr(slow, key), key
    first = f.first(50)
    assert first.observed_a == f.observed_a[:50] and first.observed_b == f.observed_b[:50]


# TFT against TFT, execution noise 0, observation noise q. With (a_t, b_t) the moves of round t as played,
# a_{t+1} is b_t as A saw it and b_{t+1} is a_t as B saw it: a_{t+1} = b_t XOR e, b_{t+1} = a_t XOR e', e and e'
# independent flips of probability q. The chain over (a, b) in {CC, CD, DC, DD} has columns summing to 1 too
# (for each target, the flips that reach it from the four sources sum to 1 for each coordinate), so it is
# doubly stochastic and its stationary distribution is uniform: long-run cooperation 1/2, mutual 1/4.
# Round by round: a_t is a_1 = C with t - 1 independent flips (a_t <- b_{t-1} <- a_{t-2} ...), so
# P(a_t = C) = P(an even number of t - 1 flips) = (1 + (1 - 2q)^(t - 1)) / 2, and b_t is the same with the
# other flips: P(CC at t) = that squared.
STATES = (("C", "C"), ("C", "D"), ("D", "C"), ("D", "D"))


def _chain(q: float) -> np.ndarray:
    flip = {"C": "D", "D": "C"}
    p = np.zeros((4, 4))
    for i, (a, b) in enumerate(STATES):
        for j, (a2, b2) in enumerate(STATES):
            pa = q if a2 == flip[b] else 1 - q
            pb = q if b2 == flip[a] else 1 - q
            p[i, j] = pa * pb
    return p


def _p_cooperate(q: float, t: int) -> float:
    return (1 + (1 - 2 * q) ** (t - 1)) / 2


def test_the_chain_has_the_closed_forms() -> None:
    q = 0.15
    p = _chain(q)
    values, vectors = np.linalg.eig(p.T)
    stationary = np.real(vectors[:, np.argmin(abs(values - 1))])
    assert np.allclose(stationary / stationary.sum(), [0.25] * 4)
    dist = np.array([1.0, 0, 0, 0])
    for t in range(1, 40):
        coop_a = dist[0] + dist[1]
        assert coop_a == pytest.approx(_p_cooperate(q, t), abs=1e-12)
        assert dist[0] == pytest.approx(_p_cooperate(q, t) ** 2, abs=1e-12)
        dist = dist @ p


def test_tft_against_tft_under_observation_noise_matches_the_chain() -> None:
    q, rounds, games = 0.1, 30, 20000
    coop = np.zeros((games, rounds))
    mutual = np.zeros((games, rounds))
    tft = make_spec("TFT")
    for seed in range(games):
        m = play_seeded(tft, tft, GAME, FixedHorizon(rounds), 0.0, seed, observation=q)
        a = np.frombuffer("".join(m.moves_a).encode(), dtype=np.uint8) == ord("C")
        b = np.frombuffer("".join(m.moves_b).encode(), dtype=np.uint8) == ord("C")
        coop[seed], mutual[seed] = a, a & b
    # Round t's cooperation over independent games is binomial(games, p_t): within 4.5 standard errors each.
    for t in range(1, rounds + 1):
        p = _p_cooperate(q, t)
        se = math.sqrt(p * (1 - p) / games) or 1e-12
        assert abs(coop[:, t - 1].mean() - p) <= 4.5 * se + 1e-12, t
        pm = p * p
        assert abs(mutual[:, t - 1].mean() - pm) <= 4.5 * math.sqrt(pm * (1 - pm) / games) + 1e-12, t
    # Long run: the last ten rounds (t >= 21: within (0.8)^20 / 2 ~ 0.6% of the stationary 1/2), pooled over
    # games; rounds within a game are correlated, so the tolerance uses the spread of the games' own means.
    tail = coop[:, 20:].mean(axis=1)
    expected = np.mean([_p_cooperate(q, t) for t in range(21, rounds + 1)])
    assert abs(tail.mean() - expected) <= 4.5 * tail.std(ddof=1) / math.sqrt(games)
    assert abs(expected - 0.5) < 0.01
