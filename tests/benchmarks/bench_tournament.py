"""Benchmark: PDBench's tournament against axelrod 4.14's, side by side, in CPU time.

The 17 strategies both libraries have (tests/axelrod_reference/generate_tournament_fixture.py lists them),
every unordered pair with self-play, 200 turns, 20 repetitions (3,060 games, 612,000 rounds); everything
stored and queryable. Two comparisons, interleaved (PDBench, axelrod, PDBench, ...), each the median of
``--repeats``:

(a) in process: PDBench's ``run_experiment`` (every game stored in its results file) and the leaderboard read
    back through the SQL views, against axelrod's ``Tournament.play(processes=None)`` (serial; it builds the
    result set the ranking is read from). Imports are not timed; each side plays a small tournament first, so
    that what either loads lazily is loaded.
(b) whole processes: ``pdbench tournament`` (plays, stores, prints the leaderboard and matchups) against a
    script that imports axelrod, plays the same tournament and prints its ranking.

CPU time is user + system time of the process (every thread: DuckDB's too). Both run on one core. axelrod runs
in its own interpreter (it needs PyTorch), PDBench in this one; the script also checks that both agree on
every deterministic pairing's mean payoff per turn.

    python3 -m venv /work/axvenv && /work/axvenv/bin/pip install torch==2.13.0 && \\
        /work/axvenv/bin/pip install axelrod==4.14.0
    python tests/benchmarks/bench_tournament.py [--axelrod-python /work/axvenv/bin/python] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TURNS = 200
REPETITIONS = 20
SEED = 1
STOCHASTIC = {"GTFT", "RAND"}

# The axelrod side, run in the axelrod interpreter. ``inproc``: prints the CPU seconds of Tournament.play and
# the payoff matrix as JSON; ``whole``: plays and prints the ranking, as a user's script would.
AXELROD_SCRIPT = """
import json, sys, time
import axelrod as axl
mode, names = sys.argv[1], sys.argv[2].split(",")
turns, reps, seed = map(int, sys.argv[3:6])
def tournament(n, t, r):
    return axl.Tournament([getattr(axl, c)() for c in names[:n]], turns=t, repetitions=r, seed=seed)
if __name__ == "__main__":
    if mode == "inproc":
        tournament(3, 5, 1).play(processes=None, progress_bar=False)  # what axelrod loads on first use
        start = time.process_time()
        results = tournament(len(names), turns, reps).play(processes=None, progress_bar=False)
        cpu = time.process_time() - start
        print(json.dumps({"cpu": cpu, "ranked": results.ranked_names, "payoff_matrix": results.payoff_matrix}))
    else:
        results = tournament(len(names), turns, reps).play(processes=None, progress_bar=False)
        for rank, name in enumerate(results.ranked_names, 1):
            print(rank, name)
"""


def strategies() -> list[tuple[str, str]]:
    """(PDBench name, axelrod class) of the 17 shared strategies, from the fixture generator's list."""
    sys.path.insert(0, str(ROOT / "tests" / "axelrod_reference"))
    from generate_tournament_fixture import STRATEGIES  # type: ignore[import-not-found]

    return list(STRATEGIES)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pdbench_in_process(players: list[str], tmp: Path, n: int) -> tuple[float, dict[tuple[str, str], float]]:
    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment
    from harness.states import RunStatus
    from harness.store.catalog import open_run

    config = tournament_config(players, rounds=TURNS, replicates=REPETITIONS, seed=SEED)
    start = time.process_time()
    result = run_experiment(config, results_dir=tmp, run_id=f"inproc{n}")
    with open_run(tmp, f"inproc{n}") as cat:
        board = cat.records("SELECT * FROM tournament")
    cpu = time.process_time() - start
    assert result.status is RunStatus.COMPLETE and len(board) == len(players)
    with open_run(tmp, f"inproc{n}") as cat:
        cells = {
            (r["player"], r["opponent"]): r["mean_payoff_per_round"] for r in cat.records("SELECT * FROM matchups")
        }
    return cpu, cells


def pdbench_warm_up(players: list[str], tmp: Path) -> None:
    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment
    from harness.store.catalog import open_run

    run_experiment(tournament_config(players[:3], rounds=5, replicates=1, seed=SEED), results_dir=tmp, run_id="warm")
    with open_run(tmp, "warm") as cat:
        cat.records("SELECT * FROM tournament")


def axelrod_in_process(python: str, classes: list[str]) -> dict[str, object]:
    out = subprocess.run([python, "-c", AXELROD_SCRIPT, "inproc", ",".join(classes), str(TURNS), str(REPETITIONS),
                          str(SEED)], check=True, capture_output=True, text=True).stdout  # fmt: skip
    return dict(json.loads(out.strip().splitlines()[-1]))


def whole_process(argv: list[str]) -> float:
    before = children_cpu()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axelrod-python", default="/work/axvenv/bin/python")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):  # one core for both, inherited by the subprocesses
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    pairs = strategies()
    players, classes = [p for p, _ in pairs], [c for _, c in pairs]
    pdbench = [str(Path(sys.executable).with_name("pdbench"))]
    # Both sides start from compiled bytecode, as an installed package does (pip compiles axelrod's; PDBench is
    # installed editable, so its bytecode is written on first use, unless PYTHONDONTWRITEBYTECODE says not to).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "harness")], check=True)
    print(f"{len(players)} strategies, every pair with self-play, {TURNS} turns x {REPETITIONS} repetitions; "
          f"CPU seconds, one core, median of {args.repeats}, interleaved; load: {os.getloadavg()[0]:.2f}")  # fmt: skip
    pd_in, ax_in, pd_whole, ax_whole = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pdbench_warm_up(players, tmp)
        cells: dict[tuple[str, str], float] = {}
        matrix: list[list[float]] = []
        for n in range(args.repeats):
            cpu, cells = pdbench_in_process(players, tmp, n)
            pd_in.append(cpu)
            ax = axelrod_in_process(args.axelrod_python, classes)
            ax_in.append(float(ax["cpu"]))  # type: ignore[arg-type]
            matrix = ax["payoff_matrix"]  # type: ignore[assignment]
            pd_whole.append(whole_process([*pdbench, "tournament", "--players", ",".join(players), "--rounds",
                                           str(TURNS), "--replicates", str(REPETITIONS), "--seed", str(SEED),
                                           "--results", str(tmp), "--run-id", f"whole{n}"]))  # fmt: skip
            ax_whole.append(whole_process([args.axelrod_python, "-c", AXELROD_SCRIPT, "whole", ",".join(classes),
                                           str(TURNS), str(REPETITIONS), str(SEED)]))  # fmt: skip
    worst = 0.0
    for i, a in enumerate(players):
        for j, b in enumerate(players):
            if STOCHASTIC.isdisjoint((a, b)):
                worst = max(worst, abs(cells[(a, b)] - matrix[i][j]))
    assert worst < 1e-9, f"deterministic pairings disagree by up to {worst}"
    print("both agree on every deterministic pairing's mean payoff per turn")
    for label, pd, ax, target in (
        ("in process (play + store + leaderboard vs Tournament.play)", pd_in, ax_in, 25),
        ("whole processes (pdbench tournament vs a script)", pd_whole, ax_whole, 30),
    ):
        p, a = statistics.median(pd), statistics.median(ax)
        print(f"{label}:\n  PDBench {p:7.3f} s  {[round(x, 3) for x in pd]}\n  axelrod {a:7.3f} s  "
              f"{[round(x, 3) for x in ax]}\n  axelrod / PDBench: {a / p:.1f}x (target >= {target}x)")  # fmt: skip
    print(f"load at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
