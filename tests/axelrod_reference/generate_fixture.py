"""Generate the Axelrod-library reference fixture for PDBench.

Plays every unordered pair of PDBench's deterministic reference strategies,
including self-play, in the Axelrod library (axelrod.Match, 200 turns, no
noise, default game R=3, S=0, T=5, P=1) and writes
``tests/fixtures/axelrod_matches.json``.

This script needs only the standard library and ``axelrod`` (pinned to the
version the fixture was made with, 4.14.0). axelrod is NOT a PDBench
dependency; it lives in a separate virtualenv, e.g.::

    python3 -m venv /work/axvenv
    /work/axvenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl  # CPU torch first
    /work/axvenv/bin/pip install axelrod==4.14.0

Re-run (from the repository root)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_fixture.py

Verify the committed fixture without rewriting it (exit status 1 on any
difference)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_fixture.py --check

Mapping notes:
  * FBF (axelrod.FirmButFair) is left out: in axelrod it is the memory-one
    four-vector (1, 0, 1, 2/3), i.e. stochastic after mutual defection
    (classifier["stochastic"] is True). Any strategy in STRATEGIES whose
    class or instance is classified stochastic is dropped automatically and
    reported on stderr.
  * Importing axelrod switches multiprocessing to the "spawn" start method,
    hence the ``if __name__ == "__main__":`` guard.
"""

import argparse
import json
import sys
from pathlib import Path

TURNS = 200
GAME = {"R": 3, "S": 0, "T": 5, "P": 1}

# PDBench name -> axelrod class name, in fixture order.
STRATEGIES = [
    ("ALLC", "Cooperator"),
    ("ALLD", "Defector"),
    ("TFT", "TitForTat"),
    ("GRIM", "Grudger"),
    ("WSLS", "WinStayLoseShift"),
    ("TF2T", "TitFor2Tats"),
    ("STFT", "SuspiciousTitForTat"),
    ("ALT", "Alternator"),
    ("TTFT", "TwoTitsForTat"),
    ("HTFT", "HardTitForTat"),
    ("SMAJ", "GoByMajority"),
    ("HMAJ", "HardGoByMajority"),
    ("PROBER", "Prober"),
    ("BULLY", "Bully"),
    ("GRADUAL", "Gradual"),
    ("FBF", "FirmButFair"),
]

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "fixtures" / "axelrod_matches.json"


def build_fixture():
    import axelrod as axl

    game = axl.Game(r=GAME["R"], s=GAME["S"], t=GAME["T"], p=GAME["P"])
    assert game.RPST() == (GAME["R"], GAME["P"], GAME["S"], GAME["T"])

    kept = []
    for pd_name, cls_name in STRATEGIES:
        cls = getattr(axl, cls_name)
        if cls.classifier["stochastic"] or cls().classifier["stochastic"]:
            print(
                f"dropping {pd_name} ({cls_name}): stochastic in axelrod {axl.__version__}",
                file=sys.stderr,
            )
            continue
        kept.append((pd_name, cls_name, cls))

    matches = []
    for i, (name_a, _, cls_a) in enumerate(kept):
        for name_b, _, cls_b in kept[i:]:
            # Fresh instances per match (self-play needs two distinct objects).
            match = axl.Match((cls_a(), cls_b()), turns=TURNS, game=game)
            result = match.play()
            score_a, score_b = match.final_score()
            matches.append(
                {
                    "a": name_a,
                    "b": name_b,
                    "moves_a": "".join(str(pa) for pa, _ in result),
                    "moves_b": "".join(str(pb) for _, pb in result),
                    "score_a": int(score_a),
                    "score_b": int(score_b),
                }
            )

    return {
        "axelrod_version": axl.__version__,
        "turns": TURNS,
        "game": dict(GAME),
        "strategies": {pd_name: cls_name for pd_name, cls_name, _ in kept},
        "matches": matches,
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
    if args.check:
        try:
            current = json.loads(args.out.read_text())
        except FileNotFoundError:
            print(f"{args.out} does not exist", file=sys.stderr)
            return 1
        if current != fixture:
            print(f"{args.out} differs from a fresh axelrod run", file=sys.stderr)
            return 1
        print(f"{args.out} matches axelrod {fixture['axelrod_version']} ({len(fixture['matches'])} matches)")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}: {len(fixture['matches'])} matches, {len(fixture['strategies'])} strategies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
