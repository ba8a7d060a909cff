"""Benchmark: the SFEM bootstrap (``harness.analysis.sfem.sfem``, 200 resamples), one ``fit_counts`` per resample
in a Python loop (before) against every resample's EM at once, vectorised over the resamples (after), side by
side in one run.

"Before" is the code of ``--old-ref`` (default: main before the bootstrap was vectorised), exported with
``git archive <ref> harness`` into a temporary folder; "after" is this checkout. Each side runs as a child
process of this script (``--worker``) that puts its own ``harness`` first on ``sys.path`` (and checks it got it),
so the two never share a module. The games are simulated once here (``simulate`` of tests/unit/test_sfem.py)
and handed to both sides in a file: a random player's 200 games of 20 rounds, and 200 games of a player who
plays TFT in 60% of them and ALLD in 40%, trembling with 1 − β = 0.1, against an opponent who cooperates with
probability 0.7. A worker times ``sfem`` on each (CPU time, ``time.process_time``; the point estimate's
several starts included, as every report pays them) and prints the fit: the script refuses figures whose fits
differ in any digit, so both sides computed the same estimates and standard errors. The runs are interleaved
(before, after, after, before, ...) and the median of ``--runs`` (default 3) is reported, with the ratio
before / after and the load average; the machine should be quiet.

Run:

    .venv/bin/python tests/benchmarks/bench_sfem.py [--old-ref REF] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
OLD_REF = "4fedeeb"  # main before the vectorised bootstrap (issue 20, point 5)
PLAYERS = {  # name: (mixture, β, games, rounds, the opponent's cooperation, seed)
    "random": ({"RAND": 1.0}, 0.9, 200, 20, 0.7, 2),
    "60% TFT, 40% ALLD": ({"TFT": 0.6, "ALLD": 0.4}, 0.9, 200, 20, 0.7, 5),
}


def worker(root: Path, data: Path) -> None:
    """Time ``sfem`` of the ``harness`` under ``root`` on each player in ``data``; print seconds and fits."""
    sys.path.insert(0, str(root))
    import harness
    from harness.analysis.sfem import sfem

    if not Path(harness.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"imported {harness.__file__}, not the harness under {root}")
    out = {}
    with np.load(data) as arrays:
        for name in PLAYERS:
            matches, moves = arrays[f"{name}/matches"], arrays[f"{name}/moves"]
            start = time.process_time()
            fit = sfem(matches, moves)
            out[name] = {"seconds": time.process_time() - start, "fit": repr(fit.as_dict())}
    print(json.dumps(out))


def measure(root: Path, data: Path) -> dict[str, dict[str, object]]:
    """One worker run on the ``harness`` under ``root``: per player, CPU seconds and the fit's repr."""
    argv = [sys.executable, __file__, "--worker", str(root), "--data", str(data)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"the worker on {root} failed: {done.stderr.strip()}")
    result: dict[str, dict[str, object]] = json.loads(done.stdout)
    return result


def simulated(path: Path) -> None:
    """The players' games (match counts and moves), written to ``path`` for both sides."""
    sys.path.insert(0, str(REPO))
    from tests.unit.test_sfem import simulate

    arrays: dict[str, Any] = {}  # Any: savez's keywords include allow_pickle
    for name, (mix, beta, games, rounds, opp_coop, seed) in PLAYERS.items():
        arrays[f"{name}/matches"], arrays[f"{name}/moves"] = simulate(mix, beta, games, rounds, opp_coop, seed)
    np.savez(path, **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-ref", default=OLD_REF, help="git ref of the code before (default %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each side (the median is reported)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker, args.data)
        return
    with tempfile.TemporaryDirectory() as tmp:
        old, data = Path(tmp) / "old", Path(tmp) / "games.npz"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.old_ref, "harness"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        simulated(data)
        sides = {"before": old, "after": REPO}
        times: dict[tuple[str, str], list[float]] = {(side, name): [] for side in sides for name in PLAYERS}
        for run in range(args.runs):
            fits = {}
            for side in list(sides) if run % 2 == 0 else list(reversed(sides)):
                result = measure(sides[side], data)
                for name in PLAYERS:
                    times[(side, name)].append(float(str(result[name]["seconds"])))
                fits[side] = {name: result[name]["fit"] for name in PLAYERS}
            if fits["before"] != fits["after"]:
                raise SystemExit(f"the two sides' fits differ: {fits}")
    print(
        f"sfem, 200 bootstrap resamples, CPU seconds, median of {args.runs} interleaved runs "
        f"(before: {args.old_ref}; the same fits on both sides, to the last digit)"
    )
    print(f"{'player':>20} {'before':>9} {'after':>9} {'ratio':>7}")
    for name in PLAYERS:
        before = statistics.median(times[("before", name)])
        after = statistics.median(times[("after", name)])
        print(f"{name:>20} {before:>9.3f} {after:>9.3f} {before / after:>6.2f}x")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
