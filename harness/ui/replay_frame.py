"""One frame of the 🎬 Animated Replay: a recorded game after its first ``shown`` rounds, as one piece of HTML.

Why one piece. A Streamlit element reaches the browser as a message of its own, drawn as it
arrives; a frame made of a header, move cards and score metrics drawn one after the other shows,
for a moment, the new round's header beside the last round's scores (in a browser sampled every
100 ms while playing at 300 ms a round, about one sample in ten, and one in three on a slower
machine). Here the round number, the progress bar, the move cards, the scores and the trail of a
frame are one string built from one ``shown``, drawn as one element: the browser can only ever
show a frame whose parts belong to the same round.

Pure functions of the recorded rounds, no Streamlit: tested like the rest of the library.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from harness.store.browse import GameDetail
from harness.ui import components
from harness.ui.data import agent_info

TRAIL_ROUNDS = 10
SEATS = ("a", "b")
FRAME_CLASS = "pdb-replay-frame"


@dataclass(frozen=True, slots=True)
class Replay:
    """A recorded game, prepared once per full run so that each frame only indexes into it."""

    players: tuple[str, str]
    rounds: list[dict[str, Any]]
    totals: tuple[list[float], list[float]]  # totals[s][i]: seat s's score after i rounds; totals[s][0] == 0
    params: tuple[Any, Any] = (None, None)  # each seat's stored spec (games.params_a/b): model and persona

    @classmethod
    def of(cls, detail: GameDetail) -> Replay:
        rounds = detail.rounds
        totals = tuple(list(accumulate((float(r[f"payoff_{s}"]) for r in rounds), initial=0.0)) for s in SEATS)
        game = detail.game
        return cls(
            (game["player_a"], game["player_b"]),
            rounds,
            (totals[0], totals[1]),
            (game.get("params_a"), game.get("params_b")),
        )

    @property
    def length(self) -> int:
        return len(self.rounds)

    def score(self, seat: int, shown: int) -> float:
        """Seat ``seat``'s (0 = A, 1 = B) score after the first ``shown`` rounds."""
        return self.totals[seat][shown]

    def trail(self, seat: int, shown: int, last: int = TRAIL_ROUNDS) -> list[str]:
        """The played moves of the last ``last`` rounds shown, oldest first (a slice, not the whole game)."""
        key = f"action_{SEATS[seat]}"
        return [r[key] for r in self.rounds[max(0, shown - last) : shown]]


def fmt(x: float) -> str:
    """Scores as the rest of the dashboard shows them: 3, 2.5 (no trailing .0)."""
    return f"{x:g}"


def notes(row: dict[str, Any], seat: str) -> list[str]:
    """Why this round's move is not simply the player's choice: a fallback move, or a noise flip."""
    out: list[str] = []
    if row[f"flagged_{seat}"]:
        out.append("⚠️ fallback move: the model's answer could not be used, so its fallback move was played")
    intended, move = row[f"intended_{seat}"], row[f"action_{seat}"]
    if intended is not None and intended != move:
        out.append(f"🎲 noise flipped the intended move ({intended} → {move})")
    return out


def frame_html(replay: Replay, shown: int) -> str:
    """The whole frame after ``shown`` rounds (0 = before the first move): header, progress, and each
    player's card, move, score and trail, side by side; every number in it read from ``shown`` once."""
    length = replay.length
    parts = [f"<h3 class='pdb-round' style='margin:0 0 .2em 0;padding:0'>Round {shown} of {length}</h3>"]
    if shown == 0:
        parts.append(_caption("Before the first move: press ▶️ Play or ⏭️ Step."))
    percent = 100 * shown / length if length else 0.0
    parts.append(
        "<div class='pdb-progress' style='height:.5em;border-radius:.25em;background:rgba(128,128,128,.22);"
        f"margin:.4em 0 .2em 0'><div style='height:100%;width:{percent:.2f}%;border-radius:.25em;"
        "background:#2a7de1'></div></div>" + _caption(f"{shown} of {length} rounds played")
    )
    if shown == length and length:
        a, b = (fmt(replay.score(s, shown)) for s in (0, 1))
        parts.append(
            "<div class='pdb-game-over' style='margin:.5em 0;padding:.6em 1em;border-radius:.5em;"
            f"background:rgba(33,195,84,.15)'>🏁 Game over: final score {a} – {b}</div>"
        )
    seats = "".join(f"<div class='pdb-seat'>{_seat(replay, seat, shown)}</div>" for seat in (0, 1))
    # minmax(0, 1fr): the two columns share the width even when a long line would widen one (phone widths)
    parts.append(
        "<div class='pdb-seats' style='display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:2.5rem;"
        f"margin-top:.6em'>{seats}</div>"
    )
    scores = " ".join(f"data-score-{s}='{fmt(replay.score(i, shown))}'" for i, s in enumerate(SEATS))
    return f"<div class='{FRAME_CLASS}' data-round='{shown}' {scores}>{''.join(parts)}</div>"


def _caption(text: str) -> str:
    return f"<div style='font-size:.875em;opacity:.65;margin:.15em 0'>{html.escape(text)}</div>"


def _seat(replay: Replay, seat: int, shown: int) -> str:
    """One player's column: agent card, this round's move card with its notes, running score, trail."""
    s = SEATS[seat]
    card = components.agent_card(agent_info(replay.players[seat], replay.params[seat]), seat=s)
    if shown == 0:
        move = (
            "<div class='pdb-move-card' style='border-radius:14px;padding:12px;text-align:center;"
            "border:2px dashed rgba(128,128,128,.5)'><div style='font-size:2.4em'>🂠</div>"
            "<div>waiting for round 1</div></div>"
        )
        payoff: float | None = None
        marks: list[str] = []
    else:
        row = replay.rounds[shown - 1]
        payoff = float(row[f"payoff_{s}"])
        move = components.move_card(row[f"action_{s}"], payoff, label=f"round {row['round']}")
        marks = notes(row, s)
    moves = replay.trail(seat, shown)
    extent = f"last {len(moves)} round{'s' if len(moves) != 1 else ''}" if moves else "no rounds yet"
    history = f"<div class='pdb-history' style='margin:.5em 0'>History: {components.trail(moves)} ({extent})</div>"
    notes_html = "".join(f"<div class='pdb-note'>{_caption(n)}</div>" for n in marks)  # last: cards stay level
    return (
        f"{card}<div style='margin-top:.5em'>{move}</div>{_score(s, replay.score(seat, shown), payoff)}"
        f"{history}{notes_html}"
    )


def _score(seat: str, total: float, payoff: float | None) -> str:
    """The running score, boxed like a Streamlit metric, with the last round's payoff as its delta."""
    delta = ""
    if payoff is not None:
        colour = "#21c354" if payoff > 0 else "#ff4b4b" if payoff < 0 else "rgba(128,128,128,.9)"
        delta = (
            f"<div class='pdb-score-delta' style='color:{colour};font-size:.9em'>"
            f"{'↑' if payoff > 0 else '↓' if payoff < 0 else '·'} {payoff:+g} last round</div>"
        )
    return (
        "<div class='pdb-score' style='border:1px solid rgba(128,128,128,.3);border-radius:.5rem;"
        "padding:.6em 1em;margin-top:.6em'>"
        f"<div style='font-size:.875em'>Score · player {seat.upper()}</div>"
        f"<div class='pdb-score-value' style='font-size:2.25em;line-height:1.2'>{fmt(total)}</div>{delta}</div>"
    )
