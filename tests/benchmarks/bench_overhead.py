"""Benchmark: the harness's own cost per model call, with a model that answers instantly.

``mock/random`` (zero latency, a fresh random draw per request, so replicates and opponents
quickly diverge and few requests repeat) plays a panel of classic strategies: by default
8 opponents x 25 replicates = 200 games x 50 rounds = 10,000 model calls, every game, round and
call recorded to DuckDB, through the same path as ``pdbench eval`` (scheduler, call path,
limiter, live recorder). The process is pinned to one core.

Three modes, each in a fresh child process so that peak memory is its own:

* ``no-cache``: ``EngineOptions(cache_path=None)`` (``--no-cache``); identical requests within
  the run are still answered once (the call path's in-flight coalescing and answered map).
* ``cache-cold``: a new SQLite response cache, filled as the run goes (a miss and a write per request).
* ``cache-warm``: the same experiment again, under a new run id, on the filled cache (all hits).

Reported: model calls per second = rows of the ``calls`` table / wall time of ``run_experiment``
(target >= 1,000, issue 10), and peak memory as ``ru_maxrss`` of the child (peak resident set size of the
whole process: interpreter, imports, DuckDB's native buffers), with its value just before
``run_experiment`` for the run's own share. ``--tracemalloc`` adds tracemalloc's peak (Python
heap only; it slows the run, so its timing is not reported). ``--profile`` prints a cProfile of
the no-cache run.

Run:

    /work/venv/bin/python tests/benchmarks/bench_overhead.py [--games 200] [--rounds 50] [--profile]
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

ROOT = Path(__file__).resolve().parents[2]
PANEL = ["ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT"]
MODEL = "mock/random"
TARGET = 1000.0  # issue 10: mock/random at or above 1,000 calls/s with the plain call path
MODES = ("no-cache", "cache-cold", "cache-warm")


def pin_to_one_core() -> int:
    """Pin this process (and every thread it starts later) to its first allowed CPU."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    os.sched_setaffinity(0, {cpu})
    return cpu


