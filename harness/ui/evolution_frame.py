"""One frame of the 🧬 Evolution view: the population after ``g`` generations, as one piece of HTML.

Why one piece: as in the replay (:mod:`harness.ui.replay_frame`), Streamlit sends each element as a
message of its own, so a generation label, a bar chart and an agent grid drawn one after the other
would, while playing, show for a moment one generation's label beside another's bars. Here the
label, the bars (a bar per player) and the grid (an emoji per individual) are one string built from
one ``g``, drawn as one element.

The grid keeps its individuals in place: from one generation to the next only as many cells change
as individuals were replaced, as in The Evolution of Trust, where the removed agents' places are
taken by the copies. The layout is worked out once per run (:func:`layout`), so a frame only indexes.

Pure functions of a :class:`~harness.evolution.Trajectory`, no Streamlit: tested like the library.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from harness.errors import ConfigError
from harness.evolution import Trajectory
from harness.players.strategies import STRATEGIES, parse_spec
from harness.ui.data import MODEL_EMOJI

FRAME_CLASS = "pdb-evo-frame"
BESIDE_MIN = "14rem"  # the narrowest the bars and the grid are each drawn at side by side
GRID_PAD_PX, GRID_GAP_PX = 10, 3
# At phone width (where the bars and the grid stack: see frame_html) the grid comes first, under a smaller label,
# so that with the playback controls above it the whole grid is on a 844 px screen; the bars follow, closer set.
# Drawn once per page by the view (an inline style cannot hold a media query); 1280 px is untouched.
PHONE_CSS = f"""<style>@media (max-width: 640px) {{
  .{FRAME_CLASS} .pdb-evo-grid-wrap {{ order: -1; }}
  .{FRAME_CLASS} h3.pdb-generation {{ font-size: 1.35rem !important; }}
  .{FRAME_CLASS} .pdb-evo-bar {{ margin: .1em 0 !important; }}
}}</style>"""
UNKNOWN_EMOJI = "❔"

# The Evolution of Trust's colours where its characters have one (Copycat, Always Cheat, ...), then a
# palette that stays readable on both themes; the bars, the grid's cells and the area chart share them.
_COLOURS = {
    "ALLC": "#f06bb4",
    "ALLD": "#5a5a66",
    "TFT": "#3b82d6",
    "GRIM": "#e3b505",
    "GTFT": "#39b8a9",
    "WSLS": "#4caf50",
    "TF2T": "#8ec9f0",
    "PROBER": "#a0623a",
    "RAND": "#9b59b6",
    "STFT": "#6a5acd",
    "ALT": "#ff8c42",
}
_OTHER_COLOURS = ("#e4572e", "#17becf", "#bcbd22", "#8c564b", "#7f7f7f", "#c49c94", "#aec7e8", "#98df8a")


def base_name(player: str) -> str | None:
    """The strategy a player label names (``GTFT(generous_prob=0.3)`` → ``GTFT``); None for a model."""
    if "/" in player:
        return None
    try:
        return parse_spec(player).name
    except ConfigError:
        return None


def emoji_of(player: str) -> str:
    """The strategy's emoji, as every view of the dashboard shows it; 🤖 for a language model."""
    if "/" in player:
        return MODEL_EMOJI
    name = base_name(player)
    return STRATEGIES[name].emoji if name in STRATEGIES else UNKNOWN_EMOJI


def colours(players: tuple[str, ...] | list[str]) -> list[str]:
    """A colour per player: its strategy's own, else (or when another player has it already, e.g. two
    GTFTs with different settings) the next one of a fixed palette that no player has."""
    own = [_COLOURS.get(base_name(p) or "") for p in players]
    spare = [c for c in (*_OTHER_COLOURS, *_COLOURS.values()) if c not in own]
    out: list[str] = []
    for colour in own:
        if colour is None or colour in out:
            colour = spare.pop(0) if spare else "#999999"
        out.append(colour)
    return out


