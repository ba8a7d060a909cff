"""Generate the Axelrod-library tournament fixture for PDBench's leaderboard.

Plays two round-robin tournaments in the Axelrod library (axelrod.Tournament, 200
turns, no noise, default game R=3, S=0, T=5, P=1, self-interactions included as
Axelrod always plays them) and writes ``tests/fixtures/axelrod_tournament.json``
with what axelrod.ResultSet says of them:

  * "shared": the 17 strategies PDBench shares with axelrod, stochastic ones
    included (GTFT at the default game's generosity, RAND at p = 0.5),
    REPETITIONS repetitions, seeded. Per player, in axelrod's ranked order:
    the median and mean of its normalised scores (score per turn, averaged over
    its interactions with the others in one repetition), those scores
    repetition by repetition, and its wins summed over repetitions; and the
    payoff matrix (mean score per turn of row against column over repetitions)
    with its standard deviations over repetitions (numpy std, ddof 0).
  * "deterministic": the 15 deterministic ones of them (no GTFT, no RAND),
    3 repetitions (all alike), with the same per-player figures: a tournament
    whose every number PDBench must reproduce exactly.
  * "ties": ALLC, TFT, GRIM, ALLD, 2 repetitions, where TFT and GRIM score
    exactly alike (ranks 1, 2, 2, 4 in competition ranking).

This script needs only the standard library and ``axelrod``, pinned to 4.14.0
(it refuses any other version, since the ranking code and the random streams may
differ). axelrod is NOT a PDBench dependency; it lives in a separate virtualenv::

    python3 -m venv /work/axvenv
    /work/axvenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl  # CPU torch first
    /work/axvenv/bin/pip install axelrod==4.14.0

Re-run (from the repository root; about 30 s)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_tournament_fixture.py

Verify the committed fixture without rewriting it (exit status 1 on any
difference)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_tournament_fixture.py --check

Notes:
  * axelrod.ResultSet.ranking sorts players by descending median normalised
    score with Python's stable sort: exact ties keep the order players were
    entered in (the order of STRATEGIES below).
  * Importing axelrod switches multiprocessing to the "spawn" start method,
    hence the ``if __name__ == "__main__":`` guard; the tournament runs serially
    (processes=None), which keeps the seeded result reproducible.
"""

import argparse
import json
import sys
from pathlib import Path

AXELROD_VERSION = "4.14.0"
TURNS = 200
GAME = {"R": 3, "S": 0, "T": 5, "P": 1}
REPETITIONS = 100
SEED = 20251
DETERMINISTIC_REPETITIONS = 3
TIES = ["ALLC", "TFT", "GRIM", "ALLD"]
TIES_REPETITIONS = 2

# PDBench name -> axelrod class name: the 17 strategies both libraries have, in entry order.
STRATEGIES = [
    ("ALLC", "Cooperator"),
    ("ALLD", "Defector"),
    ("TFT", "TitForTat"),
    ("GRIM", "Grudger"),
    ("GTFT", "GTFT"),
    ("WSLS", "WinStayLoseShift"),
    ("TF2T", "TitFor2Tats"),
    ("STFT", "SuspiciousTitForTat"),
    ("ALT", "Alternator"),
    ("RAND", "Random"),
    ("TTFT", "TwoTitsForTat"),
    ("HTFT", "HardTitForTat"),
    ("BULLY", "Bully"),
    ("GRADUAL", "Gradual"),
    ("SMAJ", "GoByMajority"),
    ("HMAJ", "HardGoByMajority"),
    ("PROBER", "Prober"),
]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "fixtures" / "axelrod_tournament.json"


def _players(axl, names):
    """Fresh axelrod players, with their default parameters (GTFT's p is set from the game at match
    start, Random's p is 0.5)."""
    return [getattr(axl, dict(STRATEGIES)[name])() for name in names]


def _parameters(axl, game):
    """The parameters the two stochastic players actually play with under ``game``."""
    gtft = axl.GTFT()
    axl.Match((gtft, axl.Cooperator()), turns=1, game=game).play()  # sets p from the game's payoffs
    return {"GTFT": {"p": gtft.p}, "RAND": {"p": axl.Random().p}}


def _tournament(axl, game, names, repetitions, seed):
    import numpy as np  # axelrod's own dependency: its ranking key is numpy's nanmedian

    players = _players(axl, names)
    tournament = axl.Tournament(players, game=game, turns=TURNS, repetitions=repetitions, seed=seed)
    results = tournament.play(processes=None, progress_bar=False)
    ranked = []
    for i in results.ranking:
        scores = [float(s) for s in results.normalised_scores[i]]
        ranked.append(
            {
                "player": names[i],
                "median_score_per_turn": float(np.nanmedian(results.normalised_scores[i])),
                "mean_score_per_turn": float(np.mean(results.normalised_scores[i])),
                "wins": int(sum(results.wins[i])),
                "wins_per_repetition": [int(w) for w in results.wins[i]],
                "normalised_scores": scores,
            }
        )
    return {
        "players": list(names),
        "repetitions": repetitions,
        "seed": seed,
        "ranked": ranked,
        "payoff_matrix": [[float(x) for x in row] for row in results.payoff_matrix],
        "payoff_stddevs": [[float(x) for x in row] for row in results.payoff_stddevs],
    }


def build_fixture():
    import axelrod as axl

    if axl.__version__ != AXELROD_VERSION:
        sys.exit(f"this fixture is made with axelrod {AXELROD_VERSION}; found {axl.__version__}")
    game = axl.Game(r=GAME["R"], s=GAME["S"], t=GAME["T"], p=GAME["P"])
    assert game.RPST() == (GAME["R"], GAME["P"], GAME["S"], GAME["T"])

    names = [name for name, _ in STRATEGIES]
    stochastic = [name for name, cls in STRATEGIES if getattr(axl, cls)().classifier["stochastic"]]
    deterministic = [name for name in names if name not in stochastic]
    return {
        "axelrod_version": axl.__version__,
        "turns": TURNS,
        "game": dict(GAME),
        "strategies": dict(STRATEGIES),
        "stochastic": stochastic,
        "parameters": _parameters(axl, game),
        "tournaments": {
            "shared": _tournament(axl, game, names, REPETITIONS, SEED),
            "deterministic": _tournament(axl, game, deterministic, DETERMINISTIC_REPETITIONS, SEED),
            "ties": _tournament(axl, game, TIES, TIES_REPETITIONS, SEED),
        },
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture path to write/check")
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate in memory and compare with the file instead of writing",
    )
    args = parser.parse_args(argv)

    fixture = build_fixture()
    text = json.dumps(fixture, indent=1) + "\n"
    order = " > ".join(p["player"] for p in fixture["tournaments"]["shared"]["ranked"])
    if args.check:
        try:
            current = json.loads(args.out.read_text())
        except FileNotFoundError:
            print(f"{args.out} does not exist", file=sys.stderr)
            return 1
        if current != fixture:
            print(f"{args.out} differs from a fresh axelrod run", file=sys.stderr)
            return 1
        print(f"{args.out} matches axelrod {fixture['axelrod_version']}: {order}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}: {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
