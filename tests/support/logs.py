"""Hand-made game logs with noise flips and fallback moves, written to a results file.

A seat's log is a string with one letter per round:

    C, D   the player chose this move and it was played
    c, d   the player chose C (c) or D (d); noise flipped it, so the other move was played
    X, Y   a fallback move (flagged: the harness chose it): D (X) or C (Y), played as such
    x, y   a fallback D (x) or C (y) that noise flipped
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from harness.store.catalog import Catalog
from tests.conftest import write_games
from tests.support.round_rows import unfold_rounds

# letter -> (intended, played, flagged)
LETTERS: dict[str, tuple[str, str, bool]] = {
    "C": ("C", "C", False),
    "D": ("D", "D", False),
    "c": ("C", "D", False),
    "d": ("D", "C", False),
    "X": ("D", "D", True),
    "Y": ("C", "C", True),
    "x": ("D", "C", True),
    "y": ("C", "D", True),
}


def played(log: str) -> str:
    return "".join(LETTERS[ch][1] for ch in log)


def intended(log: str) -> str:
    return "".join(LETTERS[ch][0] for ch in log)


def chosen(log: str) -> list[str | None]:
    """The player's choices, None where the harness chose (a fallback round)."""
    return [None if LETTERS[ch][2] else LETTERS[ch][0] for ch in log]


def write_logs(
    results: Path, run_id: str, games: Sequence[tuple[str, str]], players: tuple[str, str] = ("TFT", "ALLD")
) -> Catalog:
    """Write games given as pairs of seat logs (see the module docstring) into one run, as replicates
    of one condition, and open a catalog on the results folder."""
    write_games(results, run_id, [(played(a), played(b)) for a, b in games], players=players).close()
    values = [
        (game_id, i + 1, *LETTERS[x][0::2], *LETTERS[y][0::2])
        for game_id, (a, b) in enumerate(games)
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    ]
    with duckdb.connect(str(results / f"{run_id}.duckdb")) as con:
        con.execute(
            "CREATE TEMP TABLE fix (game_id INTEGER, round INTEGER, intended_a VARCHAR, flagged_a BOOLEAN, "
            "intended_b VARCHAR, flagged_b BOOLEAN)"
        )
        con.executemany("INSERT INTO fix VALUES (?, ?, ?, ?, ?, ?)", values)
        unfold_rounds(con)
        con.execute(
            "UPDATE round_rows SET intended_a = fix.intended_a, flagged_a = fix.flagged_a, "
            "intended_b = fix.intended_b, flagged_b = fix.flagged_b FROM fix "
            "WHERE round_rows.game_id = fix.game_id AND round_rows.round = fix.round"
        )
    return Catalog(results)
