"""The behaviour profile of Fontana, Pierri & Aiello (ICWSM 2025) in the ``behaviour_profile`` view.

Each measure is checked on hand-worked sequences (worked out in the comments), then the whole view
against a pure-Python transcription of the paper's code (``paper_*`` below: the authors' published
definitions, step by step) on many random games, and its chosen-move variant against a second
transcription that applies the rule of "what the player chose" to the same loops.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.support.logs import chosen, played, write_logs

Move = str  # 'C' or 'D'


# --- the paper's code, transcribed (main = the player, opp = the opponent) ---------------------------
def paper_nice(main: list[Move], opp: list[Move]) -> int:
    for i in range(len(main)):
        if main[i] == "D":
            return 0
        if opp[i] == "D" and main[i] == "C":
            return 1
    return 1


def paper_forgiving(main: list[Move], opp: list[Move]) -> tuple[float, int]:
    n = len(main)
    holding_grudge = False
    opponent_defection = penalties = forgiven = 0
    for i in range(n):
        if main[i] == "C" and holding_grudge:
            forgiven += 1
            holding_grudge = False
        if i < n - 1 and opp[i] == "C" and holding_grudge and main[i + 1] == "D":
            penalties += 1
        if opp[i] == "D" and not holding_grudge:
            opponent_defection += 1
            holding_grudge = True
    chances = opponent_defection + penalties
    return (forgiven / chances if chances else 0.0), chances


def paper_retaliatory(main: list[Move], opp: list[Move]) -> tuple[float, int]:
    provocations = reactions = 0
    for i in range(len(main) - 1):
        if opp[i] == "D" and (i == 0 or main[i - 1] == "C"):
            provocations += 1
            if main[i + 1] == "D":
                reactions += 1
    return (reactions / provocations if provocations else 0.0), provocations


def paper_troublemaking(main: list[Move], opp: list[Move]) -> tuple[float, int]:
    occasions = 1
    uncalled = 1 if main[0] == "D" else 0
    for i in range(len(main) - 1):
        if opp[i] == "C":
            occasions += 1
            if main[i + 1] == "D":
                uncalled += 1
    return uncalled / occasions, occasions


def paper_emulative(main: list[Move], opp: list[Move]) -> tuple[float, int]:
    n = len(main)
    if n <= 1:
        return 0.0, max(n - 1, 0)
    copies = sum(main[i + 1] == opp[i] for i in range(n - 1))
    return copies / (n - 1), n - 1


def paper_profile(main: list[Move], opp: list[Move]) -> dict[str, float]:
    out: dict[str, float] = {"nice": paper_nice(main, opp)}
    for name, fn in (("forgiving", paper_forgiving), ("retaliatory", paper_retaliatory),
                     ("troublemaking", paper_troublemaking), ("emulative", paper_emulative)):  # fmt: skip
        out[name], out[f"{name}_chances"] = fn(main, opp)
    return out


# --- the same loops on what the player chose ----------------------------------------------------------
# own[i]: the player's choice (None in a fallback round: neither C nor D); seen[i]: its played move
# (what the opponent saw); opp[i]: the opponent's played move.
def chosen_profile(own: list[Move | None], seen: list[Move], opp: list[Move]) -> dict[str, Any]:
    n = len(own)
    nice = 1
    for i in range(n):
        if own[i] == "D":
            nice = 0
            break
        if opp[i] == "D" and own[i] == "C":
            break
    holding = False
    opponent_defection = penalties = forgiven = 0
    for i in range(n):
        if own[i] == "C" and holding:
            forgiven += 1
            holding = False
        if i < n - 1 and opp[i] == "C" and holding and own[i + 1] == "D":
            penalties += 1
        if opp[i] == "D" and not holding:
            opponent_defection += 1
            holding = True
    provocations = reactions = 0
    for i in range(n - 1):
        if opp[i] == "D" and (i == 0 or seen[i - 1] == "C") and own[i + 1] is not None:
            provocations += 1
            reactions += own[i + 1] == "D"
    occasions = int(own[0] is not None)
    uncalled = int(own[0] == "D")
    for i in range(n - 1):
        if opp[i] == "C" and own[i + 1] is not None:
            occasions += 1
            uncalled += own[i + 1] == "D"
    emulative_chances = sum(own[i + 1] is not None for i in range(n - 1))
    copies = sum(own[i + 1] == opp[i] for i in range(n - 1))

    def ratio(a: int, b: int) -> float:
        return a / b if b else 0.0

    none = all(m is None for m in own)  # no choice at all: nothing to measure
    return {
        "nice": None if none else nice,
        "forgiving": None if none else ratio(forgiven, opponent_defection + penalties),
        "retaliatory": None if none else ratio(reactions, provocations),
        "troublemaking": None if none else ratio(uncalled, occasions),
        "emulative": None if none else ratio(copies, emulative_chances),
        "forgiving_chances": opponent_defection + penalties,
        "retaliatory_chances": provocations,
        "troublemaking_chances": occasions,
        "emulative_chances": emulative_chances,
    }


MEASURES = ("nice", "forgiving", "retaliatory", "troublemaking", "emulative")
CHANCES = ("forgiving_chances", "retaliatory_chances", "troublemaking_chances", "emulative_chances")


def profiles(results: Path, run_id: str, games: list[tuple[str, str]]) -> dict[tuple[int, str], dict[str, Any]]:
    with write_logs(results, run_id, games) as cat:
        rows = cat.records("SELECT * FROM behaviour_profile WHERE run_id = ?", [run_id])
    return {(r["game_id"], r["player"]): r for r in rows}


def measures(row: dict[str, Any], suffix: str = "") -> dict[str, Any]:
    return {m: row[f"{m}{suffix}"] for m in (*MEASURES, *CHANCES)}


# --- hand-worked sequences (no noise, no fallback: chosen = played) ------------------------------------
HAND = [
    # 0. A: C C D D C / B: C D D C D
    ("CCDDC", "CDDCD"),
    # 1. n = 1
    ("D", "C"),
    # 2. the opponent never defects
    ("CDCC", "CCCC"),
    # 3. a simultaneous first defection
    ("CDD", "CDC"),
    # 4. a grudge held over several rounds, with penalties
    ("CDDDCC", "DCCCCC"),
    # 5. the opponent defects in the last round
    ("CCC", "CCD"),
    # 6. a C that ends one grudge in a round where the opponent defects again; a provoked defection
    ("CDCC", "DDDC"),
]

# Worked by hand from the paper's definitions, round by round (i = 0..n-1).
EXPECTED = {
    # A: nice (i1: B D while A C). forgiving: grudge at i1 (1), A's C at i4 forgives (1) and B's D at
    # i4 starts a new grudge (2) -> 1/2. retaliatory: B's D at i1 (A C at i0) and i2 (A C at i1) are
    # unprovoked; A answers D at i2, i3 -> 2/2. troublemaking: occasions i=0 and after B's C at i0, i3
    # -> 3, A never defects there -> 0. emulative: A copies B's previous move in all 4 -> 1.
    (0, "a"): {
        "nice": 1,
        "forgiving": 0.5,
        "forgiving_chances": 2,
        "retaliatory": 1.0,
        "retaliatory_chances": 2,
        "troublemaking": 0.0,
        "troublemaking_chances": 3,
        "emulative": 1.0,
        "emulative_chances": 4,
    },
    # B: its D at i1 comes first -> 0. forgiving: A's D at i2 (1), B's C at i3 forgives, A's D at i3
    # is a new grudge (2) -> 1/2. retaliatory: A's D at i2, i3 both follow B's D -> no provocation.
    # troublemaking: occasions i=0, after A's C at i0, i1 -> 3; B's D at i1, i2 -> 2/3.
    # emulative: only B's D at i4 copies A's D at i3 -> 1/4.
    (0, "b"): {
        "nice": 0,
        "forgiving": 0.5,
        "forgiving_chances": 2,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 2 / 3,
        "troublemaking_chances": 3,
        "emulative": 0.25,
        "emulative_chances": 4,
    },
    # n = 1: A defects at once; troublemaking 1/1; emulative 0 by definition (N - 1 = 0).
    (1, "a"): {
        "nice": 0,
        "forgiving": 0.0,
        "forgiving_chances": 0,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 1.0,
        "troublemaking_chances": 1,
        "emulative": 0.0,
        "emulative_chances": 0,
    },
    # B cooperates against A's D: nice; one opponent defection, never forgiven (no round left) -> 0/1;
    # no round after it, so no provocation.
    (1, "b"): {
        "nice": 1,
        "forgiving": 0.0,
        "forgiving_chances": 1,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 0.0,
        "troublemaking_chances": 1,
        "emulative": 0.0,
        "emulative_chances": 0,
    },
    # A against a cooperator: D at i1 -> not nice; nothing to forgive or retaliate (0 by the paper's
    # rule); occasions 1 + 3 with one D -> 1/4; copies at i2, i3 -> 2/3.
    (2, "a"): {
        "nice": 0,
        "forgiving": 0.0,
        "forgiving_chances": 0,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 0.25,
        "troublemaking_chances": 4,
        "emulative": 2 / 3,
        "emulative_chances": 3,
    },
    # B: A's D at i1 is a grudge (1), B's C at i2 forgives it -> 1/1; A's D at i1 follows B's C, so it
    # is a provocation, and B's C at i2 is no reaction -> 0/1. occasions: i=0, after A's C at i0, i2 -> 3.
    (2, "b"): {
        "nice": 1,
        "forgiving": 1.0,
        "forgiving_chances": 1,
        "retaliatory": 0.0,
        "retaliatory_chances": 1,
        "troublemaking": 0.0,
        "troublemaking_chances": 3,
        "emulative": 2 / 3,
        "emulative_chances": 3,
    },
    # Both defect first at i1: neither is nice. A: B's D at i1 is a grudge (1), never forgiven -> 0/1;
    # it is unprovoked (A C at i0) and A answers D at i2 -> 1/1. occasions: i=0, after B's C at i0 -> 2,
    # A's D at i1 -> 1/2. copies: A's D at i2 copies B's D at i1 -> 1/2.
    (3, "a"): {
        "nice": 0,
        "forgiving": 0.0,
        "forgiving_chances": 1,
        "retaliatory": 1.0,
        "retaliatory_chances": 1,
        "troublemaking": 0.5,
        "troublemaking_chances": 2,
        "emulative": 0.5,
        "emulative_chances": 2,
    },
    # B: A's D at i1 is a grudge (1); B's C at i2 forgives it (1) while A's D at i2 starts another (2)
    # -> 1/2. A's D at i1 is unprovoked and B answers C at i2 -> 0/1. occasions: i=0, after A's C at i0
    # -> 2, B's D at i1 -> 1/2. copies: B's D at i1 is not A's C at i0, B's C at i2 is not A's D at i1 -> 0/2.
    (3, "b"): {
        "nice": 0,
        "forgiving": 0.5,
        "forgiving_chances": 2,
        "retaliatory": 0.0,
        "retaliatory_chances": 1,
        "troublemaking": 0.5,
        "troublemaking_chances": 2,
        "emulative": 0.0,
        "emulative_chances": 2,
    },
    # A: grudge from B's D at i0 (1); A's D at i2 and i3 follow B's C with the grudge held: 2 penalties;
    # A's C at i4 forgives -> 1/3. B's D at i0 is unprovoked (i = 0), A answers D -> 1/1. occasions:
    # i=0, after B's C at i1..i4 -> 5; A's D at i2, i3 -> 2/5. copies at i1, i4, i5 -> 3/5.
    (4, "a"): {
        "nice": 1,
        "forgiving": 1 / 3,
        "forgiving_chances": 3,
        "retaliatory": 1.0,
        "retaliatory_chances": 1,
        "troublemaking": 0.4,
        "troublemaking_chances": 5,
        "emulative": 0.6,
        "emulative_chances": 5,
    },
    # A cooperates through B's last-round D: nice; that D is a grudge never forgiven -> 0/1; it has no
    # next round, so no provocation. copies: 2/2.
    (5, "a"): {
        "nice": 1,
        "forgiving": 0.0,
        "forgiving_chances": 1,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 0.0,
        "troublemaking_chances": 3,
        "emulative": 1.0,
        "emulative_chances": 2,
    },
    # B defects last, against a cooperator: not nice; occasions 3 with one D -> 1/3; copies 1/2.
    (5, "b"): {
        "nice": 0,
        "forgiving": 0.0,
        "forgiving_chances": 0,
        "retaliatory": 0.0,
        "retaliatory_chances": 0,
        "troublemaking": 1 / 3,
        "troublemaking_chances": 3,
        "emulative": 0.5,
        "emulative_chances": 2,
    },
    # A: B's D at i0 (grudge 1); A's C at i2 forgives (1), B's D at i2 starts grudge 2; A's C at i3
    # forgives (2) -> 2/2. B's D at i0 (i = 0) is answered by D; at i1 (A C at i0) by C; at i2 it follows
    # A's D at i1, so it is provoked and not counted -> 1/2. B's only C is in the last round: the sole
    # occasion is i = 0 -> 0/1. copies: only A's D at i1 copies B's D at i0 -> 1/3.
    (6, "a"): {
        "nice": 1,
        "forgiving": 1.0,
        "forgiving_chances": 2,
        "retaliatory": 0.5,
        "retaliatory_chances": 2,
        "troublemaking": 0.0,
        "troublemaking_chances": 1,
        "emulative": 1 / 3,
        "emulative_chances": 3,
    },
}


def test_each_measure_on_hand_worked_sequences(results: Path) -> None:
    rows = profiles(results, "hand", HAND)
    for key, want in EXPECTED.items():
        row = rows[key]
        got = {k: row[k] for k in want}
        assert got == pytest.approx(want), f"game {key}: {HAND[key[0]]}"
        # Without noise and fallbacks the played variant is the same game.
        assert {k: row[f"{k}_played"] for k in want} == pytest.approx(want)


def test_the_hand_worked_expectations_agree_with_the_transcribed_code() -> None:
    # The transcription and the hand derivations are independent; they must agree with each other too.
    for (game, seat), want in EXPECTED.items():
        a, b = HAND[game]
        main, opp = (a, b) if seat == "a" else (b, a)
        assert paper_profile(list(main), list(opp)) == pytest.approx(want)


@pytest.mark.slow
def test_the_view_is_the_papers_code_on_random_games(results: Path) -> None:
    rng = random.Random(20250601)
    games = []
    for _ in range(300):
        n = rng.randint(1, 14)
        p = rng.choice((0.2, 0.5, 0.8))
        games.append(tuple("".join("C" if rng.random() < p else "D" for _ in range(n)) for _ in "ab"))
    rows = profiles(results, "random", games)  # type: ignore[arg-type]
    for (game, seat), row in rows.items():
        a, b = games[game]
        main, opp = (a, b) if seat == "a" else (b, a)
        want = paper_profile(list(main), list(opp))
        assert measures(row) == pytest.approx(want), f"{main} vs {opp}"
        assert measures(row, "_played") == pytest.approx(want), f"{main} vs {opp}"
    assert len(rows) == 600


@pytest.mark.slow
def test_with_noise_and_fallbacks_the_view_follows_the_choices_and_played_is_the_papers_code(results: Path) -> None:
    rng = random.Random(7)
    games = []
    for _ in range(300):
        n = rng.randint(1, 12)
        seats = []
        for _seat in "ab":
            log = ""
            for _ in range(n):
                move = rng.choice("CD")
                if rng.random() < 0.15:  # a fallback (the harness picks the move)
                    move = {"C": "Y", "D": "X"}[move]
                if rng.random() < 0.2:  # noise flips it
                    move = move.lower()
                log += move
            seats.append(log)
        games.append((seats[0], seats[1]))
    rows = profiles(results, "noisy", games)
    for (game, seat), row in rows.items():
        a, b = games[game]
        own, them = (a, b) if seat == "a" else (b, a)
        want = chosen_profile(chosen(own), list(played(own)), list(played(them)))
        assert measures(row) == pytest.approx(want), f"{own} vs {them}"
        assert measures(row, "_played") == pytest.approx(paper_profile(list(played(own)), list(played(them))))
        assert row["rounds_chosen"] == sum(m is not None for m in chosen(own))


def test_the_chosen_move_rule_is_the_paper_when_nothing_is_flipped_or_flagged() -> None:
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(1, 10)
        main = [rng.choice("CD") for _ in range(n)]
        opp = [rng.choice("CD") for _ in range(n)]
        assert chosen_profile(list(main), main, opp) == pytest.approx(paper_profile(main, opp))


# --- chosen moves under noise and fallbacks, by hand ---------------------------------------------------
def test_noise_flips_are_not_the_players_behaviour(results: Path) -> None:
    # A (a TFT-like player) chose C D D C; noise turned its D at i1 into a played C. B played D D C C.
    # chosen: B's D at i0 (i = 0) and at i1 (A played C at i0) are unprovoked; A chose D after both ->
    #   retaliatory 2/2. A copies B's previous move in all 3 -> emulative 3/3.
    # played (A: C C D C): after B's D at i0 A played C, after the one at i1 D -> 1/2; copies 2/3.
    rows = profiles(results, "noise", [("CdDC", "DDCC")])
    a = rows[(0, "a")]
    assert (a["retaliatory"], a["retaliatory_chances"], a["emulative"]) == (1.0, 2, 1.0)
    assert (a["retaliatory_played"], a["retaliatory_chances_played"]) == (0.5, 2)
    assert a["emulative_played"] == pytest.approx(2 / 3)
    assert a["nice"] == 1.0 and a["forgiving"] == 1.0


def test_a_fallback_move_is_neither_c_nor_d_of_the_player(results: Path) -> None:
    # A chose C, D, then the harness played D for it at i2 (fallback), then A chose C. B played D C C C.
    # chosen: grudge from B's D at i0 (1). A's played D at i2 comes after B's C at i1 with the grudge held,
    #   but A did not choose it: no penalty. A's C at i3 forgives -> 1/1. occasions: i=0 and after B's C
    #   at i2 (the one after i1 is the fallback round) -> 2, no D -> 0/2. copies at i1, i3 -> 2/2.
    # played (A: C D D C): the D at i2 is a penalty -> 1/2; occasions 3 with that D -> 1/3; copies 2/3.
    rows = profiles(results, "fallback", [("CDXC", "DCCC")])
    a = rows[(0, "a")]
    assert (a["forgiving"], a["forgiving_chances"]) == (1.0, 1)
    assert (a["forgiving_played"], a["forgiving_chances_played"]) == (0.5, 2)
    assert (a["troublemaking"], a["troublemaking_chances"]) == (0.0, 2)
    assert (a["troublemaking_played"], a["troublemaking_chances_played"]) == (pytest.approx(1 / 3), 3)
    assert (a["emulative"], a["emulative_chances"]) == (1.0, 2)
    assert (a["emulative_played"], a["emulative_chances_played"]) == (pytest.approx(2 / 3), 3)
    assert a["rounds"] == 4 and a["rounds_chosen"] == 3


def test_unprovoked_reads_the_move_the_opponent_saw(results: Path) -> None:
    # A chose C at i0 but noise played D; B's D at i1 answers a D it saw, so it is provoked: no chance
    # for A to retaliate (had the condition read A's choice, it would count).
    rows = profiles(results, "seen", [("cDD", "CDC")])
    a = rows[(0, "a")]
    assert (a["retaliatory"], a["retaliatory_chances"]) == (0.0, 0)
    assert a["nice"] == 0.0  # A's first chosen D is at i1, B's first D too: not nice
    assert a["nice_played"] == 0.0  # played, A defected first (i0)


def test_a_fallback_round_does_not_decide_niceness(results: Path) -> None:
    # B defects at i0 while A's move is a fallback D: that round says nothing about A; A then chooses
    # D at i1 while B cooperates, so A's first chosen D comes before any chosen C against a D: not nice.
    rows = profiles(results, "nice", [("XD", "DC"), ("YC", "DD")])
    assert rows[(0, "a")]["nice"] == 0.0 and rows[(0, "a")]["nice_played"] == 0.0
    # A's fallback C at i0 against B's D says nothing either; A's chosen C against B's D at i1 is nice.
    assert rows[(1, "a")]["nice"] == 1.0
    # Round 0 is a fallback and B defected at i0, so no chosen round is an occasion: 0 with no chance.
    assert (rows[(1, "a")]["troublemaking"], rows[(1, "a")]["troublemaking_chances"]) == (0.0, 0)


def test_every_round_a_fallback_gives_null_measures(results: Path) -> None:
    rows = profiles(results, "allflagged", [("XX", "CD")])
    a = rows[(0, "a")]
    assert a["rounds_chosen"] == 0
    assert all(a[m] is None for m in MEASURES)
    # The chances still count what happened: B's D at i1 is an opponent defection (a grudge), but no
    # round tests a choice of A.
    assert [a[c] for c in CHANCES] == [1, 0, 0, 0]
    # The played log is still the paper's: A played D, D against C, D.
    assert a["nice_played"] == 0.0 and a["troublemaking_played"] == 1.0 and a["troublemaking_chances_played"] == 2
