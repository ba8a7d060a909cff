"""Generate the Axelrod-library reference fixture of Ashlock and transitive fingerprints for PDBench.

For each strategy PDBench shares with axelrod (ALLC, ALLD, TFT, GRIM, WSLS, TF2T and GTFT at the default game's
generosity), fingerprints it in axelrod 4.14 as ``pdbench fingerprint`` does by default apart from the grid:

* ``axl.AshlockFingerprint(strategy).fingerprint(turns=TURNS, repetitions=REPETITIONS, step=STEP, seed=SEED)``:
  per probe point (x, y), the strategy's mean score per turn over repetitions (axelrod's own ``data``), and the
  standard deviation of the per-repetition score per turn (ddof 1), recomputed from axelrod's interactions;
* ``axl.TransitiveFingerprint(strategy, number_of_opponents=OPPONENTS).fingerprint(turns=TURNS,
  repetitions=REPETITIONS, seed=SEED)``: per opponent ``Random(p)`` and turn, the strategy's mean cooperation over
  repetitions (axelrod's ``data``; each value is a mean of 0/1, so its spread follows from the mean).

and writes ``tests/fixtures/axelrod_fingerprints.json``. PDBench draws its random numbers from its own streams, so
the test (tests/unit/test_fingerprint_axelrod.py) asks deterministic cells to agree exactly and sampled cells
within a stated number of standard errors.

Needs only the standard library and ``axelrod`` 4.14.0 in its own virtualenv (see generate_tournament_fixture.py).
Re-run from the repository root (about three minutes)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_fingerprint_fixture.py

and ``--check`` to compare with the committed file without rewriting it.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

TURNS = 20
REPETITIONS = 100
STEP = 0.25
OPPONENTS = 5
SEED = 1
# PDBench name -> axelrod class name.
STRATEGIES = [
    ("ALLC", "Cooperator"),
    ("ALLD", "Defector"),
    ("TFT", "TitForTat"),
    ("GRIM", "Grudger"),
    ("WSLS", "WinStayLoseShift"),
    ("TF2T", "TitFor2Tats"),
    ("GTFT", "GTFT"),
]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "fixtures" / "axelrod_fingerprints.json"


def _ashlock(axl, cls):
    fp = axl.AshlockFingerprint(cls)
    data = fp.fingerprint(turns=TURNS, repetitions=REPETITIONS, step=STEP, seed=SEED, progress_bar=False)
    game = axl.Game()
    cells = []
    for index, point in enumerate(fp.points):
        per_rep = [
            sum(game.score(pair)[0] for pair in interaction) / len(interaction)
            for interaction in fp.interactions[(0, index + 1)]
        ]
        mean = data[point]
        assert abs(statistics.fmean(per_rep) - mean) < 1e-12, "recomputed scores differ from axelrod's"
        cells.append(
            {
                "x": round(float(point.x), 6),
                "y": round(float(point.y), 6),
                "games": len(per_rep),
                "mean": float(mean),
                "sd": statistics.stdev(per_rep),
            }
        )
    return cells


def _cooperation_ratio(filename):
    """``TransitiveFingerprint.analyse_cooperation_ratio`` as axelrod 4.14 defines it (player 0's mean cooperation
    per opponent and turn, over repetitions), read with the csv module: axelrod's own reader fails under numpy 2
    (its ``np.vectorize`` returns a list per element), and this keeps its tournament and its file untouched."""
    import csv

    rows = {}
    with open(filename, newline="") as handle:
        for row in csv.DictReader(handle):
            if int(row["Player index"]) == 0:
                moves = [1.0 if a == "C" else 0.0 for a in row["Actions"]]
                rows.setdefault(int(row["Opponent index"]), []).append(moves)
    return [[statistics.fmean(column) for column in zip(*rows[k], strict=True)] for k in sorted(rows)]


def _transitive(axl, cls):
    axl.TransitiveFingerprint.analyse_cooperation_ratio = staticmethod(_cooperation_ratio)
    fp = axl.TransitiveFingerprint(cls, number_of_opponents=OPPONENTS)
    data = fp.fingerprint(turns=TURNS, repetitions=REPETITIONS, seed=SEED, progress_bar=False)
    probabilities = [round(float(o.p), 6) for o in fp.opponents]
    return {"p": probabilities, "games": REPETITIONS, "cooperation": [[float(v) for v in row] for row in data]}


def build_fixture():
    import axelrod as axl

    if axl.__version__ != "4.14.0":
        sys.exit(f"axelrod 4.14.0 is required, found {axl.__version__}")
    out = {
        "axelrod_version": axl.__version__,
        "turns": TURNS,
        "repetitions": REPETITIONS,
        "step": STEP,
        "opponents": OPPONENTS,
        "seed": SEED,
        "game": {"R": 3, "S": 0, "T": 5, "P": 1},
        "strategies": {},
    }
    for name, axelrod_name in STRATEGIES:
        cls = getattr(axl, axelrod_name)
        out["strategies"][name] = {
            "axelrod": axelrod_name,
            "ashlock": _ashlock(axl, cls),
            "transitive": _transitive(axl, cls),
        }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    args = parser.parse_args()
    text = json.dumps(build_fixture(), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = args.out.read_text() == text
        print("fixture matches" if same else "fixture differs")
        sys.exit(0 if same else 1)
    args.out.write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
