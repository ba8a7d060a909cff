"""Benchmark: the same round robin in PDBench and in the Axelrod library, on one core.

ALLC, ALLD, TFT, GRIM, GTFT, WSLS; every unordered pair including self-play; 200 rounds;
100 replicates. PDBench's time includes storing every game and round in DuckDB and
reading the leaderboard and matchups back through the SQL views. Axelrod's is
``Tournament.play(processes=None)`` (serial), which plays the matches and builds the result
set the scores are read from; the time with ``build_results=False`` (matches only, no
scores) is printed too. Both libraries play a deterministic, noiseless pairing once and
reuse it for every repetition; both record every repetition. Each side is timed
``--repeats`` times (the median is reported); importing the libraries is not timed.
The script also checks that both agree: the mean payoff per round of every matchup is
identical for deterministic pairs and, for pairs involving the stochastic GTFT, within
sampling error.

Run (axelrod needs PyTorch; install the CPU build first):

    pip install torch==2.13.0 && pip install axelrod==4.14.0
    python tests/benchmarks/bench_vs_axelrod.py [--replicates 100] [--rounds 200]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

PLAYERS = ["ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS"]
AXELROD = {
    "ALLC": "Cooperator",
    "ALLD": "Defector",
    "TFT": "TitForTat",
    "GRIM": "Grudger",
    "GTFT": "GTFT",
    "WSLS": "WinStayLoseShift",
}


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def run_pdbench(rounds: int, replicates: int) -> tuple[float, dict[tuple[str, str], float]]:
    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment
    from harness.store.catalog import open_run

    config = tournament_config(PLAYERS, rounds=rounds, replicates=replicates, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run_experiment(config, results_dir=Path(tmp), run_id="bench")
        with open_run(Path(tmp), "bench") as cat:
            cat.query("SELECT * FROM tournament")
            cells = {
                (r["player"], r["opponent"]): r["mean_payoff_per_round"]
                for r in cat.records("SELECT player, opponent, mean_payoff_per_round FROM matchups")
            }
        seconds = time.perf_counter() - start
    assert result.status == "complete" and result.games_done == len(PLAYERS) * (len(PLAYERS) + 1) // 2 * replicates
    return seconds, cells


def run_axelrod(rounds: int, replicates: int, build_results: bool) -> tuple[float, object]:
    import axelrod as axl

    players = [getattr(axl, AXELROD[p])() for p in PLAYERS]
    tournament = axl.Tournament(players, turns=rounds, repetitions=replicates, seed=1)
    start = time.perf_counter()
    results = tournament.play(processes=None, progress_bar=False, build_results=build_results)
    return time.perf_counter() - start, results


def compare(cells: dict[tuple[str, str], float], results: object, rounds: int, replicates: int) -> float:
    """Largest difference in a matchup's mean payoff per round; asserts agreement."""
    matrix = results.payoff_matrix  # type: ignore[attr-defined]  # mean per-turn payoff, row vs column
    worst = 0.0
    for i, a in enumerate(PLAYERS):
        for j, b in enumerate(PLAYERS):
            ours, theirs = cells[(a, b)], matrix[i][j]
            diff = abs(ours - theirs)
            worst = max(worst, diff)
            if "GTFT" in (a, b):
                # Both estimate the same mean from `replicates` independent games: allow 5 standard errors
                # of a per-round payoff bounded by [0, 5] (a loose bound on its standard deviation).
                tol = 5 * 2.5 / math.sqrt(replicates)
                assert diff <= tol, f"{a} vs {b}: pdbench {ours:.4f}, axelrod {theirs:.4f}"
            else:
                assert diff < 1e-9, f"{a} vs {b}: pdbench {ours:.6f}, axelrod {theirs:.6f}"
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pin_to_one_core()
    import warnings

    import axelrod  # noqa: F401 - imported up front: its import takes tens of seconds and is not timed

    warnings.filterwarnings("ignore", message="Tournament results will not be accessible")
    games = len(PLAYERS) * (len(PLAYERS) + 1) // 2 * args.replicates
    print(
        f"round robin of {', '.join(PLAYERS)} with self-play: {games} games x {args.rounds} rounds, "
        f"one core, median of {args.repeats}"
    )

    pd_runs = [run_pdbench(args.rounds, args.replicates) for _ in range(args.repeats)]
    pd_seconds = statistics.median(t for t, _ in pd_runs)
    cells = pd_runs[0][1]
    print(f"PDBench  play + DuckDB store + SQL leaderboard:  {pd_seconds:8.3f} s")
    ax_runs = [run_axelrod(args.rounds, args.replicates, build_results=True) for _ in range(args.repeats)]
    ax_full = statistics.median(t for t, _ in ax_runs)
    print(f"Axelrod  Tournament.play (scores built):          {ax_full:8.3f} s")
    ax_bare = statistics.median(
        run_axelrod(args.rounds, args.replicates, build_results=False)[0] for _ in range(args.repeats)
    )
    print(f"Axelrod  Tournament.play(build_results=False):    {ax_bare:8.3f} s  (matches only, no scores)")
    worst = compare(cells, ax_runs[0][1], args.rounds, args.replicates)
    print(f"scores agree: every matchup's mean payoff per round (largest difference {worst:.4f}, in a GTFT pair)")
    print(
        f"ratio Axelrod / PDBench: {ax_full / pd_seconds:.1f}x (target >= 10x); "
        f"against Axelrod's matches-only time: {ax_bare / pd_seconds:.1f}x"
    )


if __name__ == "__main__":
    main()