def apportion(shares: np.ndarray, size: int) -> np.ndarray:
    """Counts summing to ``size`` in the given shares (floors, then the largest remainders, earlier players
    first on ties): how the replicator's shares are drawn as individuals."""
    quotas = np.asarray(shares, dtype=np.float64) * size
    counts = np.floor(quotas).astype(np.int64)
    left = size - int(counts.sum())
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[:left]:
        counts[i] += 1
    return counts


def layout(counts: np.ndarray) -> np.ndarray:
    """Each individual's type in each generation (int [generations + 1, N]), cells kept in place.

    Generation 0 fills the grid player by player. From one generation to the next, a player that lost
    individuals gives up its last cells (highest index first) and the players that gained fill the freed
    cells in index order, player by player; every other cell keeps its individual. So the number of cells
    that change is the number of individuals replaced (at least; never more than needed).
    """
    rows, _ = counts.shape
    size = int(counts[0].sum())
    grid = np.empty((rows, size), dtype=np.int64)
    grid[0] = np.repeat(np.arange(counts.shape[1]), counts[0])
    for g in range(1, rows):
        cells = grid[g - 1].copy()
        change = counts[g] - counts[g - 1]
        freed: list[int] = []
        for player in np.flatnonzero(change < 0):
            mine = np.flatnonzero(cells == player)
            freed.extend(int(c) for c in mine[len(mine) + int(change[player]) :])
        freed.sort()
        gained = np.repeat(np.flatnonzero(change > 0), change[change > 0])
        cells[freed] = gained
        grid[g] = cells
    return grid


@dataclass(frozen=True, slots=True, eq=False)
class Film:
    """A run prepared once for its frames: counts, shares and the grid of every generation."""

    players: tuple[str, ...]
    emoji: tuple[str, ...]
    colours: tuple[str, ...]
    counts: np.ndarray  # int [generations + 1, players]: individuals (for the replicator, its shares drawn)
    shares: np.ndarray  # float [generations + 1, players]
    grid: np.ndarray  # int [generations + 1, N]
    size: int | None  # N, or None for the replicator (an infinite population)
    planned: int  # generations asked for: a run without mutation stops at fixation, earlier
    fixation: tuple[int, str] | None

    @classmethod
    def of(cls, trajectory: Trajectory, planned: int, drawn: int = 100) -> Film:
        """``drawn``: how many individuals the replicator's shares are drawn as."""
        shares = trajectory.shares()
        if trajectory.size is None:
            counts = np.array([apportion(row, drawn) for row in shares], dtype=np.int64)
        else:
            counts = np.asarray(trajectory.population, dtype=np.int64)
        fixation = trajectory.fixation
        players = trajectory.players
        return cls(
            players,
            tuple(emoji_of(p) for p in players),
            tuple(colours(players)),
            counts,
            shares,
            layout(counts),
            trajectory.size,
            planned,
            None if fixation is None else (fixation.generation, fixation.player),
        )

    @property
    def length(self) -> int:
        """Generations run (the last frame's position)."""
        return int(self.counts.shape[0]) - 1


def frame_html(film: Film, g: int) -> str:
    """The population after ``g`` generations (0: the initial one): label, bars and grid, from ``g`` alone."""
    counts, shares = film.counts[g], film.shares[g]
    head = f"Generation {g} of {film.length}"
    parts = [f"<h3 class='pdb-generation' style='margin:0 0 .2em 0;padding:0'>{head}</h3>"]
    parts.append(_caption(_status(film, g)))
    bars = "".join(_bar(film, i, int(counts[i]), float(shares[i])) for i in range(len(film.players)))
    grid = _grid(film, g)
    # Bars and grid side by side, half the width each, where two halves of BESIDE_MIN fit; else (a phone) one
    # above the other, each the whole width: no media query needed, so one element still fits every width.
    parts.append(
        "<div style='display:flex;flex-wrap:wrap;gap:.6em 2rem;margin-top:.6em;align-items:flex-start'>"
        f"<div class='pdb-evo-bars' style='flex:1 1 0;min-width:min(100%,{BESIDE_MIN})'>{bars}</div>{grid}</div>"
    )
    data = ",".join(str(int(c)) for c in counts)
    return f"<div class='{FRAME_CLASS}' data-generation='{g}' data-counts='{data}'>{''.join(parts)}</div>"


