"""The 🎮 Play view's match (harness.ui.play_match) and board (harness.ui.play_board): hand-worked games.

Every expected move and payoff below is worked out by hand from the strategy's rule and the matrix; the noise
test draws the flips itself from the match's noise stream; and a person who presses what a strategy would play
gets the very game the library plays between the two strategies with the same seed.
"""

from __future__ import annotations

import random

import pytest

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.game.rules import FLIP, Action, PayoffMatrix
from harness.game.seeds import derive_seed
from harness.players.strategies import make_spec
from harness.players.strategies.play import play_seeded
from harness.ui.play_board import BOARD_CLASS, board_html, heading, payoff_table_html
from harness.ui.play_match import MAX_ROUNDS, Outcome, PlayMatch, PlaySettings, PlayState

AXELROD = PayoffMatrix.from_rstp(R=3, S=0, T=5, P=1)
TRUST = PayoffMatrix.from_rstp(R=2, S=-1, T=3, P=0)
ODD = PayoffMatrix.from_rstp(R=4, S=-3, T=7, P=1.5)  # no preset: nothing can come from a default


def played(opponent: str, moves: str, game: PayoffMatrix = AXELROD, **settings: object) -> PlayMatch:
    play = PlayMatch.start(PlaySettings(opponent, game, **settings), seed=11)  # type: ignore[arg-type]
    for move in moves:
        play.play(move)  # type: ignore[arg-type]
    return play


def theirs(play: PlayMatch) -> str:
    return "".join(r.theirs for r in play.rounds())


# --- hand-worked games ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "yours", "theirs_"),
    [
        # you C, D, C; TFT C, C, D: cells CC, DC, CD
        (AXELROD, [3, 5, 0], [3, 0, 5]),
        (TRUST, [2, 3, -1], [2, -1, 3]),
        (ODD, [4, 7, -3], [4, -3, 7]),
    ],
)
def test_tft_copies_your_last_move_and_each_round_is_scored_from_the_matrix(
    game: PayoffMatrix, yours: list[float], theirs_: list[float]
) -> None:
    play = played("TFT", "CDC", game)
    assert theirs(play) == "CCD"
    assert [r.your_payoff for r in play.rounds()] == yours
    assert [r.their_payoff for r in play.rounds()] == theirs_
    assert (play.your_score, play.their_score) == (sum(yours), sum(theirs_))


def test_grim_cheats_for_ever_after_your_first_cheat() -> None:
    play = played("GRIM", "CDCCC")
    assert theirs(play) == "CCDDD"
    # CC 3/3, DC 5/0, CD 0/5 three times
    assert (play.your_score, play.their_score) == (8, 18)


def test_wsls_stays_after_a_win_and_shifts_after_a_loss() -> None:
    # WSLS: C first; then repeat its last move if it scored R or T, else switch.
    # r1 you C, it C (R: stay) -> r2 C; you D: it gets S (shift) -> r3 D; you D: P (shift) -> r4 C; you C: R -> r5 C
    play = played("WSLS", "CDDCC")
    assert theirs(play) == "CCDCC"
    assert [r.your_payoff for r in play.rounds()] == [3, 5, 1, 3, 3]


@pytest.mark.parametrize(("alias", "name"), [("Copycat", "TFT"), ("always cheat", "ALLD"), ("TitForTat", "TFT")])
def test_an_alias_names_its_strategy(alias: str, name: str) -> None:
    assert PlayMatch.start(PlaySettings(alias), seed=1).name == name


def test_settings_typed_on_one_line_are_the_strategys() -> None:
    play = played("RAND(p=1)", "DDD")
    assert play.name == "RAND(p=1)" and theirs(play) == "CCC"


# --- noise, horizon, the end ---------------------------------------------------------------------


