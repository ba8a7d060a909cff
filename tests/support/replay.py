"""A stand-in for a deterministic model that answers as the released data says it did: the answers of one model
in the games Akata et al. (2023) released, replayed by what the prompt shows.

A model at temperature 0 is a function of its prompt, and the akata2023 prompt of round N shows the round and
every earlier round's two moves: so the released answer to serve is the one the model gave in the released game
whose first N - 1 rounds are the moves the prompt shows (the opponent, as far as the model could tell it, and the
round). Games that share a history must share the answer given to it, or :func:`answer_table` refuses the data.
The responder reads the prompt as the suite's template words it (``prompts/suites/akata2023/round.j2``).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.llm_server import Responder

History = tuple[tuple[str, str], ...]  # (the model's move, the other player's move) per round, as labels

_PLAYED = re.compile(r"In round (\d+), you chose Option (\w+) and the other player chose Option (\w+)\.")
_NOW = re.compile(r"You are now playing round (\d+)\.")


@dataclass(frozen=True, slots=True)
class ReleasedGame:
    """One released game from the model's side: its opponent, its seat (1 or 2), and both players' answers
    and points per round."""

    opponent: str
    seat: int
    own: tuple[str, ...]
    other: tuple[str, ...]
    own_points: tuple[int, ...]


def released_games(path: Path, model: str) -> list[ReleasedGame]:
    """Every game of ``model`` in the released CSV (columns round, player1, player2, answer1, answer2, points1,
    points2, ...), once per seat it sat in: self-play is one game from each side."""
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            rows.setdefault((row["player1"], row["player2"]), []).append(row)
    games = []
    for (one, two), game in rows.items():
        game.sort(key=lambda r: int(r["round"]))
        for seat, me, them in ((1, one, two), (2, two, one)):
            if me != model:
                continue
            mine, theirs = ("1", "2") if seat == 1 else ("2", "1")
            games.append(
                ReleasedGame(
                    opponent=them,
                    seat=seat,
                    own=tuple(r[f"answer{mine}"] for r in game),
                    other=tuple(r[f"answer{theirs}"] for r in game),
                    own_points=tuple(int(r[f"points{mine}"]) for r in game),
                )
            )
    return games


def answer_table(games: Iterable[ReleasedGame]) -> dict[History, str]:
    """The model's released answer to each history it was shown; raises ValueError where two games show the
    same history and the model answered differently (a deterministic replay would then be impossible)."""
    table: dict[History, str] = {}
    for game in games:
        for n, answer in enumerate(game.own):
            seen = tuple(zip(game.own[:n], game.other[:n], strict=True))
            if table.setdefault(seen, answer) != answer:
                raise ValueError(f"the released answers disagree after the history {seen}: {table[seen]} and {answer}")
    return table


def shown_history(prompt: str) -> History:
    """The moves an akata2023 prompt shows, round by round; checks they are rounds 1 to N - 1 of round N."""
    played = _PLAYED.findall(prompt)
    now = _NOW.search(prompt)
    if now is None or [int(r) for r, _, _ in played] != list(range(1, int(now.group(1)))):
        raise ValueError(f"not an akata2023 round prompt: {prompt[-300:]!r}")
    return tuple((me, them) for _, me, them in played)


def replay(table: dict[History, str]) -> Responder:
    """A responder that answers each akata2023 prompt with the released answer to the history it shows."""

    def respond(provider: str, request: dict[str, Any]) -> str:
        user = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
        return table[shown_history(user)]

    return respond