def _status(film: Film, g: int) -> str:
    """One line under the label: where this generation stands."""
    fixed = film.fixation
    if fixed is not None and g >= fixed[0]:
        after = "" if g == fixed[0] else f" (since generation {fixed[0]})"
        line = f"🏁 {emoji_of(fixed[1])} {fixed[1]} has taken over: every individual plays it{after}."
        if film.length < film.planned and g == film.length:
            line += f" Without mutation nothing changes any more, so the run stopped ({film.planned} were asked for)."
        return line
    if g == 0:
        return "The initial population: press ▶️ Play or ⏭️ Step."
    return f"{g / max(film.length, 1):.0%} of the run"


def _bar(film: Film, i: int, count: int, share: float) -> str:
    name = html.escape(film.players[i])
    amount = f"{share:.1%}" if film.size is None else f"{count} · {share:.0%}"
    return (
        f"<div class='pdb-evo-bar' data-player='{name}' data-count='{count}' style='margin:.35em 0'>"
        f"<div style='display:flex;justify-content:space-between;font-size:.95em'>"
        f"<span><span style='font-size:1.3em'>{film.emoji[i]}</span> {name}</span>"
        f"<span class='pdb-evo-amount' style='opacity:.8'>{amount}</span></div>"
        "<div style='height:.9em;border-radius:.45em;background:rgba(128,128,128,.18);overflow:hidden'>"
        f"<div style='height:100%;width:{100 * share:.2f}%;background:{film.colours[i]};border-radius:.45em'>"
        "</div></div></div>"
    )


def _grid(film: Film, g: int) -> str:
    """An emoji per individual, on a tile of its player's colour, in a square grid (as many columns as rows).

    A tile is its full size where the width allows, else as wide as the column leaves room for (the wrapper is a
    size container: ``cqi`` is its width), so a phone shows the whole grid, never a clipped one."""
    cells = film.grid[g]
    columns = max(1, math.ceil(math.sqrt(len(cells))))
    ratio = 2.3 if columns <= 6 else 1.9 if columns <= 10 else 1.5  # a tile's width over its emoji's size
    fit = f"calc((100cqi - {2 * GRID_PAD_PX}px - {(columns - 1) * GRID_GAP_PX}px) / {columns})"
    tile = f"min({ratio * ratio * 0.62:.3f}rem, {fit})"
    tiles = "".join(
        f"<span class='pdb-evo-cell' data-player='{int(t)}' style='background:{film.colours[int(t)]}40;"
        f"border-radius:.3em;text-align:center;line-height:var(--tile);overflow:hidden'>{film.emoji[int(t)]}</span>"
        for t in cells
    )
    note = "" if film.size is not None else _caption(f"shares drawn as {len(cells)} individuals")
    return (
        f"<div class='pdb-evo-grid-wrap' style='flex:1 1 0;min-width:min(100%,{BESIDE_MIN});"
        "container-type:inline-size'>"
        f"<div class='pdb-evo-grid-card' style='display:inline-block;max-width:100%;box-sizing:border-box;"
        f"border-radius:14px;padding:{GRID_PAD_PX}px;"
        "background:linear-gradient(135deg,#fdf0c2 0%,#f7c59f 100%);box-shadow:0 1px 4px rgba(0,0,0,.15)'>"
        f"<div class='pdb-evo-grid' style='--tile:{tile};display:grid;grid-template-columns:repeat({columns},"
        f"var(--tile));grid-auto-rows:var(--tile);gap:{GRID_GAP_PX}px;font-size:calc(var(--tile) / {ratio})'>"
        f"{tiles}</div></div>{note}</div>"
    )


def _caption(text: str) -> str:
    return f"<div style='font-size:.875em;opacity:.65;margin:.15em 0'>{html.escape(text)}</div>"
