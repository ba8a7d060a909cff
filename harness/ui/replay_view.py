"""🎬 Animated Replay: play a recorded game round by round, with play, pause, step and a speed slider.

Only recorded rounds are shown: the view reads them through :mod:`harness.ui.cached` and never
plays a move itself, so a replay is exactly what the run stored.

The animation (a fragment that ticks while playing, the controls, and why the round slider is drawn
only while paused) is :mod:`harness.ui.playback`, shared with the 🧬 Evolution view.

A frame (round number, progress, move cards, scores, trails) is one element built from one
position (:mod:`harness.ui.replay_frame`), so the browser never shows a round beside another
round's scores. At phone width the controls take two short rows and Play brings the board into view
(:mod:`harness.ui.phone`). Long games cost nothing per frame: cumulative scores are summed once per
selection, and a frame draws one round, the running scores and the last few moves.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from harness.ui import cached, components, phone, pickers
from harness.ui.follow import follow
from harness.ui.playback import DEFAULT_SPEED_MS, Playback
from harness.ui.replay_frame import FRAME_CLASS, Replay, frame_html

PLAYBACK = Playback("replay", "round", jump_help="Round 0 is before the first move.")
# Session keys, all prefixed "replay_" (the pickers use replay_run, replay_condition, replay_game).
ROUND = PLAYBACK.position  # rounds shown so far: 0 (before the first round) .. number of rounds
PLAYING = PLAYBACK.playing
SPEED_MS = PLAYBACK.speed_ms
SPEED = PLAYBACK.speed
JUMP = PLAYBACK.jump
__all__ = ["DEFAULT_SPEED_MS", "JUMP", "PLAYING", "ROUND", "SPEED", "SPEED_MS", "render"]


def _draw(replay: Replay, shown: int) -> None:
    st.markdown(frame_html(replay, shown), unsafe_allow_html=True)  # one element: see replay_frame
    st.caption(components.LEGEND)
    phone.scroll_when_play_starts(PLAYBACK)  # at phone width, the board in view when Play is pressed


def render(folder: Path) -> None:
    """The view: pick a game, then the animated frame. The run file is read (once) in full runs only:
    the frame's ticks work from the :class:`Replay` it closes over and never touch the file."""
    with cached.reading(folder) as source:
        selection = pickers.pick_game(folder, key="replay", source=source)
        if selection is not None:
            run_id, game_id = selection.run.run_id, selection.game.game_id
            replay = Replay.of(cached.game_detail(folder, cached.signature(folder), run_id, game_id, _source=source))
    # a run still playing: look again on its own (not while the replay plays; pausing is a full run)
    follow(folder, st.session_state.get(pickers.SELECTED_RUN), hold=PLAYBACK.is_playing())
    if selection is None:
        return
    PLAYBACK.follow((run_id, game_id))
    if replay.length == 0:
        why = f": {selection.game.error}" if selection.game.error else ""
        st.info(f"This game has no recorded rounds ({selection.game.status}{why}).")
        return
    phone.style(PLAYBACK, FRAME_CLASS)
    PLAYBACK.fragment(replay.length, lambda shown: _draw(replay, shown))