def test_noise_flips_the_moves_its_own_stream_says_and_tft_answers_the_played_move() -> None:
    seed, noise, yours = 3, 0.3, "CCCCCCCCCC"
    play = PlayMatch.start(PlaySettings("TFT", AXELROD, noise=noise), seed=seed)
    for move in yours:
        play.play(move)  # type: ignore[arg-type]
    # The flips, drawn here from the same stream: each round A's draw, then B's; a draw below the noise flips.
    rng = random.Random(derive_seed(seed, "noise"))
    flips = [(rng.random() < noise, rng.random() < noise) for _ in yours]
    assert any(a for a, _ in flips) and any(b for _, b in flips), "pick a seed that flips both sides"
    mine: list[Action] = []
    its: list[Action] = []
    for r, (flip_a, flip_b) in enumerate(flips):
        intended: Action = mine[-1] if r else "C"  # TFT copies my last move as played
        mine.append(FLIP["C"] if flip_a else "C")
        its.append(FLIP[intended] if flip_b else intended)
    assert [r.yours for r in play.rounds()] == mine
    assert [r.theirs for r in play.rounds()] == its
    assert [r.your_intended for r in play.rounds()] == list(yours)
    table = AXELROD.table()
    assert play.your_score == sum(table[(a, b)][0] for a, b in zip(mine, its, strict=True))
    assert play.summary().lines[-2] == (
        f"Noise flipped {sum(a for a, _ in flips)} of your moves and {sum(b for _, b in flips)} of TFT's."
    )


@pytest.mark.parametrize(
    ("opponent", "noise", "horizon"),
    [
        ("GTFT", 0.0, FixedHorizon(12)),
        ("RAND", 0.1, FixedHorizon(15)),
        ("WSLS", 0.2, GeometricHorizon(0.1)),
        ("PROBER", 0.05, GeometricHorizon(0.2, max_rounds=6)),
    ],
)
def test_pressing_what_a_strategy_plays_gives_the_librarys_game_for_the_seed(
    opponent: str, noise: float, horizon: FixedHorizon | GeometricHorizon
) -> None:
    seed = 20
    me = make_spec("TF2T").build(AXELROD, random.Random(0))  # deterministic: never draws
    play = PlayMatch.start(PlaySettings(opponent, AXELROD, horizon, noise), seed=seed)
    while play.state is PlayState.YOUR_MOVE:
        play.play(me.move(play.match.moves_a, play.match.moves_b))
    library = play_seeded(make_spec("TF2T"), make_spec(opponent), AXELROD, horizon, noise, seed)
    assert play.rounds_played == library.rounds_played == horizon.game_length(seed)
    assert (play.match.moves_a, play.match.moves_b) == (library.moves_a, library.moves_b)
    assert (play.match.intended_b, play.your_score, play.their_score) == (
        library.intended_b,
        library.score_a,
        library.score_b,
    )


def test_a_geometric_game_hides_its_length_until_it_ends() -> None:
    horizon = GeometricHorizon(0.25)
    play = PlayMatch.start(PlaySettings("ALLC", horizon=horizon), seed=5)
    assert play.length == horizon.game_length(5)
    assert play.known_length is None and "may end after any round" in heading(play)
    while play.state is PlayState.YOUR_MOVE:
        play.play("C")
    assert play.known_length == play.length == play.rounds_played
    with pytest.raises(ValueError, match="over"):
        play.play("C")


def test_a_fixed_game_ends_after_its_rounds() -> None:
    play = played("ALLD", "CC", horizon=FixedHorizon(3))
    assert heading(play) == "Round 3 of 3: your move"
    play.play("D")
    assert play.state is PlayState.OVER and heading(play) == "🏁 Game over after 3 rounds"
    with pytest.raises(ValueError, match="over after 3 rounds"):
        play.play("C")


# --- the summary ---------------------------------------------------------------------------------


def test_the_summary_says_tft_copied_your_last_move() -> None:
    summary = played("TFT", "CDC").summary()
    assert (summary.your_total, summary.their_total, summary.outcome) == (8, 8, Outcome.TIED)
    assert summary.lines[:4] == [
        "You scored 8, TFT 8: a tie.",
        "TFT cooperated in round 1.",
        "TFT copied your last move in every round after the first (2 of 2).",
        "When you cheated, it cheated back the next round 1 of 1 time.",
    ]
    assert summary.lines[-1].startswith("Its rule (Tit for Tat): ")


