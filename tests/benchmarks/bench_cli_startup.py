"""Benchmark: CPU time of `pdbench --help`, `pdbench sql "select 1"` and a one-round eval, against a bare interpreter.

Each command runs ``--repeat`` times (default 15) as a child process; its CPU time is the user + system time
of that child (``resource.getrusage(RUSAGE_CHILDREN)`` before and after, so the time of this script and of
other processes on the machine is not counted, as it would be in a wall-clock time). Reported: the median,
the fastest and the slowest, for each command and for ``python -c pass`` in the same run, the floor no
command can go below (the interpreter's own start). Target (issue 11): a median under 0.5 s for both.

``pdbench sql`` reads an empty results folder by default, so that the figure is the command's own start;
``--results DIR`` measures it on a real folder (each run file attached adds a few milliseconds).

Run:

    .venv/bin/python tests/benchmarks/bench_cli_startup.py [--repeat 15] [--results DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_S = 0.5


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU time of one run of ``argv`` (and of any process it starts and waits for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each command (the median is reported)")
    parser.add_argument("--results", type=Path, default=None, help="results folder for `pdbench sql`")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as empty:
        results = str(args.results or empty)
        env = {**os.environ, "PDBENCH_RESULTS": results}
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "pdbench --help": [python, "-m", "harness.entry", "--help"],
            'pdbench sql "select 1"': [python, "-m", "harness.entry", "sql", "select 1"],
            "pdbench eval (1 round)": [
                *(python, "-m", "harness.entry", "eval", "--model", "mock/tft", "--opponents", "ALLC"),
                *("--rounds", "1", "--replicates", "1", "--results", results, "--run-id", "startup", "--overwrite"),
            ],
        }
        for argv in commands.values():  # warm the file cache (and the .pyc files) once
            cpu_seconds(argv, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # interleaved, so a busy moment of the machine touches every command alike
            for name, argv in commands.items():
                times[name].append(cpu_seconds(argv, env))
    floor = statistics.median(times["python -c pass"])
    print(f"CPU time (user + system) of each command, {args.repeat} runs, {os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]}; results folder: {results if args.results else 'empty'}")  # fmt: skip
    print(f"{'command':<26} {'median':>8} {'min':>8} {'max':>8} {'above python':>13}  target")
    for name, values in times.items():
        median = statistics.median(values)
        verdict = "" if name.startswith(("python", "pdbench eval")) else ("ok" if median < TARGET_S else "OVER")
        print(f"{name:<26} {median:>7.3f}s {min(values):>7.3f}s {max(values):>7.3f}s {median - floor:>12.3f}s  "
              f"{f'< {TARGET_S} s ' + verdict if verdict else ''}")  # fmt: skip


if __name__ == "__main__":
    main()
