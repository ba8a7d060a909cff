"""🎬 Animated Replay: play a recorded game round by round, with play, pause, step and a speed slider.

Only recorded rounds are shown: the view reads them through :mod:`harness.ui.cached` and never
plays a move itself, so a replay is exactly what the run stored.

How it animates. The frame (controls, cards, scores) lives in one ``st.fragment`` whose
``run_every`` is the speed while playing and ``None`` while paused, so each tick redraws only the
frame, not the page. ``run_every`` is fixed when the fragment is declared, which happens on a
full-app run; so whenever a tick or a control changes the wanted interval (play, pause, speed,
the end of the game) the fragment asks for one full rerun to re-declare itself. Every run while
playing is a tick: it shows one more round, unless a control was just used (a control decides
the position itself). That also makes the animation testable headless, where nothing ticks on
its own and each ``AppTest.run()`` is a full run.

The browser sends every widget's value with every request, as it was when the request left, so
a widget the server moves can come back with an old value. The round slider is therefore drawn
only while paused, and what it reports is taken as a jump only when no button was pressed in the
same request (see :func:`_jump`).

A frame (round number, progress, move cards, scores, trails) is one element built from one
position (:mod:`harness.ui.replay_frame`), so the browser never shows a round beside another
round's scores. Long games cost nothing per frame: cumulative scores are summed once per
selection, and a frame draws one round, the running scores and the last few moves.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from harness.ui import cached, components, pickers
from harness.ui.follow import follow
from harness.ui.replay_frame import Replay, frame_html

# Session keys, all prefixed "replay_" (the pickers use replay_run, replay_condition, replay_game).
ROUND = "replay_round"  # rounds shown so far: 0 (before the first round) .. number of rounds
PLAYING = "replay_playing"
SHOWN = "replay_shown"  # (run_id, game_id) the position belongs to; another game starts over
ACTED = "replay_acted"  # a control was used in this run: the run is not also a tick
SPEED_MS = "replay_speed_ms"  # plain copy of the speed: widget state is forgotten when the view is left
SPEED = "replay_speed"  # the speed slider
JUMP = "replay_jump"  # the round slider (drawn only while paused)
JUMP_DRAWN = "replay_jump_drawn"  # whether the last run drew the round slider
JUMP_TO = "replay_jump_to"  # where the round slider asked to go in this run (applied unless a button was used)
LAST_TICK = "replay_last_tick"  # monotonic time of the last tick: fast speeds advance by elapsed time
MIN_TICK_S = 0.2  # a browser round trip takes ~0.1-0.15 s: faster speeds show several rounds per tick
PLAY, PAUSE, STEP, BACK, RESTART = "replay_play", "replay_pause", "replay_step", "replay_back", "replay_restart"

MIN_SPEED_MS, MAX_SPEED_MS, DEFAULT_SPEED_MS = 50, 1000, 300
JUMP_SLOT_PX = 84  # the round slider's slot keeps its height while playing, so the frame does not jump


# --- state and controls ---------------------------------------------------------------------------


def _interval() -> float | None:
    """The fragment's wanted ``run_every``: the speed in seconds while playing, else no ticking."""
    if not st.session_state.get(PLAYING, False):
        return None
    return max(_speed_s(), MIN_TICK_S)


def _speed_s() -> float:
    speed_ms: float = st.session_state.get(SPEED_MS, DEFAULT_SPEED_MS)
    return speed_ms / 1000


def _steps(now: float) -> int:
    """Rounds to advance on this tick: one per ``speed`` of wall time since the last tick, so the
    chosen speed holds even when it is faster than a browser round trip (at least one, at most a
    second's worth, so a stalled tab does not leap ahead)."""
    last: float | None = st.session_state.get(LAST_TICK)
    st.session_state[LAST_TICK] = now
    if last is None:
        return 1
    return max(1, round(min(now - last, 1.0) / _speed_s()))


def _follow_selection(game: tuple[str, int]) -> None:
    """Start over (round 0, paused) when another game is selected; the position belongs to one game."""
    if st.session_state.get(SHOWN) != game:
        st.session_state[SHOWN] = game
        st.session_state[ROUND] = 0
        st.session_state[PLAYING] = False
        st.session_state.pop(ACTED, None)
        st.session_state.pop(JUMP_TO, None)


def _set(shown: int | None = None, playing: bool | None = None) -> None:
    """A control's effect: set the position and/or play state, and mark the run as not a tick."""
    if shown is not None:
        st.session_state[ROUND] = shown
    if playing is not None:
        st.session_state[PLAYING] = playing
    st.session_state[ACTED] = True


def _play(length: int) -> None:
    """Play from here; at the end, from the start (as a media player does)."""
    _set(shown=0 if st.session_state.get(ROUND, 0) >= length else None, playing=True)


def _step(delta: int, length: int) -> None:
    """Step forward or back one round; stepping pauses, since the user took the position over."""
    _set(shown=min(max(st.session_state.get(ROUND, 0) + delta, 0), length), playing=False)


