"""Generate the Axelrod-library Moran-process fixture for PDBench.

Runs axelrod's ``MoranProcess`` (birth-death, no mutation, fitness = the sum of the
individual's match scores per turn, 200 turns, default game R=3, S=0, T=5, P=1) from one mutant among N - 1 residents,
N = 10, for two scenarios (one Tit For Tat among Defectors, one Defector among
Tit For Tats), once per seed over a range of seeds, and writes
``tests/fixtures/axelrod_moran.json``: per scenario the seeds, the seeds at which
the mutant fixed, and the number of steps to absorption (sum and sum of squares),
with the settings and the axelrod version. ``tests/unit/evolution/test_moran_axelrod.py``
compares PDBench's fixation frequency and mean absorption time with these by
two-sample tests.

This script needs only the standard library and ``axelrod`` (pinned to the
version the fixture was made with, 4.14.0). axelrod is NOT a PDBench
dependency; it lives in a separate virtualenv (see generate_fixture.py)::

    /work/axvenv/bin/python tests/axelrod_reference/generate_moran_fixture.py

It takes about a quarter of an hour on two cores (axelrod rescores every
cached match at every step). ``--check`` reruns and compares with the file
(exit status 1 on any difference); ``--processes`` sets the worker count.

Importing axelrod switches multiprocessing to the "spawn" start method, hence
the ``if __name__ == "__main__":`` guard.
"""

import argparse
import json
import os
import sys
from multiprocessing import Pool
from pathlib import Path

TURNS = 200
N = 10
GAME = {"R": 3, "S": 0, "T": 5, "P": 1}
# scenario name -> (mutant, resident, PDBench names, number of seeds)
SCENARIOS = {
    "TFT_among_ALLD": ("TitForTat", "Defector", ("TFT", "ALLD"), 3000),
    "ALLD_among_TFT": ("Defector", "TitForTat", ("ALLD", "TFT"), 6000),
}
FIRST_SEED = 1

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "fixtures" / "axelrod_moran.json"


def run_one(args):
    """One Moran process from seed ``seed``: (mutant fixed?, steps to absorption)."""
    import axelrod as axl

    mutant, resident, seed = args
    game = axl.Game(r=GAME["R"], s=GAME["S"], t=GAME["T"], p=GAME["P"])
    players = [getattr(axl, mutant)()] + [getattr(axl, resident)() for _ in range(N - 1)]
    process = axl.MoranProcess(players, turns=TURNS, game=game, seed=seed, mutation_rate=0.0, mode="bd")
    populations = process.play()
    return process.winning_strategy_name == str(getattr(axl, mutant)()), len(populations) - 1


def build_fixture(processes):
    import axelrod as axl

    scenarios = {}
    with Pool(processes) as pool:
        for name, (mutant, resident, pd_names, count) in SCENARIOS.items():
            seeds = list(range(FIRST_SEED, FIRST_SEED + count))
            results = pool.map(run_one, [(mutant, resident, s) for s in seeds], chunksize=50)
            steps = [s for _, s in results]
            scenarios[name] = {
                "mutant": pd_names[0],
                "resident": pd_names[1],
                "axelrod_mutant": mutant,
                "axelrod_resident": resident,
                "first_seed": FIRST_SEED,
                "runs": count,
                "fixations": sum(fixed for fixed, _ in results),
                "fixed_seeds": [s for s, (fixed, _) in zip(seeds, results, strict=True) if fixed],
                "steps_sum": sum(steps),
                "steps_sum_squares": sum(s * s for s in steps),
            }
            print(f"{name}: {scenarios[name]['fixations']}/{count} fixations", file=sys.stderr)
    return {
        "axelrod_version": axl.__version__,
        "process": (
            "MoranProcess, mode bd, mutation_rate 0, no fitness_transformation "
            "(fitness = the sum of its matches' scores per turn)"
        ),
        "population": N,
        "turns": TURNS,
        "noise": 0,
        "game": dict(GAME),
        "scenarios": scenarios,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture path to write/check")
    parser.add_argument("--check", action="store_true", help="regenerate in memory and compare with the file")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="worker processes")
    args = parser.parse_args(argv)

    fixture = build_fixture(args.processes)
    if args.check:
        try:
            current = json.loads(args.out.read_text())
        except FileNotFoundError:
            print(f"{args.out} does not exist", file=sys.stderr)
            return 1
        if current != fixture:
            print(f"{args.out} differs from a fresh axelrod run", file=sys.stderr)
            return 1
        print(f"{args.out} matches axelrod {fixture['axelrod_version']}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
