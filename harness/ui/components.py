"""The dashboard's visual pieces, in the spirit of The Evolution of Trust: agent cards, move cards,
emoji timelines and trails. Each returns HTML or markdown built from data; none holds game logic.

Everything user- or model-supplied that reaches HTML is escaped here, in one place.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from harness.ui.data import AgentInfo

COOPERATE_DOT, DEFECT_DOT = "🟢", "🔴"
COOPERATE_CARD, DEFECT_CARD = "🤝", "🗡️"
MEDALS = ("🥇", "🥈", "🥉")
LEGEND = f"{COOPERATE_DOT} cooperate (C) · {DEFECT_DOT} defect (D)"

_CARD_STYLE = (
    "border-radius:14px;padding:14px 18px;margin:4px 0;color:#1b1b1b;"
    "background:linear-gradient(135deg,{a} 0%,{b} 100%);box-shadow:0 1px 4px rgba(0,0,0,.15);"
)
_AGENT_COLOURS = ("#fdf0c2", "#f7c59f")
_MODEL_COLOURS = ("#d7ecff", "#b9d5f5")


def dot(move: str) -> str:
    return COOPERATE_DOT if move == "C" else DEFECT_DOT


def timeline(moves: Sequence[str], per_line: int = 50) -> str:
    """A row of 🟢/🔴, wrapped every ``per_line`` rounds so long games stay readable."""
    dots = [dot(m) for m in moves]
    return "\n".join("".join(dots[i : i + per_line]) for i in range(0, len(dots), per_line)) or "—"


def trail(moves: Sequence[str], last: int = 10) -> str:
    """The last ``last`` moves as dots, oldest first."""
    return "".join(dot(m) for m in moves[-last:]) or "—"


def agent_card(info: AgentInfo, seat: str | None = None, extra: str = "") -> str:
    """An agent card: emoji, name, one-line description, on a warm (strategy) or cool (model) gradient."""
    a, b = _MODEL_COLOURS if info.is_model else _AGENT_COLOURS
    who = f"<div style='font-size:.8em;opacity:.7'>player {html.escape(seat.upper())}</div>" if seat else ""
    name = html.escape(info.name)
    title = html.escape(info.title)
    heading = name if title == name else f"{name} · <span style='font-weight:400'>{title}</span>"
    desc = (
        f"<div class='pdb-agent-desc' style='font-size:.9em;margin-top:4px'>{html.escape(info.description)}</div>"
        if info.description
        else ""
    )
    setup = (
        f"<div class='pdb-agent-setup' style='font-size:.9em;margin-top:4px'>{model_setup(info)}</div>"
        if info.is_model
        else ""
    )
    more = f"<div style='margin-top:6px'>{extra}</div>" if extra else ""
    return (
        f"<div class='pdb-agent-card' style='{_CARD_STYLE.format(a=a, b=b)}'>{who}"
        f"<div style='font-size:1.25em;font-weight:600'>"
        f"<span style='font-size:1.4em'>{info.emoji}</span> {heading}</div>"
        f"{desc}{setup}{more}</div>"
    )


def model_setup(info: AgentInfo) -> str:
    """A model player's model, persona and temperature, as one line of HTML: what was asked, and how."""
    persona = f"persona <b>{html.escape(info.persona)}</b>" if info.persona else "no persona"
    temperature = "provider's default temperature" if info.temperature is None else f"temperature {info.temperature:g}"
    return f"🤖 <code>{html.escape(info.model or info.name)}</code> · 🎭 {persona} · 🌡️ {temperature}"


def move_card(move: str, payoff: float, label: str = "") -> str:
    """One player's move in a round: 🤝 C on green or 🗡️ D on red, with the payoff it earned."""
    colour, icon = ("#d8f5d0", COOPERATE_CARD) if move == "C" else ("#ffd6d1", DEFECT_CARD)
    word = "cooperates" if move == "C" else "defects"
    sub = f"<div style='font-size:.85em;opacity:.75'>{html.escape(label)}</div>" if label else ""
    points = f"{payoff:+g} point{'s' if payoff != 1 else ''}"
    return (
        f"<div class='pdb-move-card' style='border-radius:14px;padding:8px;text-align:center;background:{colour};"
        f"color:#1b1b1b;box-shadow:0 1px 4px rgba(0,0,0,.15)'>{sub}"
        f"<div style='font-size:1.9em;line-height:1.2'>{icon} <b>{move}</b></div>"
        f"<div>{word} · <b>{points}</b></div></div>"
    )


def medal(rank: int) -> str:
    return MEDALS[rank - 1] if 1 <= rank <= len(MEDALS) else f"{rank}."


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.1f}%"


def num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"
