"""The 🎮 Play view, driven headless with AppTest: buttons play rounds, the board and summary show them, the
rules start a new match, and an unknown opponent is one paragraph (the game itself: test_play_match.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.ui import play_match
from harness.ui.play_board import BOARD_CLASS
from harness.ui.play_match import PlayMatch
from harness.ui.play_view import AGAIN, CHEAT, COOPERATE, CUSTOM, HORIZON, MATCH, NOISE, OPPONENT, PAYOFFS, ROUNDS
from harness.ui.views import PLAY, REPLAY, VIEWS

App = Callable[..., AppTest]


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    return tmp_path / "results"  # the view reads nothing from it


@pytest.fixture(autouse=True)
def seeds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each new match's seed, in order (1, 2, 3...), so a test can tell a new match from the old one."""
    given: list[int] = []

    def next_seed() -> int:
        given.append(len(given) + 1)
        return given[-1]

    monkeypatch.setattr(play_match, "new_seed", next_seed)
    return given


def board(at: AppTest) -> str:
    boards = [m.value for m in at.markdown if BOARD_CLASS in m.value]
    assert len(boards) == 1, f"{len(boards)} boards drawn"
    return boards[0]


def scores(at: AppTest) -> tuple[str, str, str]:
    found = re.search(r"data-round='(\d+)'.*data-score-you='([^']*)' data-score-them='([^']*)'", board(at))
    assert found is not None
    return found.group(1), found.group(2), found.group(3)


def press(at: AppTest, *keys: str) -> AppTest:
    for key in keys:
        at.button(key=key).click().run()
        assert not at.exception, at.exception
    return at


def test_play_comes_after_replay_in_the_navigation() -> None:
    names = list(VIEWS)
    assert names.index(PLAY) == names.index(REPLAY) + 1


def test_buttons_play_rounds_against_tft_with_the_trust_payoffs(app: App, empty: Path) -> None:
    at = app(empty, view=PLAY)
    assert scores(at) == ("0", "0", "0") and "Round 1 of 10: your move" in board(at)
    press(at, COOPERATE, CHEAT, COOPERATE)
    # The Evolution of Trust's coins (R 2, S -1, T 3, P 0): you C, D, C; TFT C, C, D -> 2 + 3 - 1 and 2 - 1 + 3
    assert scores(at) == ("3", "4", "4")
    assert "Round 4 of 10: your move" in board(at)
    assert "pdb-payoff-last" in next(m.value for m in at.markdown if "pdb-payoffs" in m.value)


def test_the_end_shows_the_summary_and_disables_the_moves(app: App, empty: Path) -> None:
    at = app(empty, view=PLAY)
    at.slider(key=ROUNDS).set_value(3).run()
    press(at, CHEAT, CHEAT, COOPERATE)
    assert "Game over after 3 rounds" in board(at)
    summary = at.success[0].value
    # you D, D, C; TFT C, D, D: 3 + 0 - 1 against -1 + 0 + 3
    assert "You scored 2, TFT 2: a tie." in summary
    assert "TFT copied your last move in every round after the first (2 of 2)." in summary
    assert at.button(key=COOPERATE).disabled and at.button(key=CHEAT).disabled
    press(at, AGAIN)
    assert scores(at) == ("0", "0", "0") and not at.button(key=COOPERATE).disabled


def test_changing_the_rules_starts_a_new_match(app: App, empty: Path, seeds: list[int]) -> None:
    at = app(empty, view=PLAY)
    press(at, COOPERATE)
    assert scores(at)[0] == "1"
    at.radio(key=PAYOFFS).set_value("axelrod").run()
    assert scores(at)[0] == "0" and seeds == [1, 2]
    press(at, COOPERATE)
    assert scores(at) == ("1", "3", "3")  # Axelrod's R
    at.radio(key=PAYOFFS).set_value(CUSTOM).run()
    assert not at.warning  # the trust numbers to start from: a prisoner's dilemma
    at.number_input(key="play_payoff_R").set_value(5.0).run()  # R = T: not one
    assert any("T > R > P > S does not hold" in w.value for w in at.warning)
    press(at, COOPERATE)
    assert scores(at) == ("1", "5", "5")
    at.slider(key=NOISE).set_value(0.2).run()
    match = at.session_state[MATCH]
    assert isinstance(match, PlayMatch) and match.settings.noise == 0.2 and match.rounds_played == 0


def test_another_opponent_from_the_list(app: App, empty: Path) -> None:
    """(A name typed into the box, an alias or an unknown one, is the Chromium test's: AppTest cannot type a new
    option into a select box.)"""
    at = app(empty, view=PLAY)
    at.selectbox(key=OPPONENT).set_value("GRIM").run()
    assert any(m.value.startswith("### 🎮 Play against") and m.value.endswith("GRIM") for m in at.markdown)
    press(at, CHEAT, COOPERATE, COOPERATE)
    assert scores(at) == ("3", "1", "5")  # you D, C, C; GRIM C, D, D: 3 - 1 - 1 and -1 + 3 + 3


def test_an_unknown_horizon_does_not_tell_the_length(app: App, empty: Path) -> None:
    at = app(empty, view=PLAY)
    at.radio(key=HORIZON).set_value("geometric").run()
    assert "the game may end after any round" in board(at) and " of 10" not in board(at)


def test_a_mock_model_from_the_list(app: App, empty: Path) -> None:
    at = app(empty, view=PLAY)
    at.selectbox(key=OPPONENT).set_value("mock/tft").run()
    assert any(m.value == "### 🎮 Play against 🤖 mock/tft" for m in at.markdown)
    press(at, CHEAT, COOPERATE)
    assert scores(at) == ("2", "2", "2")  # you D, C; mock/tft C, D (it copies, as TFT): 3 - 1 and -1 + 3
