"""Match.play, the one round loop of strategy games: the same game as Match.record round by round, noisy or not."""

from __future__ import annotations

import random

import pytest

from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.players.strategies import make_spec

GAME = PayoffMatrix.from_rstp(3.1, 0.2, 5.3, 0.7)  # payoffs that are not exact binary fractions: sums round


def whole(match: Match) -> tuple[object, ...]:
    return (
        match.moves_a,
        match.moves_b,
        match.intended_a,
        match.intended_b,
        match.payoffs_a,
        match.payoffs_b,
        match.score_a,
        match.score_b,
        match.noise_rng.random(),
    )


def by_record(name_a: str, name_b: str, noise: float, rounds: list[int]) -> Match:
    match = Match(GAME, noise, random.Random(7))
    a = make_spec(name_a).build(GAME, random.Random(1))
    b = make_spec(name_b).build(GAME, random.Random(2))
    for _ in range(sum(rounds)):
        match.record(a.move(match.moves_a, match.moves_b), b.move(match.moves_b, match.moves_a))
    return match


def by_play(name_a: str, name_b: str, noise: float, rounds: list[int]) -> Match:
    match = Match(GAME, noise, random.Random(7))
    a = make_spec(name_a).build(GAME, random.Random(1))
    b = make_spec(name_b).build(GAME, random.Random(2))
    for n in rounds:  # in several calls: a match played on from where it stood
        match.play(a, b, n)
    return match


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("pairing", [("TFT", "GTFT"), ("GRADUAL", "RAND"), ("WSLS", "PROBER"), ("GRIM", "ALLC")])
@pytest.mark.parametrize("rounds", [[200], [0], [1], [37, 1, 0, 90]])
def test_play_is_record_round_by_round_bit_for_bit(pairing: tuple[str, str], noise: float, rounds: list[int]) -> None:
    """Moves as intended and played, payoffs, scores (summed in the same order) and the noise stream after."""
    assert whole(by_play(*pairing, noise, rounds)) == whole(by_record(*pairing, noise, rounds))


def test_noise_flips_moves_in_both_seats_at_its_rate() -> None:
    match = by_play("ALLC", "ALLD", 0.05, [4000])
    flipped_a = sum(m == "D" for m in match.moves_a)
    flipped_b = sum(m == "C" for m in match.moves_b)
    assert 120 < flipped_a < 280 and 120 < flipped_b < 280  # ~200 each
    assert set(match.intended_a) == {"C"} and set(match.intended_b) == {"D"}


def test_a_move_that_is_not_c_or_d_is_refused() -> None:
    class Bad:
        def move(self, own: list[str], opp: list[str]) -> str:
            return "X" if len(own) == 3 else "C"

    with pytest.raises(ValueError, match="must be C or D"):
        Match(GAME, 0.0, random.Random(0)).play(Bad(), Bad(), 5)  # type: ignore[arg-type]
