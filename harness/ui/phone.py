"""An animation at phone width (the 🎬 Animated Replay): its controls in two short rows and its board in view
when Play is pressed. At 1280 px nothing changes: every rule is inside a media query, and the scroll happens
only when that query matches.

Why. Below 640 px Streamlit stacks columns, so the five buttons, the speed slider and the jump slider of
:mod:`harness.ui.playback` took seven full-width rows, and the board began some 1,100 px down a 844 px screen:
Play started an animation no one could see. Here the buttons share one row and the speed its own; and when
play starts, the page scrolls so that the controls' row is at the top of the screen with the board below it
(the pickers above them would otherwise keep the board below the fold however compact the controls).

The rules find the controls by their buttons' keys (``st-key-<prefix>_play``), so the playback code is
unchanged; the board is the frame's own class (:data:`harness.ui.replay_frame.FRAME_CLASS`), whose two
columns share the width (``minmax(0, 1fr)``), whose history and cards wrap inside their column, and whose
rows (card, move, score, history, up to two notes) line up across the two columns (a subgrid). The agent
cards keep their name line only (a model's label names its persona where players differ; the description and
the model's setup line are in the 📊 View Results view), so a model's game over still fits a 844 px screen.
"""

from __future__ import annotations

import streamlit as st

from harness.ui.playback import Playback

NARROW = "(max-width: 640px)"  # where Streamlit stacks columns


def style(playback: Playback, frame_class: str) -> None:
    """The phone-width rules for ``playback``'s controls and its frame (drawn once per page run; no space)."""
    row = f"[data-testid=stHorizontalBlock]:has(.st-key-{playback.key('play')})"
    st.html(
        f"""<style>@media {NARROW} {{
  {row} {{ flex-flow: row wrap !important; gap: .35rem .3rem !important; scroll-margin-top: .5rem; }}
  {row} > [data-testid=stColumn] {{ flex: 1 1 0 !important; min-width: 0 !important; width: auto !important; }}
  {row} > [data-testid=stColumn]:last-child {{ flex-basis: 100% !important; }}
  {row} button {{ padding: .2rem .15rem; min-height: 2.4rem; }}
  {row} button p {{ font-size: .8rem; line-height: 1.15; }}
  .{frame_class} .pdb-seats {{ gap: 0 .75rem !important; grid-template-rows: repeat(6, auto); }}
  .{frame_class} .pdb-seat {{ display: grid; grid-row: span 6; grid-template-rows: subgrid; }}
  .{frame_class} .pdb-agent-desc, .{frame_class} .pdb-agent-setup {{ display: none; }}
  .{frame_class} .pdb-history, .{frame_class} .pdb-agent-card {{ overflow-wrap: anywhere; }}
}}</style>"""
    )


def scroll_when_play_starts(playback: Playback) -> None:
    """When play has just started (paused at the last page run, playing now), bring the controls' row to the
    top of a phone's screen, the board below it. Drawn last in the frame, so nothing above it moves."""
    was = playback.key("was_playing")
    started = playback.is_playing() and not st.session_state.get(was, False)
    st.session_state[was] = playback.is_playing()
    if not started:
        return
    st.html(
        # Placed again until it stays (three checks 0.1 s apart, 2 s at most): the page is still being laid
        # out when this runs (play starts with a full rerun), and a scroll made too early falls short.
        f"""<script>(() => {{
  let tries = 0, placed = 0;
  const place = () => {{
    if (!window.matchMedia("{NARROW}").matches) return;
    const play = document.querySelector(".st-key-{playback.key("play")}");
    const row = play?.closest("[data-testid=stHorizontalBlock]");
    if (row) {{
      const top = row.getBoundingClientRect().top;
      if (top >= 0 && top < 16) placed += 1; else {{ placed = 0; row.scrollIntoView({{block: "start"}}); }}
    }}
    if (placed < 3 && ++tries < 20) setTimeout(place, 100);
  }};
  setTimeout(place, 50);
}})();</script>""",
        unsafe_allow_javascript=True,
    )
