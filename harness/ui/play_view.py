"""🎮 Play: a person plays a match round by round against a classic strategy (or a mock model), as in The
Evolution of Trust's first chapters: press Cooperate or Cheat, see both moves and their payoffs, the running
scores and the history.

The match and its rules are :mod:`harness.ui.play_match` (the game package's rules, noise and players, see
:mod:`harness.ui.play_opponent`);
the board and the payoff table are :mod:`harness.ui.play_board`. This view only draws them and holds the match
in the session. A played match is not written to the results folder: it is a lesson, not an experiment (a
person's moves are not a player the harness can replay, and the runs' lists and comparisons would fill with
them).

Layout: the move buttons, then the board (one element), then the summary and payoff table; the opponent and
rules sit in a column of their own, which at phone width comes after the board, so pressing a move never
leaves the board below the fold.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from harness.config.presets.payoffs import PAYOFF_PRESETS, rstp
from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon, HorizonKind
from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies import STRATEGIES
from harness.players.strategies.registry import aliases_of, canonical_name
from harness.ui import components, play_match
from harness.ui.data import MODEL_EMOJI
from harness.ui.play_board import MOVE_WORDS, board_html, payoff_table_html
from harness.ui.play_match import DEFAULT_ROUNDS, MAX_NOISE, MAX_ROUNDS, Outcome, PlayMatch, PlaySettings, PlayState
from harness.ui.play_opponent import MOCK_MODELS

K = "play_"  # prefix of this view's keys
MATCH = K + "match"  # the PlayMatch in progress
OPPONENT, PAYOFFS, HORIZON, ROUNDS, CONTINUE, NOISE = (
    K + "opponent", K + "payoffs", K + "horizon", K + "rounds", K + "continue", K + "noise",
)  # fmt: skip
CUSTOM = "custom"  # the payoffs choice that reads the four numbers below
RSTP_KEYS = {letter: f"{K}payoff_{letter}" for letter in "TRPS"}
COOPERATE, CHEAT, AGAIN = K + "cooperate", K + "cheat", K + "again"
DEFAULT_PAYOFFS = "trust"  # The Evolution of Trust's coins, as the Evolution view starts with
DEFAULT_CONTINUE = 0.9
HORIZON_LABELS = {
    HorizonKind.FIXED.value: "Fixed number of rounds (you are told it)",
    HorizonKind.GEOMETRIC.value: "Unknown: after each round the game may end",
}
OUTCOME_ICONS = {Outcome.WON: "🏆", Outcome.LOST: "😬", Outcome.TIED: "🤝"}


def render(folder: Path) -> None:
    """The view; ``folder`` is not read (a played match is not stored, see the module's docstring)."""
    board, rules = st.columns([3, 2], gap="large")
    with rules:
        settings = _settings()
    with board:
        play = _current(settings)
        if play is not None:
            _play(play)


def _current(settings: PlaySettings) -> PlayMatch | None:
    """The match in progress under ``settings``: a new one when there is none or the settings changed."""
    play = st.session_state.get(MATCH)
    if isinstance(play, PlayMatch) and play.settings == settings:
        return play
    try:
        play = PlayMatch.start(settings, play_match.new_seed())
    except ConfigError as exc:
        st.session_state.pop(MATCH, None)
        st.markdown("### 🎮 Play")
        st.error(str(exc), icon="🚫")
        return None
    st.session_state[MATCH] = play
    return play


def _press(move: Action) -> None:
    """A move button's callback: play the round before the script draws the board."""
    play = st.session_state.get(MATCH)
    if isinstance(play, PlayMatch) and play.state is PlayState.YOUR_MOVE:
        play.play(move)


def _again() -> None:
    play = st.session_state.get(MATCH)
    if isinstance(play, PlayMatch):
        st.session_state[MATCH] = PlayMatch.start(play.settings, play_match.new_seed())


def _play(play: PlayMatch) -> None:
    them = play.opponent
    st.markdown(f"### 🎮 Play against {them.emoji} {play.name}")
    st.caption(f"{them.title}: choose another opponent and the rules under ⚙️.")
    over = play.state is PlayState.OVER
    with st.container(horizontal=True, gap="small"):
        buttons: tuple[tuple[str, Action, str], ...] = (
            (COOPERATE, "C", components.COOPERATE_CARD),
            (CHEAT, "D", components.DEFECT_CARD),
        )
        for key, move, icon in buttons:
            st.button(
                MOVE_WORDS[move],
                key=key,
                icon=icon,
                on_click=_press,
                args=(move,),
                disabled=over,
                width="stretch",
                type="primary" if move == "C" else "secondary",
            )
        st.button("New match", key=AGAIN, icon="🔄", on_click=_again, width="content")
    st.markdown(board_html(play), unsafe_allow_html=True)  # one element: see play_board
    if over:
        summary = play.summary()
        st.success("\n\n".join(summary.lines), icon=OUTCOME_ICONS[summary.outcome])
    st.caption(components.LEGEND.replace("defect", "cheat"))
    st.markdown(payoff_table_html(play.settings.game, play.opponent.short, play.last), unsafe_allow_html=True)
    st.caption("Each cell: your payoff and your opponent's for that pair of moves; the last round's is highlighted.")


# ----------------------------------------------------------------------------------------- the rules


def _settings() -> PlaySettings:
    """The opponent and the rules, from the widgets (each set once to its default, then kept for the session)."""
    state = st.session_state
    state.setdefault(OPPONENT, "TFT")
    state.setdefault(PAYOFFS, DEFAULT_PAYOFFS)
    for letter, value in zip("TRPS", rstp(PAYOFF_PRESETS[DEFAULT_PAYOFFS]).split(","), strict=True):
        state.setdefault(RSTP_KEYS[letter], float(value))
    state.setdefault(HORIZON, HorizonKind.FIXED.value)
    state.setdefault(ROUNDS, DEFAULT_ROUNDS)
    state.setdefault(CONTINUE, DEFAULT_CONTINUE)
    state.setdefault(NOISE, 0.0)
    with st.expander("Opponent and rules", icon="⚙️", expanded=True):
        opponent = st.selectbox(
            "Opponent",
            [*STRATEGIES, *MOCK_MODELS],
            key=OPPONENT,
            format_func=_strategy_label,
            accept_new_options=True,
            on_change=_canonical_opponent,
            persist_state="session",
            help="Any strategy with its default settings, or a mock model (offline: the model player's whole path, "
            "prompt to parser, on the mock provider). Type a name the others use (Copycat, Grudger, TitForTat…), "
            "settings (GTFT(p=0.3)) or a mock's options (mock/tft?unparseable=0.3) and press Enter.",
        )
        game = _payoffs()
        horizon = _horizon()
        noise = st.slider(
            "Noise",
            0.0,
            MAX_NOISE,
            step=0.01,
            key=NOISE,
            persist_state="session",
            help="The chance each move is flipped by mistake (Cooperate played as Cheat, or Cheat as Cooperate).",
        )
        st.caption("Changing any of these starts a new match.")
    return PlaySettings(str(opponent or ""), game, horizon, float(noise))


def _canonical_opponent() -> None:
    """A name typed into the box that is another name of a strategy (``Copycat``, ``titfortat``) becomes that
    strategy's entry, so the box shows what it means; anything else is checked when the match starts."""
    typed = st.session_state.get(OPPONENT)
    name = canonical_name(typed) if isinstance(typed, str) else None
    if name is not None:
        st.session_state[OPPONENT] = name


def _strategy_label(name: str) -> str:
    cls = STRATEGIES.get(name)
    if name in MOCK_MODELS:
        return f"{MODEL_EMOJI} {name} · mock model (offline)"
    if cls is None:
        return name  # typed by the user: checked when the match starts
    aliases = aliases_of(name)
    return f"{cls.emoji} {name} · {cls.display_name}" + (f" ({', '.join(aliases)})" if aliases else "")


def _payoffs() -> PayoffMatrix:
    choice = st.radio(
        "Payoffs",
        [*PAYOFF_PRESETS, CUSTOM],
        key=PAYOFFS,
        format_func=lambda n: f"{n} (T,R,P,S = {rstp(PAYOFF_PRESETS[n])})" if n in PAYOFF_PRESETS else "your own",
        horizontal=True,
        persist_state="session",
        help="The same games as `--payoff-matrix`: axelrod (Axelrod's tournaments), trust (The Evolution of "
        "Trust's coins), or your own temptation T, reward R, punishment P and sucker's payoff S.",
    )
    if choice != CUSTOM:
        return PAYOFF_PRESETS[str(choice)]
    with st.container(horizontal=True, gap="small"):
        t, r, p, s = (
            st.number_input(letter, step=1.0, key=RSTP_KEYS[letter], persist_state="session", width=80)
            for letter in "TRPS"
        )
    game = PayoffMatrix.from_rstp(R=r, S=s, T=t, P=p)
    for warning in game.warnings():
        st.warning(f"Not a prisoner's dilemma: {warning}.", icon="⚠️")
    return game


def _horizon() -> Horizon:
    kind = st.radio(
        "Length",
        list(HORIZON_LABELS),
        key=HORIZON,
        format_func=HORIZON_LABELS.get,
        persist_state="session",
    )
    if kind == HorizonKind.FIXED.value:
        rounds = st.slider("Rounds", 1, MAX_ROUNDS, key=ROUNDS, persist_state="session")
        return FixedHorizon(int(rounds))
    go_on = st.slider(
        "Chance the game goes on after each round",
        0.5,
        0.99,
        step=0.01,
        key=CONTINUE,
        persist_state="session",
        help="As in the Shadow of the Future: you do not know when the game ends, so every round may be the last.",
    )
    return GeometricHorizon(stop_prob=round(1.0 - float(go_on), 10))
