"""Benchmark: how many finished games a run keeps when it is stopped with Ctrl-C part-way.

A real ``pdbench eval`` (``mock/tft`` with a per-call latency, so games take as long as they would
against a slow endpoint) runs once to the end to measure its playing time T, then three times more,
each sent a real SIGINT at 25%, 50% and 75% of T. For each it prints the finished games kept (against
the share of the plan that the elapsed time would predict), the games that were in flight and are
left for ``pdbench resume``, and the whole replicates kept (the fewest finished games of any
condition: every condition has at least that many).

Run (about a minute):

    .venv/bin/python tests/benchmarks/bench_interrupt.py [--replicates 30] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.store.catalog import open_run  # noqa: E402

RUN = "bench"


def command(replicates: int, rounds: int, latency_ms: int) -> list[str]:
    return [sys.executable, "-m", "harness.entry", "eval", "--model", f"mock/tft?latency_ms={latency_ms}",
            "--rounds", str(rounds), "--replicates", str(replicates), "--run-id", RUN, "--no-cache"]  # fmt: skip


def play(results: Path, cmd: list[str], stop_after: float | None) -> float:
    """Run ``cmd``; SIGINT ``stop_after`` seconds after the run's file appears. Returns seconds from the
    file's appearance to the end of the process."""
    env = dict(os.environ, PDBENCH_RESULTS=str(results))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not (results / f"{RUN}.duckdb").exists():
        if proc.poll() is not None:
            raise SystemExit(f"pdbench ended before its run started: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        time.sleep(0.01)
    started = time.perf_counter()
    if stop_after is not None:
        time.sleep(stop_after)
        proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=600)
    if b"Traceback" in err:
        raise SystemExit(err.decode())
    return time.perf_counter() - started


def kept(results: Path) -> dict[str, int]:
    with open_run(results, RUN) as cat:
        row = cat.records(
            "select (select games_planned from runs) as planned, "
            "count(*) filter (where status = 'complete') as finished, "
            "count(*) filter (where status = 'interrupted') as in_flight from games"
        )[0]
        per_condition = cat.records(
            "select count(*) filter (where status = 'complete') as n from games group by condition"
        )
    row["whole_replicates"] = min(r["n"] for r in per_condition) if per_condition else 0
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=30, help="games per opponent (the default panel)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--latency-ms", type=int, default=20, help="the mock's latency per call")
    args = parser.parse_args()
    cmd = command(args.replicates, args.rounds, args.latency_ms)
    with tempfile.TemporaryDirectory() as tmp:
        full = play(Path(tmp) / "full", cmd, None)
        whole = kept(Path(tmp) / "full")
        print(f"uninterrupted: {whole['finished']} of {whole['planned']} games in {full:.1f} s of play "
              f"({args.replicates} replicates, {args.rounds} rounds, {args.latency_ms} ms a call)")  # fmt: skip
        print(f"{'stopped at':>10}  {'finished games kept':>22}  {'in flight (resume)':>18}  {'whole replicates':>16}")
        for share in (0.25, 0.50, 0.75):
            folder = Path(tmp) / f"at{int(share * 100)}"
            play(folder, cmd, share * full)
            k = kept(folder)
            print(f"{share:>10.0%}  {k['finished']:>5}/{k['planned']} ({k['finished'] / k['planned']:>4.0%})"
                  f"{'':>6}  {k['in_flight']:>18}  {k['whole_replicates']:>9} of {args.replicates}")  # fmt: skip


if __name__ == "__main__":
    main()
