"""Generate the Axelrod-library reference fixture of ZD Extort-2's play for PDBench.

Plays axelrod's ZDExtort2 (phi = 1/9, s = 1/2, l = P: Stewart & Plotkin's Extort-2) against a few deterministic
strategies (axelrod.Match, 100 turns, no noise, default game R=3, S=0, T=5, P=1, a seed per match) and writes
``tests/fixtures/axelrod_zd_extort2.json``: each match's moves, ZDExtort2's four-vector as axelrod computed it, and
the uniform numbers ZDExtort2 drew (in order), so PDBench's EXTORT2 can be fed the same numbers and must then make
the same moves (tests/unit/strategies/test_zerodeterminant.py).

Needs only the standard library and ``axelrod`` 4.14.0 in its own virtualenv (see generate_fixture.py). Re-run from
the repository root::

    /work/axvenv/bin/python tests/axelrod_reference/generate_zd_fixture.py

and ``--check`` to compare with the committed file without rewriting it.
"""

import argparse
import json
import sys
from pathlib import Path

TURNS = 100
GAME = {"R": 3, "S": 0, "T": 5, "P": 1}
# PDBench name -> axelrod class name of each opponent.
OPPONENTS = [
    ("ALLC", "Cooperator"),
    ("ALLD", "Defector"),
    ("TFT", "TitForTat"),
    ("WSLS", "WinStayLoseShift"),
    ("ALT", "Alternator"),
    ("GRIM", "Grudger"),
]
SEEDS = [1, 2, 3]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "fixtures" / "axelrod_zd_extort2.json"


def build_fixture():
    import axelrod as axl
    from axelrod.random_ import RandomGenerator

    game = axl.Game(r=GAME["R"], s=GAME["S"], t=GAME["T"], p=GAME["P"])
    drawn = []
    plain = RandomGenerator.random

    def recording(self, *args, **kwargs):
        value = plain(self, *args, **kwargs)
        drawn.append(float(value))
        return value

    RandomGenerator.random = recording
    matches = []
    try:
        for name, cls_name in OPPONENTS:
            for seed in SEEDS:
                zd = axl.ZDExtort2()
                opponent = getattr(axl, cls_name)()
                drawn.clear()
                match = axl.Match((zd, opponent), turns=TURNS, game=game, seed=seed)
                result = match.play()
                matches.append(
                    {
                        "opponent": name,
                        "seed": seed,
                        "moves_a": "".join(str(a) for a, _ in result),
                        "moves_b": "".join(str(b) for _, b in result),
                        "draws": list(drawn),
                    }
                )
                vector = [
                    zd._four_vector[
                        (axl.Action.C if i < 2 else axl.Action.D, axl.Action.C if i % 2 == 0 else axl.Action.D)
                    ]
                    for i in range(4)
                ]
    finally:
        RandomGenerator.random = plain
    return {
        "axelrod_version": axl.__version__,
        "strategy": "ZDExtort2",
        "turns": TURNS,
        "game": dict(GAME),
        "four_vector": vector,
        "opponents": dict(OPPONENTS),
        "matches": matches,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture path to write/check")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing")
    args = parser.parse_args(argv)
    fixture = build_fixture()
    if args.check:
        if json.loads(args.out.read_text()) != fixture:
            print(f"{args.out} differs from a fresh axelrod run", file=sys.stderr)
            return 1
        print(f"{args.out} matches axelrod {fixture['axelrod_version']} ({len(fixture['matches'])} matches)")
        return 0
    args.out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {args.out}: {len(fixture['matches'])} matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