def _jump() -> None:
    """The round slider reports a new value; :func:`_advance` decides whether it is the user's.

    The browser sends every widget's value with each request, captured when the request leaves:
    a click made before the previous frame arrived carries the slider's previous position, and
    a slider keeps being reported for a run or two after it is gone (it is not drawn while
    playing). Neither may rewind the replay.
    """
    if st.session_state.get(JUMP_DRAWN, False):
        st.session_state[JUMP_TO] = int(st.session_state[JUMP])


def _speed() -> None:
    """Keep the speed outside the widget too (see SPEED_MS); changing it is no tick."""
    st.session_state[SPEED_MS] = int(st.session_state[SPEED])
    _set()


def _advance(length: int) -> None:
    """One tick: show the next round while playing, and stop at the end. A run right after a control is no tick."""
    acted = st.session_state.pop(ACTED, False)
    jump_to = st.session_state.pop(JUMP_TO, None)
    if jump_to is not None and not acted:  # with a button click, a slider value is a stale one
        st.session_state[ROUND], acted = jump_to, True
    st.session_state[ROUND] = min(max(int(st.session_state.get(ROUND, 0)), 0), length)
    if not st.session_state.get(PLAYING, False):
        st.session_state.pop(LAST_TICK, None)
        return
    if acted:
        st.session_state[LAST_TICK] = time.monotonic()  # playing (again) from now
    elif st.session_state[ROUND] < length:
        st.session_state[ROUND] = min(st.session_state[ROUND] + _steps(time.monotonic()), length)
    if st.session_state[ROUND] >= length:
        st.session_state[PLAYING] = False


def _controls(length: int) -> None:
    """Buttons and speed; then the round slider while paused, or a note in its place while playing.

    The round slider is not drawn while playing: a slider moved by the server at every tick is
    not reliable in the browser (a tick can arrive carrying the slider's value of a frame or two
    ago, which reads as the user dragging it back, and stalls or rewinds the animation).
    """
    shown, playing = st.session_state[ROUND], st.session_state[PLAYING]
    cols = st.columns([1, 1, 1, 1, 1, 4], vertical_alignment="bottom")
    cols[0].button("▶️ Play", key=PLAY, on_click=_play, args=(length,), disabled=playing, width="stretch")
    cols[1].button("⏸️ Pause", key=PAUSE, on_click=_set, kwargs={"playing": False}, disabled=not playing,
                   width="stretch")  # fmt: skip
    cols[2].button("⏭️ Step", key=STEP, on_click=_step, args=(1, length), disabled=shown >= length, width="stretch")
    cols[3].button("⏮️ Back", key=BACK, on_click=_step, args=(-1, length), disabled=shown <= 0, width="stretch")
    cols[4].button("⏪ Restart", key=RESTART, on_click=_set, kwargs={"shown": 0}, disabled=shown <= 0, width="stretch")
    cols[5].slider("Speed (ms per round)", MIN_SPEED_MS, MAX_SPEED_MS, st.session_state.get(SPEED_MS, DEFAULT_SPEED_MS),
                   step=50, key=SPEED, on_change=_speed, help="Time between rounds while playing.")  # fmt: skip
    slot = st.container(height=JUMP_SLOT_PX, border=False)
    st.session_state[JUMP_DRAWN] = not playing
    if playing:
        slot.caption(f"▶️ Playing, {st.session_state.get(SPEED_MS, DEFAULT_SPEED_MS)} ms a round. "
                     "⏸️ Pause to jump to a round.")  # fmt: skip
    else:
        st.session_state[JUMP] = shown  # set before it is drawn: the slider shows where the replay is
        slot.slider("Jump to round", 0, length, key=JUMP, on_change=_jump, help="Round 0 is before the first move.")


# --- the frame ---------------------------------------------------------------------------------------


def _frame(replay: Replay, ticking: float | None) -> None:
    """The fragment's body: advance if this run is a tick, re-declare the fragment if its interval is stale, draw."""
    _advance(replay.length)
    if _interval() != ticking:
        st.rerun()  # a full run declares the fragment again with the new run_every
    shown = st.session_state[ROUND]
    _controls(replay.length)
    st.markdown(frame_html(replay, shown), unsafe_allow_html=True)  # one element: see replay_frame
    st.caption(components.LEGEND)


def render(folder: Path) -> None:
    """The view: pick a game, then the animated frame. The run file is read (once) in full runs only:
    the frame's ticks work from the :class:`Replay` it closes over and never touch the file."""
    with cached.reading(folder) as source:
        selection = pickers.pick_game(folder, key="replay", source=source)
        if selection is not None:
            run_id, game_id = selection.run.run_id, selection.game.game_id
            replay = Replay.of(cached.game_detail(folder, cached.signature(folder), run_id, game_id, _source=source))
    # a run still playing: look again on its own (not while the replay plays; pausing is a full run)
    follow(folder, st.session_state.get(pickers.SELECTED_RUN), hold=st.session_state.get(PLAYING, False))
    if selection is None:
        return
    _follow_selection((run_id, game_id))
    if replay.length == 0:
        why = f": {selection.game.error}" if selection.game.error else ""
        st.info(f"This game has no recorded rounds ({selection.game.status}{why}).")
        return
    ticking = _interval()

    @st.fragment(run_every=ticking)
    def frame() -> None:
        _frame(replay, ticking)

    frame()
