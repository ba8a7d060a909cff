"""Benchmark: the round loop of strategy games, before and after it became one loop (issue 20), side by side.

"Before" is the code of ``--old-ref`` (default: the last commit with the separate noiseless loop and
``Match.record`` per noisy round), exported with ``git archive <ref> harness`` into a temporary folder; "after"
is this checkout. Each side runs as a child process of this script (``--worker``) that puts its own
``harness`` first on ``sys.path`` (and checks it got it), so the two never share a module. A worker builds every
game first (matches, players, random streams), then times only the play calls with ``time.process_time``
(CPU time, no storage), ``--passes`` times (3) over fresh games, and prints the fastest pass and a digest of
every game (moves as intended and as played, payoffs, scores): the script refuses figures whose digests differ,
so both sides played the same games.

The games: the 17 strategies both PDBench and axelrod have (``tests/axelrod_reference``), a round robin with
self-play (153 pairings), ``--turns`` 200, ``--repetitions`` 20 (3,060 games), without noise and with noise
0.05. The runs are interleaved (before, after, after, before, ...) so a busy moment of the machine touches both
alike; the median of ``--runs`` (default 5) is reported, with the ratio before / after and the load average.
The machine should be quiet: on a loaded one the ratios move by 0.1 to 0.2 from run to run.

Run:

    .venv/bin/python tests/benchmarks/bench_play_loop.py [--old-ref REF] [--runs 5] [--passes 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OLD_REF = "825c92c"  # branch house before issue 20's one round loop
NAMES = [
    "ALLC",
    "ALLD",
    "TFT",
    "GRIM",
    "GTFT",
    "WSLS",
    "TF2T",
    "STFT",
    "ALT",
    "RAND",
    "TTFT",
    "HTFT",
    "BULLY",
    "GRADUAL",
    "SMAJ",
    "HMAJ",
    "PROBER",
]
NOISES = (0.0, 0.05)
TARGETS = {0.0: 1.0, 0.05: 1.5}  # after must be at least this many times as fast as before


def worker(root: Path, noise: float, turns: int, repetitions: int, passes: int) -> None:
    """Play the round robin with the ``harness`` under ``root``; print its CPU time and digest as JSON."""
    sys.path.insert(0, str(root))
    import harness
    from harness.game.match import Match
    from harness.game.rules import PayoffMatrix
    from harness.players.strategies import make_spec
    from harness.players.strategies.play import play_strategies

    if not Path(harness.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"imported {harness.__file__}, not the harness under {root}")
    game = PayoffMatrix()
    specs = [make_spec(name) for name in NAMES]
    times = []
    for _ in range(passes):  # fresh games each pass; the fastest pass is the one least disturbed by the machine
        games = []
        for rep in range(repetitions):
            for i, spec_a in enumerate(specs):
                for j in range(i, len(specs)):
                    seed = (rep * len(specs) + i) * len(specs) + j
                    match = Match(game, noise, random.Random(seed))
                    a = spec_a.build(game, random.Random(seed + 1_000_003))
                    b = specs[j].build(game, random.Random(seed + 2_000_003))
                    games.append((match, a, b))
        start = time.process_time()
        for match, a, b in games:
            play_strategies(match, a, b, turns)
        times.append(time.process_time() - start)
    seconds = min(times)
    digest = hashlib.sha256()
    for match, _, _ in games:
        digest.update(
            repr(
                (
                    match.moves_a,
                    match.moves_b,
                    match.intended_a,
                    match.intended_b,
                    match.payoffs_a,
                    match.payoffs_b,
                    match.score_a,
                    match.score_b,
                )
            ).encode()
        )
    print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))


def measure(root: Path, noise: float, args: argparse.Namespace) -> tuple[float, str]:
    """One worker run on the ``harness`` under ``root``: (CPU seconds of play, digest)."""
    argv = [
        sys.executable,
        __file__,
        "--worker",
        str(root),
        "--noise",
        str(noise),
        "--turns",
        str(args.turns),
        "--repetitions",
        str(args.repetitions),
        "--passes",
        str(args.passes),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"the worker on {root} failed: {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return float(out["seconds"]), str(out["digest"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-ref", default=OLD_REF, help="git ref of the code before (default %(default)s)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs of each side (the median is reported)")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--passes", type=int, default=3, help="timed passes in each run (the fastest is its figure)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--noise", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker, args.noise, args.turns, args.repetitions, args.passes)
        return
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.old_ref, "harness"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        sides = {"before": old, "after": REPO}
        times: dict[tuple[str, float], list[float]] = {(side, n): [] for side in sides for n in NOISES}
        for run in range(args.runs):
            for noise in NOISES:
                order = list(sides) if run % 2 == 0 else list(reversed(sides))
                digests = {}
                for side in order:
                    seconds, digests[side] = measure(sides[side], noise, args)
                    times[(side, noise)].append(seconds)
                if digests["before"] != digests["after"]:
                    raise SystemExit(f"noise {noise}: the two sides played different games")
    games = args.repetitions * len(NAMES) * (len(NAMES) + 1) // 2
    print(
        f"{games} games of {args.turns} turns, CPU seconds of play, median of {args.runs} interleaved runs "
        f"(before: {args.old_ref}; same games on both sides, digest checked)"
    )
    print(f"{'noise':>6} {'before':>9} {'after':>9} {'ratio':>7} {'target':>7}")
    for noise in NOISES:
        before = statistics.median(times[("before", noise)])
        after = statistics.median(times[("after", noise)])
        print(f"{noise:>6} {before:>9.3f} {after:>9.3f} {before / after:>6.2f}x {TARGETS[noise]:>6.1f}x")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
