"""The one cache of deterministic games (tournaments and evolution): it changes what is played, never a result."""

from __future__ import annotations

import pytest

from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.players.strategies import make_spec
from harness.players.strategies.games import StrategyGames, is_deterministic
from harness.players.strategies.play import play_seeded

GAME = PayoffMatrix()
FIXED = FixedHorizon(60)
GEOMETRIC = GeometricHorizon(0.05)


def whole(match: Match) -> tuple[object, ...]:
    return (
        match.moves_a,
        match.moves_b,
        match.intended_a,
        match.intended_b,
        match.payoffs_a,
        match.payoffs_b,
        match.flagged_a,
        match.flagged_b,
        match.score_a,
        match.score_b,
    )


def test_the_rule_a_pairing_is_deterministic_without_noise_or_a_stochastic_strategy() -> None:
    tft, grim, gtft = make_spec("TFT"), make_spec("GRIM"), make_spec("GTFT")
    assert is_deterministic(tft, grim, 0.0)
    assert not is_deterministic(tft, grim, 0.05)
    assert not is_deterministic(tft, gtft, 0.0) and not is_deterministic(gtft, tft, 0.0)


def test_a_deterministic_pairing_is_played_once_and_is_the_game_its_seed_plays() -> None:
    games = StrategyGames()
    tft, alt = make_spec("TFT"), make_spec("ALT")
    first, length = games.play(tft, alt, GAME, FIXED, 0.0, seed=1)
    again, _ = games.play(tft, alt, GAME, FIXED, 0.0, seed=2)
    assert again is first and length == 60 and len(games) == 1
    assert whole(first) == whole(play_seeded(tft, alt, GAME, FIXED, 0.0, 2))
    swapped, _ = games.play(alt, tft, GAME, FIXED, 0.0, seed=1)  # the seats make another pairing
    other_game, _ = games.play(tft, alt, PayoffMatrix.from_rstp(4, 0, 5, 1), FIXED, 0.0, seed=1)
    assert len(games) == 3 and swapped is not first and other_game.score_a != first.score_a


def test_a_stochastic_pairing_or_a_noisy_game_is_never_remembered() -> None:
    games = StrategyGames()
    gtft, alld, tft = make_spec("GTFT", {"generous_prob": 0.5}), make_spec("ALLD"), make_spec("TFT")
    for a, b, noise in [(gtft, alld, 0.0), (tft, alld, 0.1)]:
        played = [games.play(a, b, GAME, FIXED, noise, seed)[0] for seed in range(4)]
        assert len({id(m) for m in played}) == 4
        assert len({"".join(m.moves_a + m.moves_b) for m in played}) > 1
        for seed, match in enumerate(played):
            assert whole(match) == whole(play_seeded(a, b, GAME, FIXED, noise, seed))
    assert len(games) == 0


def test_under_a_geometric_horizon_every_length_is_a_prefix_of_one_game_with_the_same_result() -> None:
    games = StrategyGames()
    tft, gradual = make_spec("TFT"), make_spec("GRADUAL")
    lengths = []
    for seed in range(40):
        match, length = games.play(tft, gradual, GAME, GEOMETRIC, 0.0, seed)
        assert match.rounds_played == length
        assert whole(match) == whole(play_seeded(tft, gradual, GAME, GEOMETRIC, 0.0, seed))
        lengths.append(length)
    assert len(set(lengths)) > 10 and len(games) == 1


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StrategyGames, "MAX_REMEMBERED", 3)
    games = StrategyGames()
    names = ["ALLC", "ALLD", "TFT", "GRIM", "WSLS", "ALT"]
    sizes = []
    for name in names:
        games.play(make_spec(name), make_spec("TFT"), GAME, FIXED, 0.0, seed=0)
        sizes.append(len(games))
    assert sizes == [1, 2, 3, 1, 2, 3]  # full at 3: forgets them all, then remembers again
    match, _ = games.play(make_spec("ALLC"), make_spec("TFT"), GAME, FIXED, 0.0, seed=0)  # forgotten: played again
    assert whole(match) == whole(play_seeded(make_spec("ALLC"), make_spec("TFT"), GAME, FIXED, 0.0, 0))
