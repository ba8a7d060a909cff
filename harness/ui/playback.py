"""Play, pause, step, back, restart, speed and jump for an animation whose frame is one element:
the 🎬 Animated Replay (a game round by round) and the 🧬 Evolution view (a population generation
by generation) share it.

How it animates. The frame (controls and the one element a view draws from the position) lives in
one ``st.fragment`` whose ``run_every`` is the speed while playing and ``None`` while paused, so
each tick redraws only the frame, not the page. ``run_every`` is fixed when the fragment is
declared, which happens on a full-app run; so whenever a tick or a control changes the wanted
interval (play, pause, speed, the end) the fragment asks for one full rerun to re-declare itself.
Every run while playing is a tick: it shows one more step, unless a control was just used (a
control decides the position itself). That also makes the animation testable headless, where
nothing ticks on its own and each ``AppTest.run()`` is a full run.

The browser sends every widget's value with every request, as it was when the request left, so a
widget the server moves can come back with an old value. The jump slider is therefore drawn only
while paused, and what it reports is taken as a jump only when no button was pressed in the same
request (see :meth:`Playback._jump`).

The position is an integer from 0 to ``length``; what it means (rounds shown, generations run) is
the view's. Every key is ``<prefix>_<name>`` and the position's key is ``<prefix>_<unit>``, so two
views never share a position, and a view's state survives switching to another view and back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import streamlit as st

MIN_TICK_S = 0.2  # a browser round trip takes ~0.1-0.15 s: faster speeds show several steps per tick
MIN_SPEED_MS, MAX_SPEED_MS, DEFAULT_SPEED_MS = 50, 1000, 300
JUMP_SLOT_PX = 84  # the jump slider's slot keeps its height while playing, so the frame does not jump

# The clock ticks are measured with. A module value, not a call to time.monotonic in place, so that a test can
# hold time still (every headless run is then exactly one step, however loaded the machine) or move it by hand.
clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True, slots=True)
class Playback:
    """The controls and state of one view's animation; ``unit`` names a step (``round``, ``generation``)."""

    prefix: str
    unit: str
    jump_help: str = ""
    default_speed_ms: int = DEFAULT_SPEED_MS
    slowest_ms: int = MAX_SPEED_MS  # the speed slider's slowest end: a view narrated over may want longer

    def key(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    @property
    def position(self) -> str:
        """Session key of the position: 0 .. length."""
        return self.key(self.unit)

    @property
    def playing(self) -> str:
        return self.key("playing")

    @property
    def speed_ms(self) -> str:
        """Plain copy of the speed: widget state is forgotten when the view is left."""
        return self.key("speed_ms")

    @property
    def speed(self) -> str:
        """The speed slider."""
        return self.key("speed")

    @property
    def jump(self) -> str:
        """The jump slider (drawn only while paused)."""
        return self.key("jump")

    # --- state -------------------------------------------------------------------------------------

    def shown(self) -> int:
        return int(st.session_state.get(self.position, 0))

    def is_playing(self) -> bool:
        return bool(st.session_state.get(self.playing, False))

    def interval(self) -> float | None:
        """The fragment's wanted ``run_every``: the speed in seconds while playing, else no ticking."""
        if not self.is_playing():
            return None
        return max(self._speed_s(), MIN_TICK_S)

    def _speed_s(self) -> float:
        speed_ms: float = st.session_state.get(self.speed_ms, self.default_speed_ms)
        return speed_ms / 1000

    def _steps(self, now: float) -> int:
        """Steps to advance on this tick: one per ``speed`` of wall time since the last tick, so the
        chosen speed holds even when it is faster than a browser round trip (at least one, at most a
        second's worth, so a stalled tab does not leap ahead)."""
        last: float | None = st.session_state.get(self.key("last_tick"))
        st.session_state[self.key("last_tick")] = now
        if last is None:
            return 1
        return max(1, round(min(now - last, 1.0) / self._speed_s()))

    def follow(self, content: Hashable, start: int = 0, playing: bool = False) -> None:
        """Start over (at ``start``, paused unless ``playing``) when the content shown changes; the
        position belongs to one piece of content (a game, a run)."""
        if st.session_state.get(self.key("shown")) != content:
            st.session_state[self.key("shown")] = content
            st.session_state[self.position] = start
            st.session_state[self.playing] = playing
            st.session_state.pop(self.key("acted"), None)
            st.session_state.pop(self.key("jump_to"), None)
            st.session_state.pop(self.key("last_tick"), None)

    def set(self, shown: int | None = None, playing: bool | None = None) -> None:
        """A control's effect: set the position and/or play state, and mark the run as not a tick."""
        if shown is not None:
            st.session_state[self.position] = shown
        if playing is not None:
            st.session_state[self.playing] = playing
        st.session_state[self.key("acted")] = True

    def _play(self, length: int) -> None:
        """Play from here; at the end, from the start (as a media player does)."""
        self.set(shown=0 if self.shown() >= length else None, playing=True)

    def _step(self, delta: int, length: int) -> None:
        """Step forward or back; stepping pauses, since the user took the position over."""
        self.set(shown=min(max(self.shown() + delta, 0), length), playing=False)

    def _jump(self) -> None:
        """The jump slider reports a new value; :meth:`advance` decides whether it is the user's.

        The browser sends every widget's value with each request, captured when the request leaves:
        a click made before the previous frame arrived carries the slider's previous position, and
        a slider keeps being reported for a run or two after it is gone (it is not drawn while
        playing). Neither may rewind the animation.
        """
        if st.session_state.get(self.key("jump_drawn"), False):
            st.session_state[self.key("jump_to")] = int(st.session_state[self.jump])

    def _speed(self) -> None:
        """Keep the speed outside the widget too (see :attr:`speed_ms`); changing it is no tick."""
        st.session_state[self.speed_ms] = int(st.session_state[self.speed])
        self.set()

    def advance(self, length: int) -> None:
        """One tick: the next step while playing, stopping at the end. A run right after a control is no tick."""
        acted = st.session_state.pop(self.key("acted"), False)
        jump_to = st.session_state.pop(self.key("jump_to"), None)
        if jump_to is not None and not acted:  # with a button click, a slider value is a stale one
            st.session_state[self.position], acted = jump_to, True
        st.session_state[self.position] = min(max(self.shown(), 0), length)
        if not self.is_playing():
            st.session_state.pop(self.key("last_tick"), None)
            return
        if acted:
            st.session_state[self.key("last_tick")] = clock()  # playing (again) from now
        elif self.shown() < length:
            st.session_state[self.position] = min(self.shown() + self._steps(clock()), length)
        if self.shown() >= length:
            st.session_state[self.playing] = False

    # --- drawing -----------------------------------------------------------------------------------

    def controls(self, length: int) -> None:
        """Buttons and speed; then the jump slider while paused, or a note in its place while playing.

        The jump slider is not drawn while playing: a slider moved by the server at every tick is
        not reliable in the browser (a tick can arrive carrying the slider's value of a frame or two
        ago, which reads as the user dragging it back, and stalls or rewinds the animation).
        """
        shown, playing, unit = self.shown(), self.is_playing(), self.unit
        cols = st.columns([1, 1, 1, 1, 1, 4], vertical_alignment="bottom")
        cols[0].button(
            "▶️ Play", key=self.key("play"), on_click=self._play, args=(length,), disabled=playing, width="stretch"
        )
        cols[1].button(
            "⏸️ Pause",
            key=self.key("pause"),
            on_click=self.set,
            kwargs={"playing": False},
            disabled=not playing,
            width="stretch",
        )
        cols[2].button(
            "⏭️ Step",
            key=self.key("step"),
            on_click=self._step,
            args=(1, length),
            disabled=shown >= length,
            width="stretch",
        )
        cols[3].button(
            "⏮️ Back", key=self.key("back"), on_click=self._step, args=(-1, length), disabled=shown <= 0, width="stretch"
        )
        cols[4].button(
            "⏪ Restart",
            key=self.key("restart"),
            on_click=self.set,
            kwargs={"shown": 0},
            disabled=shown <= 0,
            width="stretch",
        )
        speed = st.session_state.get(self.speed_ms, self.default_speed_ms)
        cols[5].slider(
            f"Speed (ms per {unit})",
            MIN_SPEED_MS,
            self.slowest_ms,
            speed,
            step=50,
            key=self.speed,
            on_change=self._speed,
            help=f"Time between {unit}s while playing: more is slower (up to {self.slowest_ms / 1000:g} s a {unit}). "
            f"⏸️ Pause and ⏭️ Step go one {unit} at a time.",
        )
        slot = st.container(height=JUMP_SLOT_PX, border=False)
        st.session_state[self.key("jump_drawn")] = not playing
        if playing:
            slot.caption(f"▶️ Playing, {speed} ms a {unit}. ⏸️ Pause to jump to a {unit}.")
        else:
            st.session_state[self.jump] = shown  # set before it is drawn: the slider shows where the animation is
            slot.slider(
                f"Jump to {unit}",
                0,
                max(length, 1),
                key=self.jump,
                on_change=self._jump,
                help=self.jump_help or None,
                disabled=length == 0,
            )

    def fragment(self, length: int, draw: Callable[[int], None]) -> None:
        """Declare and run the animated frame: controls, then ``draw(position)`` (one element, so its
        parts always belong to the same position)."""
        ticking = self.interval()

        @st.fragment(run_every=ticking)
        def frame() -> None:
            self.advance(length)
            if self.interval() != ticking:
                # A full run declares the fragment again with the new run_every; it is no tick (else Play would
                # show its first step at once, and the slowest speeds' first generation would fly by).
                st.session_state[self.key("acted")] = True
                st.rerun()
            shown = self.shown()
            self.controls(length)
            draw(shown)

        frame()