def rss_peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(args: argparse.Namespace) -> None:
    """One measured run; prints one JSON line."""
    cpu = pin_to_one_core()  # before anything starts a thread (DuckDB, anyio's worker threads)
    import duckdb

    from harness.config.engine_options import EngineOptions
    from harness.config.presets.evaluation import eval_config
    from harness.engine.runner import run_experiment

    replicates = max(1, args.games // len(PANEL))
    config = eval_config(MODEL, opponents=PANEL, rounds=args.rounds, replicates=replicates, seed=11)
    results = Path(args.workdir)
    cache = results / "responses.sqlite" if args.mode != "no-cache" else None
    engine = EngineOptions(cache_path=cache)
    run_id = args.mode.replace("-", "_") + ("_traced" if args.tracemalloc else "")

    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    rss_before = rss_peak_mib()
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = run_experiment(config, results_dir=results, run_id=run_id, engine=engine)
    if profiler is not None:
        profiler.disable()
    wall = time.perf_counter() - start
    traced_peak = None
    if args.tracemalloc:
        traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    rss_after = rss_peak_mib()

    con = duckdb.connect(str(result.path), read_only=True)
    try:
        calls, cached, games, rounds = con.execute(
            "SELECT (SELECT count(*) FROM calls), (SELECT count(*) FILTER (WHERE cached) FROM calls), "
            "(SELECT count(*) FILTER (WHERE status = 'complete') FROM games), (SELECT count(*) FROM rounds)"
        ).fetchone()
    finally:
        con.close()
    if profiler is not None:
        import pstats

        out = Path(args.workdir) / f"{run_id}.pstats"
        profiler.dump_stats(out)
        stats = pstats.Stats(str(out), stream=sys.stderr)
        print(f"\n--- cProfile of {run_id} (wall {wall:.2f} s with profiling), by cumulative time ---", file=sys.stderr)
        stats.sort_stats("cumulative").print_stats(45)
        print("--- by own (tottime) time ---", file=sys.stderr)
        stats.sort_stats("tottime").print_stats(35)
    print(
        json.dumps(
            {
                "mode": args.mode,
                "cpu": cpu,
                "status": result.status,
                "games": games,
                "rounds": rounds,
                "calls": calls,
                "cached": cached,
                "wall_s": wall,
                "runner_s": result.seconds,
                "rss_before_mib": rss_before,
                "rss_peak_mib": rss_after,
                "tracemalloc_peak_mib": traced_peak,
                "db_mib": result.path.stat().st_size / 2**20,
            }
        )
    )


def spawn(
    mode: str, workdir: Path, args: argparse.Namespace, *, tracemalloc: bool = False, profile: bool = False
) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        "--mode",
        mode,
        "--workdir",
        str(workdir),
        "--games",
        str(args.games),
        "--rounds",
        str(args.rounds),
    ]
    if tracemalloc:
        command.append("--tracemalloc")
    if profile:
        command.append("--profile")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
    if profile:
        sys.stdout.write(proc.stderr)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout + proc.stderr)
        raise SystemExit(f"the {mode} run failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games (rounded down to a multiple of the panel, 8)")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode; the median rate is reported")
    parser.add_argument("--tracemalloc", action="store_true", help="also measure tracemalloc's peak (extra runs)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the no-cache run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per child run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    traced: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="pdbench_overhead_") as tmp:
        for rep in range(args.repeats):
            workdir = Path(tmp) / f"repeat{rep}"  # a fresh cache per repeat: cache-cold is really cold
            workdir.mkdir()
            for mode in MODES:  # cache-warm reads the cache cache-cold filled
                print(f"running {mode} (repeat {rep + 1}/{args.repeats}) ...", flush=True)
                runs[mode].append(spawn(mode, workdir, args))
        if args.tracemalloc:
            workdir = Path(tmp) / "traced"
            workdir.mkdir()
            for mode in MODES:
                print(f"running {mode} under tracemalloc ...", flush=True)
                traced[mode] = spawn(mode, workdir, args, tracemalloc=True)["tracemalloc_peak_mib"]
        if args.profile:
            workdir = Path(tmp) / "profile"
            workdir.mkdir()
            print("profiling no-cache ...", flush=True)
            spawn("no-cache", workdir, args, profile=True)

    first = runs[MODES[0]][0]
    print(
        f"\nHarness overhead: {MODEL}, zero latency, pinned to one core (cpu {first['cpu']}), "
        f"{first['games']} games x {args.rounds} rounds, recorded to DuckDB; {args.repeats} repeat(s) per mode"
    )
    header = [
        "mode",
        "games",
        "calls",
        "cached",
        "wall s",
        "calls/s (median)",
        "range",
        f"vs {TARGET:,.0f}",
        "RSS before",
        "RSS peak",
    ]
    if traced:
        header.append("tracemalloc peak")
    table = [header]
    for mode in MODES:
        rates = sorted(r["calls"] / r["wall_s"] for r in runs[mode])
        rate = statistics.median(rates)
        r = min(runs[mode], key=lambda x: abs(x["calls"] / x["wall_s"] - rate))
        line = [
            mode,
            f"{r['games']}",
            f"{r['calls']:,}",
            f"{r['cached']:,}",
            f"{r['calls'] / rate:.2f}",
            f"{rate:,.0f}",
            f"{rates[0]:,.0f}-{rates[-1]:,.0f}",
            f"{rate / TARGET:.2f} ({'MET' if rate >= TARGET else 'MISSED'})",
            f"{max(x['rss_before_mib'] for x in runs[mode]):.0f} MiB",
            f"{max(x['rss_peak_mib'] for x in runs[mode]):.0f} MiB",
        ]
        if traced:
            peak = traced.get(mode)
            line.append(f"{peak:.1f} MiB" if peak is not None else "-")
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        print(
            "  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        )
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))
    print(
        "calls/s = rows of the calls table / wall time of run_experiment; RSS = ru_maxrss of the child process "
        "(peak resident set, whole process; max over repeats), 'before' = just before run_experiment."
    )


if __name__ == "__main__":
    main()