def test_the_summary_of_a_strategy_that_ignores_you() -> None:
    summary = played("ALLD", "CDCC").summary()
    # you C, D, C, C against D every round: 0 + 1 + 0 + 0 against 5 + 1 + 5 + 5
    assert (summary.your_total, summary.their_total, summary.outcome) == (1, 16, Outcome.LOST)
    assert summary.lines[0] == "You scored 1, ALLD 16: ALLD won by 15."
    assert "It chose to cheat in every round, whatever you did." in summary.lines
    assert not any("copied" in line for line in summary.lines)


def test_the_summary_counts_copies_and_answers_that_are_not_all() -> None:
    # TF2T cheats only after two cheats in a row: you D, D, C, D -> it C, C, D, C
    summary = played("TF2T", "DDCD").summary()
    assert summary.outcome is Outcome.WON  # 5 + 5 + 0 + 5 against 0 + 0 + 5 + 0
    assert "It copied your last move in 2 of 3 rounds after the first." in summary.lines
    assert "When you cheated, it cheated back the next round 1 of 2 times." in summary.lines


# --- a mock model ---------------------------------------------------------------------------------


def test_a_mock_model_plays_through_the_model_players_path() -> None:
    # mock/tft copies the other player's last move its prompt shows: C, D, C -> C, C, D, as TFT
    play = played("mock/tft", "CDC")
    assert theirs(play) == "CCD" and (play.your_score, play.their_score) == (8, 8)
    assert play.opponent.emoji == "🤖" and play.summary().lines[-1].startswith("mock/tft is a mock language model")


def test_a_mock_models_unreadable_answers_are_its_fallback_moves() -> None:
    play = played("mock/cooperator?unparseable=1", "CCCC")
    assert play.match.flagged_b == [1, 2, 3, 4]
    assert "4 of its moves were its fallback move: its answer could not be read." in play.summary().lines


def test_only_mock_models_are_played() -> None:
    with pytest.raises(ConfigError, match="only mock models can be played here"):
        PlaySettings("openai/gpt-4o-mini").check()
    with pytest.raises(ConfigError, match="unknown mock behaviour"):
        PlaySettings("mock/copycat").check()


# --- bad settings --------------------------------------------------------------------------------


def test_bad_settings_are_one_paragraph_naming_every_problem() -> None:
    with pytest.raises(ConfigError) as caught:
        PlaySettings("Copycot", horizon=FixedHorizon(MAX_ROUNDS + 1), noise=0.9).check()
    text = str(caught.value)
    assert "\n" not in text
    assert "did you mean Copycat?" in text
    assert f"1 to {MAX_ROUNDS} rounds, not {MAX_ROUNDS + 1}" in text
    assert "not 0.9" in text


def test_a_strategys_own_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="RAND"):
        PlaySettings("RAND(p=2)").check()


# --- the board -----------------------------------------------------------------------------------


def test_the_board_holds_one_rounds_numbers_and_the_history_grid() -> None:
    play = played("TFT", "CDCCCCCCCCCD", horizon=FixedHorizon(20))
    board = board_html(play)
    assert board.startswith(f"<div class='{BOARD_CLASS}' data-round='12' data-state='your move'")
    assert f"data-score-you='{play.your_score:g}' data-score-them='{play.their_score:g}'" in board
    assert "Round 13 of 20: your move" in board
    assert board.count("pdb-grid-block") == 2  # ten rounds a row: 10 + 2
    assert board.count("🟢") + board.count("🔴") == 2 * 12


def test_the_payoff_table_highlights_the_last_round() -> None:
    play = played("TFT", "CD", TRUST)  # the last round: you D, TFT C
    table = payoff_table_html(TRUST, "TFT", play.last)
    assert table.count("pdb-payoff-last") == 1
    last = table.split("pdb-payoff-last")[1].split("</td>")[0]
    assert "you +3 · TFT -1" in last
    assert "you +2 · TFT +2" in table and "you +0 · TFT +0" in table and "you -1 · TFT +3" in table
