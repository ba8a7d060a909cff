"""The per-game strategy fit: ``per_game_strategy_fit`` per game, ``per_game_best_fit_shares`` per
condition. Hand-worked games first, then a plain-Python reference on random games with noise and
fallbacks (see tests/support/logs.py for the letters)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.support.logs import chosen, played, write_logs

ORDER = ("ALLC", "ALLD", "TFT", "STFT", "GRIM", "WSLS", "RAND")


def fits(results: Path, run_id: str, games: list[tuple[str, str]]) -> dict[tuple[int, str], dict[str, Any]]:
    with write_logs(results, run_id, games) as cat:
        return {(r["game_id"], r["player"]): r for r in cat.records("SELECT * FROM per_game_strategy_fit")}


def shares(row: dict[str, Any]) -> dict[str, float]:
    return {name: row[name.lower()] for name in ORDER}


def test_tft_against_a_random_opponent_is_fitted_as_tft(results: Path) -> None:
    # B:            C D D C D C
    # A (is TFT):   C C D D C D
    # TFT 6/6. ALLC, ALLD 3/6 each. STFT misses round 1 only -> 5/6. GRIM (C, C, then D for good) misses
    # round 5 -> 5/6. WSLS: C; CC->C; CD->D; DD->C (A: D, miss); DC->D (A: C, miss); CD->D -> 4/6.
    row = fits(results, "tft", [("CCDDCD", "CDDCDC")])[(0, "a")]
    assert shares(row) == pytest.approx(
        {"ALLC": 0.5, "ALLD": 0.5, "TFT": 1.0, "STFT": 5 / 6, "GRIM": 5 / 6, "WSLS": 4 / 6, "RAND": 0.5}
    )
    assert row["best_fit"] == "TFT" and row["moves"] == 6


def test_ties_are_listed_in_a_fixed_order(results: Path) -> None:
    rows = fits(results, "ties", [("CCC", "CCC"), ("CDCD", "CCCC")])
    # Mutual cooperation: ALLC, TFT, GRIM, WSLS all 1; STFT 2/3.
    first = rows[(0, "a")]
    assert shares(first) == pytest.approx(
        {"ALLC": 1.0, "ALLD": 0.0, "TFT": 1.0, "STFT": 2 / 3, "GRIM": 1.0, "WSLS": 1.0, "RAND": 0.5}
    )
    assert first["best_fit"] == "ALLC/TFT/GRIM/WSLS"
    # A alternates C, D against a cooperator: ALLC, ALLD, TFT (C C C C), GRIM (C C C C) match half;
    # STFT (D C C C) 1/4; WSLS (C; CC->C; DC->D; CC->C) 1/4. Nothing beats a coin: RAND is in the tie.
    second = rows[(1, "a")]
    assert shares(second) == pytest.approx(
        {"ALLC": 0.5, "ALLD": 0.5, "TFT": 0.5, "STFT": 0.25, "GRIM": 0.5, "WSLS": 0.25, "RAND": 0.5}
    )
    assert second["best_fit"] == "ALLC/ALLD/TFT/GRIM/RAND"


def test_grim_and_wsls_read_the_played_history(results: Path) -> None:
    # A chose C C D D; noise played its round-2 C as D. B played C C D C.
    # GRIM: C, C, then D (B defected in round 3, so from round 4) -> would be C C C D: misses round 3 -> 3/4.
    # WSLS on the played history (A: C D D D): C; CC->C; DC->D; DD->C -> C C D C: misses round 4 -> 3/4.
    # TFT: C, then B's previous: C C C D -> misses round 3 -> 3/4. STFT: D C C D -> 2/4.
    row = fits(results, "history", [("CcDD", "CCDC")])[(0, "a")]
    assert shares(row) == pytest.approx(
        {"ALLC": 0.5, "ALLD": 0.5, "TFT": 0.75, "STFT": 0.5, "GRIM": 0.75, "WSLS": 0.75, "RAND": 0.5}
    )
    assert row["best_fit"] == "TFT/GRIM/WSLS"


def test_fallback_moves_are_not_fitted(results: Path) -> None:
    # A: fallback D, then chose C, C against B's D C C. Only rounds 2 and 3 are A's: TFT would play D, C
    # (half); ALLC both; GRIM D, D (B defected in round 1) none; WSLS C (after D/D), C (after C/C) both.
    rows = fits(results, "flags", [("XCC", "DCC"), ("XX", "CC")])
    row = rows[(0, "a")]
    assert row["moves"] == 2
    assert (row["allc"], row["tft"], row["grim"], row["best_fit"]) == (1.0, 0.5, 0.0, "ALLC/WSLS")
    none = rows[(1, "a")]
    assert none["moves"] == 0 and none["best_fit"] is None and all(v is None for v in shares(none).values())


def test_attribution_counts_best_fits_and_splits_ties(results: Path) -> None:
    # Seat A's best fits over three games: TFT (see above); TFT (C D C against D C D: TFT 3/3, ALLC, STFT,
    # GRIM, WSLS 2/3); ALLC/TFT/GRIM/WSLS (a quarter each).
    games = [("CCDDCD", "CDDCDC"), ("CDC", "DCD"), ("CCC", "CCC")]
    with write_logs(results, "attr", games) as cat:
        fit = cat.records("SELECT best_fit FROM per_game_strategy_fit WHERE player = 'a' ORDER BY game_id")
        best = [r["best_fit"] for r in fit]
        rows = cat.records("SELECT * FROM per_game_best_fit_shares ORDER BY player")
    assert best == ["TFT", "TFT", "ALLC/TFT/GRIM/WSLS"]
    a = rows[0]
    assert (a["player"], a["player_name"], a["condition"], a["games"]) == ("a", "TFT", "hand", 3)
    assert shares(a) == pytest.approx(
        {"ALLC": 1 / 12, "ALLD": 0.0, "TFT": 2 / 3 + 1 / 12, "STFT": 0.0, "GRIM": 1 / 12, "WSLS": 1 / 12, "RAND": 0.0}
    )
    for row in rows:
        assert sum(shares(row).values()) == pytest.approx(1.0)


# --- against a plain-Python reference ------------------------------------------------------------------
def reference(own: list[str | None], seen: list[str], opp: list[str]) -> dict[str, float | None]:
    def would(name: str, t: int) -> str:
        if name == "ALLC":
            return "C"
        if name == "ALLD":
            return "D"
        if name in ("TFT", "STFT"):
            return opp[t - 1] if t else ("C" if name == "TFT" else "D")
        if name == "GRIM":
            return "D" if "D" in opp[:t] else "C"
        return "C" if t == 0 or seen[t - 1] == opp[t - 1] else "D"  # WSLS

    rounds = [t for t, m in enumerate(own) if m is not None]
    if not rounds:
        return dict.fromkeys(ORDER)
    out: dict[str, float | None] = {
        name: sum(own[t] == would(name, t) for t in rounds) / len(rounds) for name in ORDER[:-1]
    }
    out["RAND"] = 0.5
    return out


def test_the_view_agrees_with_a_reference_on_random_games(results: Path) -> None:
    rng = random.Random(99)
    games = []
    for _ in range(200):
        n = rng.randint(1, 12)
        games.append(tuple("".join(rng.choice("CCDDcdXY") for _ in range(n)) for _ in "ab"))
    rows = fits(results, "random", games)  # type: ignore[arg-type]
    for (game, seat), row in rows.items():
        a, b = games[game]
        own, them = (a, b) if seat == "a" else (b, a)
        want = reference(chosen(own), list(played(own)), list(played(them)))
        assert shares(row) == pytest.approx(want), f"{own} vs {them}"
        if want["RAND"] is None:
            assert row["best_fit"] is None
            continue
        top = max(v for v in want.values() if v is not None)
        assert row["best_fit"].split("/") == [n for n in ORDER if want[n] >= top - 1e-9]  # type: ignore[operator]
