"""The 🎮 Play view's board and payoff table, as HTML built from a :class:`~harness.ui.play_match.PlayMatch`.

The board is one element, as the replay's frame is (:mod:`harness.ui.replay_frame`: a round's number, moves and
scores are never drawn from two different rounds), made of the dashboard's pieces (:mod:`harness.ui.components`:
the move cards and the 🟢/🔴 dots). It is kept short, so that at phone width it fits under the move buttons:
both sides' move and score side by side, then the history as an emoji grid, ten rounds a row.

Pure functions, no Streamlit: tested like the rest of the library.
"""

from __future__ import annotations

import html

from harness.game.rules import Action, PayoffMatrix
from harness.ui import components
from harness.ui.play_match import PlayedRound, PlayMatch, PlayState

BOARD_CLASS = "pdb-play-board"
GRID_ROUNDS = 10  # rounds a row of the history grid: ten dots fit beside a name at 390 px
YOU = "You"
YOU_EMOJI = "🧑"
MOVE_WORDS: dict[Action, str] = {"C": "Cooperate", "D": "Cheat"}


def heading(play: PlayMatch) -> str:
    """Where the match stands, in words: ``Round 3 of 10: your move``, or how it ended."""
    done, known = play.rounds_played, play.known_length
    if play.state is PlayState.OVER:
        return f"🏁 Game over after {done} round{'s' if done != 1 else ''}"
    of = f" of {known}" if known is not None else " · the game may end after any round"
    return f"Round {done + 1}{of}: your move"


def board_html(play: PlayMatch) -> str:
    """The board: heading, each side's last move and running score, the history grid and any noise flip."""
    last = play.last
    name = html.escape(play.name)
    short = html.escape(play.opponent.short)
    emoji = play.opponent.emoji
    sides = (
        _side(f"{YOU_EMOJI} {YOU}", "you", last.yours if last else None, last.your_payoff if last else None,
              play.your_score, last.number if last else 0),
        _side(f"{emoji} {name}", "them", last.theirs if last else None, last.their_payoff if last else None,
              play.their_score, last.number if last else 0),
    )  # fmt: skip
    parts = [
        f"<div class='pdb-round' style='font-weight:600;font-size:1.1em;margin:0 0 .3em 0'>"
        f"{html.escape(heading(play))}</div>",
        "<div style='display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.8rem'>"
        + "".join(sides)
        + "</div>",
        _grid(play, f"{emoji} {short}"),
    ]
    if last is not None:
        parts += [f"<div class='pdb-note' style='font-size:.875em;opacity:.75'>{n}</div>" for n in _flips(last, short)]
    return (
        f"<div class='{BOARD_CLASS}' data-round='{play.rounds_played}' data-state='{play.state.value}' "
        f"data-score-you='{play.your_score:g}' data-score-them='{play.their_score:g}'>{''.join(parts)}</div>"
    )


def _side(who: str, key: str, move: Action | None, payoff: float | None, total: float, number: int) -> str:
    """One side: who and the running score on one line, then the move card of the last round (a blank card before
    the first)."""
    if move is None or payoff is None:
        card = (
            "<div class='pdb-move-card' style='border-radius:14px;padding:8px;text-align:center;"
            "border:2px dashed rgba(128,128,128,.5)'><div style='font-size:1.9em;line-height:1.2'>🂠</div>"
            "<div>no move yet</div></div>"
        )
    else:
        card = components.move_card(move, payoff, label=f"round {number}")
    return (
        f"<div class='pdb-side pdb-side-{key}'><div style='display:flex;align-items:baseline;gap:.4em;"
        "margin-bottom:.2em'><span style='font-weight:600;flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;"
        f"white-space:nowrap'>{who}</span><span class='pdb-score' style='white-space:nowrap'>score "
        f"<b class='pdb-score-value pdb-score-{key}' style='font-size:1.35em'>{total:g}</b></span></div>{card}</div>"
    )


def _grid(play: PlayMatch, them: str) -> str:
    """The history: a row of dots per side, ``GRID_ROUNDS`` rounds a row, with the round numbers above."""
    m = play.match
    if not m.rounds_played:
        return ""
    cell = "width:1.45em;flex:none;text-align:center"
    blocks = []
    for start in range(0, m.rounds_played, GRID_ROUNDS):
        stop = min(start + GRID_ROUNDS, m.rounds_played)
        numbers = "".join(
            f"<span style='{cell};font-size:.65em;opacity:.6;width:2.23em'>{r}</span>"
            for r in range(start + 1, stop + 1)
        )
        rows = [f"<div style='display:flex;margin-left:4em'>{numbers}</div>"]
        for label, moves in ((YOU, m.moves_a), (them, m.moves_b)):
            dots = "".join(f"<span style='{cell}'>{components.dot(x)}</span>" for x in moves[start:stop])
            rows.append(
                "<div style='display:flex;align-items:center'><span style='width:5em;flex:none;font-size:.8em;"
                f"overflow:hidden;text-overflow:ellipsis;white-space:nowrap'>{label}</span>{dots}</div>"
            )
        blocks.append(f"<div class='pdb-grid-block' style='margin-top:.35em'>{''.join(rows)}</div>")
    return f"<div class='pdb-history' style='margin-top:.5em'>{''.join(blocks)}</div>"


def _flips(last: PlayedRound, name: str) -> list[str]:
    """What noise did to the last round's moves, if anything."""
    out = []
    if last.yours != last.your_intended:
        out.append(f"🎲 noise flipped your {MOVE_WORDS[last.your_intended]} to {MOVE_WORDS[last.yours]}")
    if last.theirs != last.their_intended:
        out.append(f"🎲 noise flipped {name}'s {MOVE_WORDS[last.their_intended]} to {MOVE_WORDS[last.theirs]}")
    return out


def payoff_table_html(game: PayoffMatrix, them: str, last: PlayedRound | None = None) -> str:
    """The payoff matrix as the person reads it: a row per move of theirs, a column per move of the opponent's,
    each cell "you +3 · them +3"; the cell of the last round is highlighted."""
    table = game.table()
    them = html.escape(them)
    head = "".join(f"<th style='padding:.25em .5em'>{them}: {MOVE_WORDS[b]}</th>" for b in ("C", "D"))
    rows = []
    for a in ("C", "D"):
        cells = []
        for b in ("C", "D"):
            mine, theirs = table[(a, b)]
            hit = last is not None and (last.yours, last.theirs) == (a, b)
            style = "padding:.25em .5em;text-align:center;border:1px solid rgba(128,128,128,.3)" + (
                ";background:rgba(42,125,225,.22);font-weight:600" if hit else ""
            )
            cells.append(
                f"<td class='pdb-payoff-cell{' pdb-payoff-last' if hit else ''}' style='{style}'>"
                f"you {mine:+g} · {them} {theirs:+g}</td>"
            )
        rows.append(
            f"<tr><th style='padding:.25em .5em;text-align:left'>You: {MOVE_WORDS[a]}</th>{''.join(cells)}</tr>"
        )
    return (
        "<table class='pdb-payoffs' style='border-collapse:collapse;font-size:.9em'>"
        f"<tr><th></th>{head}</tr>{''.join(rows)}</table>"
    )
