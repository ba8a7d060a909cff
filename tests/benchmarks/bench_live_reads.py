"""Benchmark: reading a run while it is written (live copies, harness/store/snapshot.py).

One ``pdbench eval`` of the mock model against the classic panel is written by one process; readers
in other processes look at it in alternating phases: ``--phase-s`` seconds with no reader, then as
long with readers polling, for ``--cycles`` cycles, all in the same run. Then the run is stopped
(Ctrl-C) and read back. Reported:

1. Latency from a game's end to its visibility in a reader: the game's end is its last call's start
   plus that call's duration (``calls.created_at + duration_ms``, from the finished file); it is
   visible when a reader's query that returned it came back. Median, 90th percentile and maximum over
   the games that ended in the reading phases (after their first 3 s, when the first copy is made).
2. The writer's throughput: model calls per second (``calls.created_at``) in the no-reader phases and
   in the reading phases, and their ratio (target: reading costs at most 10%); and the same per second
   of the writer's CPU time (``/proc/<pid>/stat``), which other load on the machine does not sway as
   much (on a shared machine, the wall-clock rate of a writer that needs a whole core moves with what
   else runs: the 1-minute load average over the phases is printed beside). A no-reader phase is
   measured only after the writer has stopped publishing (:data:`WANTED_FOR_S` after the last request),
   a reading phase after its first 3 s.
3. What publishing itself costs: the writer's CPU time inside ``Publisher.publish`` (measured in the
   writer, by a wrapper around it) as a share of the writer's CPU time in the reading phases, and the
   time one publication takes (median, maximum). This is the figure other load cannot move: the
   throughput ratios above also carry whatever else the machine runs, readers included.
4. The writer's checkpoints (it makes them itself once its log reaches 16 MB, held back while read;
   DuckDB makes one inside a commit at 64 MB, counted apart, its length unknown): how many and the
   longest, in the phases without and with readers. No commit can be made while one runs, so
   a game that ends during one can be seen only after it; the late games (seen 5 s or more after their
   end) are counted, and how many of them ended during a checkpoint or in the second before it.

Readers (``--reader``): ``catalog``, one process opening a :class:`Catalog` every 0.5 s and listing
the complete games (what the dashboard does); ``sql``,
``pdbench sql "select game_id from games where status='complete'"`` started every 1 s (each a new
process, so its visibility time includes the command's start-up); and, as a control, ``burn``, no
reader but a process spinning on the readers' core (what CPU load beside the writer costs it on this
machine, without any copy being made). Profiles
(``--profile``): ``api``, a model answering in 200 ms, 16 requests at a time (80 calls/s: how a paid
API run goes); ``cpu``, a model answering at once, as fast as the harness goes (the worst case for
the writer: every cycle spent publishing is one not spent playing). On a machine with two or more
cores the writer is pinned to one core and the readers to another, so that what is measured is the
writer's cost of publishing, not two processes sharing one core.

Run:

    .venv/bin/python tests/benchmarks/bench_live_reads.py [--profile api cpu] [--reader catalog sql] [--phase-s 30]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import IO, Any

import duckdb

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.store.snapshot import WANTED_FOR_S  # noqa: E402

PROFILES = {
    "api": {"model": "mock/tft?latency_ms=200", "concurrency": 16, "rounds": 20},
    "cpu": {"model": "mock/tft", "concurrency": 64, "rounds": 20},
}
SETTLE_S = 3.0  # the start of a reading phase left out: the first copy is being made
TARGET = 0.90  # throughput with readers / without, at least


def cores() -> tuple[set[int], set[int]]:
    """The writer's core and the readers' cores (all cores when there is only one)."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return set(allowed), set(allowed)
    return {allowed[0]}, set(allowed[1:])


def pinned(cpus: set[int]) -> Callable[[], None]:
    return lambda: os.sched_setaffinity(0, cpus)


# The writer, with the time its publishing takes recorded (one line per copy: when, thread CPU s, wall s),
# and its checkpoints (one line each: when it began, wall s), which hold back every commit while they run.
WRITER = """
import os, runpy, sys, time
from harness.store import snapshot, writer
log = open(os.environ["BENCH_PUBLISH_LOG"], "a", buffering=1)
checkpoints = open(os.environ["BENCH_PUBLISH_LOG"] + ".checkpoints", "a", buffering=1)
publish = snapshot.Publisher.publish
publishing = [0.0]  # wall seconds spent publishing so far
def timed(self):
    cpu, wall = time.thread_time(), time.perf_counter()
    publish(self)
    publishing[0] += time.perf_counter() - wall
    log.write(f"{time.time()} {time.thread_time() - cpu} {time.perf_counter() - wall}\\n")
snapshot.Publisher.publish = timed
committed = writer.RunWriter.committed
log_after = [0]  # the log's size after the last committed()
def log_size(self):
    return self._wal.stat().st_size if self._wal.exists() else 0
def timed_committed(self):
    size = log_size(self)
    if size < log_after[0]:  # DuckDB checkpointed on its own, inside the commit just made: its length unknown
        checkpoints.write(f"{time.time()} nan\\n")
    wall, published = time.perf_counter(), publishing[0]
    committed(self)
    log_after[0] = log_size(self)
    if log_after[0] < size:  # ours: after the copy, if one was due
        took = time.perf_counter() - wall - (publishing[0] - published)
        checkpoints.write(f"{time.time() - took} {took}\\n")
writer.RunWriter.committed = timed_committed
sys.argv = ["pdbench", *sys.argv[1:]]
runpy.run_module("harness.cli", run_name="__main__")
"""


def start_writer(results: Path, profile: dict[str, Any], cpus: set[int], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, "eval", "--model", profile["model"], "--rounds", str(profile["rounds"]),
         "--replicates", "100000", "--concurrency", str(profile["concurrency"]), "--no-cache",
         "--results", str(results), "--run-id", "bench"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pinned(cpus),
        env={**os.environ, "BENCH_PUBLISH_LOG": str(log)},
    )  # fmt: skip


class Readers:
    """The readers of one reading phase; what they saw, as (time the query returned, complete game ids)."""

    def __init__(self, kind: str, results: Path, cpus: set[int]) -> None:
        self.kind, self.results, self.cpus = kind, results, cpus
        self.seen: list[tuple[float, list[int]]] = []
        self.live_times: set[float] = set()
        self.command_s: list[float] = []  # how long each `pdbench sql` took, start-up included
        self._proc: subprocess.Popen[str] | None = None
        self._out: IO[str] | None = None

    def start(self) -> None:
        if self.kind == "burn":  # the control: no reader, only as much CPU load beside the writer as one
            self._proc = subprocess.Popen(
                [sys.executable, "-c", "while True: pass"], text=True, preexec_fn=pinned(self.cpus)
            )
        if self.kind == "catalog":
            # Its looks go to a file: a pipe no one reads while the phase runs would fill and stop the reader.
            self._out = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by stop()
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "tests.support.live_reader", str(self.results), "bench", "--every", "0.5",
                 "--timeout", "100000", "--light"],
                cwd=ROOT, stdout=self._out, text=True, preexec_fn=pinned(self.cpus),
            )  # fmt: skip

    def poll_sql(self) -> None:
        """One `pdbench sql` look (the ``sql`` reader), run to its end."""
        started = time.time()
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "sql", "select game_id from games where status = 'complete'",
             "--results", str(self.results), "--format", "json"],
            cwd=ROOT, capture_output=True, text=True, preexec_fn=pinned(self.cpus),
        )  # fmt: skip
        if done.returncode == 0:
            self.seen.append((time.time(), [r["game_id"] for r in json.loads(done.stdout)]))
            self.command_s.append(time.time() - started)

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.send_signal(signal.SIGTERM)
        if self._out is None:  # the control
            self._proc.wait(timeout=60)
            self._proc = None
            return
        self._proc.wait(timeout=60)
        self._out.seek(0)
        for line in self._out.read().splitlines():
            look = json.loads(line)
            self.seen.append((look["t"], look["complete"]))
            if look["live_at"] is not None:
                self.live_times.add(look["live_at"])
        self._proc = None
        self._out.close()


@dataclass(frozen=True)
class Phase:
    kind: str  # "off": no reader; "on": readers polling
    start: float
    begin: float  # the measured part: from here to the end
    end: float
    cpu_s: float  # the writer's CPU time (user + system) in the measured part


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_profile(name: str, reader: str, phase_s: float, cycles: int) -> dict[str, Any]:
    writer_cpus, reader_cpus = cores()
    with tempfile.TemporaryDirectory(prefix="bench_live_") as tmp:
        results = Path(tmp)
        publish_log = results / "publish.log"
        writer = start_writer(results, PROFILES[name], writer_cpus, publish_log)
        try:
            while not (results / "bench.duckdb").exists():
                if writer.poll() is not None:
                    raise SystemExit(f"the writer stopped (exit {writer.returncode}) before it created its run")
                time.sleep(0.1)
            time.sleep(phase_s)  # warm-up: the first games of a run all end together
            phases: list[Phase] = []
            readers = Readers(reader, results, reader_cpus)
            load = [os.getloadavg()[0]]
            for _ in range(cycles):
                for kind in ("off", "on"):
                    start = time.time()
                    begin, cpu_begin = start + (WANTED_FOR_S + 1.0 if kind == "off" else SETTLE_S), None
                    if kind == "on":
                        readers.start()
                    while time.time() < start + phase_s:
                        if cpu_begin is None and time.time() >= begin:
                            begin, cpu_begin = time.time(), cpu_seconds(writer.pid)
                        if kind == "on" and reader == "sql":
                            begun = time.monotonic()
                            readers.poll_sql()
                            time.sleep(max(0.0, 1.0 - (time.monotonic() - begun)))
                        else:
                            time.sleep(0.05)
                    end, cpu_end = time.time(), cpu_seconds(writer.pid)
                    if kind == "on":
                        readers.stop()
                    phases.append(Phase(kind, start, begin, end, cpu_end - (cpu_begin or cpu_end)))
                    load.append(os.getloadavg()[0])
        finally:
            writer.send_signal(signal.SIGINT)
            try:
                writer.wait(timeout=120)
            except subprocess.TimeoutExpired:
                writer.kill()
                writer.wait()
        publications = [tuple(map(float, line.split())) for line in publish_log.read_text().splitlines()]
        checkpoint_log = publish_log.with_name(publish_log.name + ".checkpoints")
        checkpoints = [tuple(map(float, line.split())) for line in checkpoint_log.read_text().splitlines()]
        leftovers = sorted(p.name for p in results.iterdir() if not p.name.startswith(("bench.duckdb", "publish.log")))
        con = duckdb.connect(str(results / "bench.duckdb"), read_only=True)
        created = [t.replace(tzinfo=UTC).timestamp() for (t,) in con.execute("SELECT created_at FROM calls").fetchall()]
        ends = {g: e.replace(tzinfo=UTC).timestamp() for g, e in con.execute(
            "SELECT game_id, max(created_at + duration_ms * INTERVAL 1 MILLISECOND) FROM calls JOIN games "
            "USING (run_id, game_id) WHERE games.status = 'complete' GROUP BY game_id").fetchall()}  # fmt: skip
        size_mb = (results / "bench.duckdb").stat().st_size / 1e6
        con.close()
    rates: dict[str, list[float]] = {"off": [], "on": []}
    per_cpu: dict[str, list[float]] = {"off": [], "on": []}
    publish_cpu = sum(
        cpu for t, cpu, _ in publications if any(ph.begin <= t < ph.end for ph in phases if ph.kind == "on")
    )
    writer_cpu = sum(ph.cpu_s for ph in phases if ph.kind == "on")
    for ph in phases:
        calls = sum(ph.begin <= t < ph.end for t in created)
        rates[ph.kind].append(calls / (ph.end - ph.begin))
        per_cpu[ph.kind].append(calls / ph.cpu_s if ph.cpu_s > 0 else float("nan"))
    first_seen: dict[int, float] = {}
    for t, games in sorted(readers.seen):
        for g in games:
            first_seen.setdefault(g, t)
    # Games that ended in a reading phase, at least 5 s before its end; one not seen before the phase ended is
    # counted apart (readers stop with the phase: its next sighting would time the pause, not the copies).
    timed = [(g, ph) for g in ends for ph in phases if ph.kind == "on" and ph.begin <= ends[g] < ph.end - 5.0]
    latencies = sorted(first_seen[g] - ends[g] for g, ph in timed if g in first_seen and first_seen[g] <= ph.end)
    unseen = [ph.end - ends[g] for g, ph in timed if g not in first_seen or first_seen[g] > ph.end]
    copies = sorted(readers.live_times)
    # The writer's checkpoints, in the measured parts of each kind of phase; and the late games (seen 5 s or more
    # after their end) that ended while a checkpoint ran or in the second before it began (their batch was
    # committed only after it: no copy could hold them sooner).
    # (A length of nan: DuckDB's own, inside a commit.)
    held = {kind: [s for t, s in checkpoints if any(ph.begin <= t < ph.end for ph in phases if ph.kind == kind)]
            for kind in ("off", "on")}  # fmt: skip
    late = [ends[g] for g, ph in timed if g in first_seen and first_seen[g] <= ph.end and first_seen[g] - ends[g] >= 5]
    late_in_checkpoint = sum(any(t - 1.0 <= e <= t + s for t, s in checkpoints) for e in late)
    return {
        "profile": name,
        "reader": reader,
        "calls_per_s_off": rates["off"],
        "calls_per_s_on": rates["on"],
        "ratio": statistics.mean(rates["on"]) / statistics.mean(rates["off"]),
        "calls_per_cpu_s_off": per_cpu["off"],
        "calls_per_cpu_s_on": per_cpu["on"],
        "cpu_ratio": statistics.mean(per_cpu["on"]) / statistics.mean(per_cpu["off"]),
        "load_average_1min": load,
        "publishing_share_of_writer_cpu": publish_cpu / writer_cpu if writer_cpu else None,
        "publications": len(publications),
        "copy_cost_median_s": statistics.median(wall for _, _, wall in publications) if publications else None,
        "copy_cost_max_s": max((wall for _, _, wall in publications), default=None),
        "sql_command_median_s": statistics.median(readers.command_s) if readers.command_s else None,
        "games_timed": len(latencies),
        "games_unseen_in_their_phase": len(unseen),
        "unseen_for_at_least_s": max(unseen, default=None),
        "latency_median_s": statistics.median(latencies) if latencies else None,
        "latency_p90_s": latencies[int(0.9 * (len(latencies) - 1))] if latencies else None,
        "latency_p99_s": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None,
        "latency_max_s": max(latencies) if latencies else None,
        "copy_interval_median_s": statistics.median([b - a for a, b in pairwise(copies)]) if len(copies) > 2 else None,
        "checkpoints_alone": len(held["off"]),
        "checkpoint_max_s_alone": max((s for s in held["off"] if s == s), default=None),
        "duckdb_checkpoints_alone": sum(s != s for s in held["off"]),
        "checkpoints_read": len(held["on"]),
        "checkpoint_max_s_read": max((s for s in held["on"] if s == s), default=None),
        "duckdb_checkpoints_read": sum(s != s for s in held["on"]),
        "games_seen_5s_or_later": len(late),
        "of_which_ended_by_a_checkpoint": late_in_checkpoint,
        "run_file_mb": round(size_mb, 1),
        "left_beside_the_run": leftovers,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", nargs="+", choices=sorted(PROFILES), default=["api", "cpu"])
    parser.add_argument("--reader", nargs="+", choices=["catalog", "sql", "burn"], default=["catalog", "sql"])
    parser.add_argument("--phase-s", type=float, default=30.0)
    parser.add_argument("--cycles", type=int, default=3)
    args = parser.parse_args()
    if args.phase_s <= WANTED_FOR_S + 6:
        parser.error(f"--phase-s must exceed {WANTED_FOR_S + 6:g} s (the writer publishes {WANTED_FOR_S:g} s after "
                     "the last request, and a phase needs time to measure after that)")  # fmt: skip
    writer_cpus, reader_cpus = cores()
    print(
        f"writer on cores {sorted(writer_cpus)}, readers on {sorted(reader_cpus)}; phases of {args.phase_s:g} s, "
        f"{args.cycles} cycles (no reader, then readers); started {datetime.now():%Y-%m-%d %H:%M}",
        flush=True,
    )
    rows = []
    for profile in args.profile:
        for reader in args.reader:
            row = run_profile(profile, reader, args.phase_s, args.cycles)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(
        f"{'profile':8} {'reader':8} {'calls/s: alone':>14} {'read':>7} {'ratio':>6} {'per CPU-s':>9} "
        f"{'publishing':>10}  {'visible: median':>15} {'p90':>5} {'p99':>5} {'max':>5} {'unseen':>6} "
        f"{'copy: median':>12} {'max':>5} {'checkpoints: alone':>18} {'read':>10} {'file MB':>7} {'load':>7}"
    )

    def num(value: float | None, fmt: str) -> str:
        return "—" if value is None else format(value, fmt)

    for r in rows:
        load = f"{min(r['load_average_1min']):.1f}-{max(r['load_average_1min']):.1f}"
        print(
            f"{r['profile']:8} {r['reader']:8} {statistics.mean(r['calls_per_s_off']):14.1f} "
            f"{statistics.mean(r['calls_per_s_on']):7.1f} {r['ratio']:6.3f} {r['cpu_ratio']:9.3f} "
            f"{num(r['publishing_share_of_writer_cpu'], '10.1%')}  {num(r['latency_median_s'], '13.2f')} s "
            f"{num(r['latency_p90_s'], '5.2f')} {num(r['latency_p99_s'], '5.2f')} {num(r['latency_max_s'], '5.2f')} "
            f"{r['games_unseen_in_their_phase']:6d} "
            f"{num(r['copy_cost_median_s'], '10.3f')} s {num(r['copy_cost_max_s'], '5.2f')} "
            f"{r['checkpoints_alone']:4d} max {num(r['checkpoint_max_s_alone'], '5.2f')} s "
            f"{r['checkpoints_read']:2d} max {num(r['checkpoint_max_s_read'], '5.2f')} "
            f"{r['run_file_mb']:7.1f} {load:>7}"
        )
    print(
        "\ncalls/s: the writer's model calls a second, alone and while read; per CPU-s: the same ratio per second of "
        "its CPU time;\npublishing: the writer's CPU time spent on copies while read; visible: from a game's end to a "
        "reader's query returning it\n(for `pdbench sql`, the command's end; it took "
        + (", ".join(f"{num(r['sql_command_median_s'], '.2f')} s" for r in rows if r["reader"] == "sql") or "—")
        + " itself, median);\nunseen: games that ended in a reading phase, 5 s or more before its end, and were "
        "not seen before it ended;\ncopy: the time a copy (or bringing one up to date) took;\ncheckpoints: the "
        "writer's own checkpoints in the phases without and with readers, and the longest (no commit can be made "
        "while one runs)."
    )
    for r in rows:
        if r["duckdb_checkpoints_alone"] or r["duckdb_checkpoints_read"]:
            print(f"{r['profile']}/{r['reader']}: of the checkpoints, DuckDB made {r['duckdb_checkpoints_alone']} "
                  f"(alone) and {r['duckdb_checkpoints_read']} (read) on its own, inside a commit")  # fmt: skip
        if r["games_seen_5s_or_later"]:
            print(f"{r['profile']}/{r['reader']}: {r['games_seen_5s_or_later']} games seen 5 s or more after their "
                  f"end, {r['of_which_ended_by_a_checkpoint']} of them ended during a checkpoint or in the second "
                  "before one began")  # fmt: skip
    worst = min(r["ratio"] for r in rows)
    worst_cpu = min(r["cpu_ratio"] for r in rows)
    print(
        f"\nworst ratio {worst:.3f}, per CPU second {worst_cpu:.3f} (target >= {TARGET}); files left beside the run "
        "after it ended: "
        f"{sorted({n for r in rows for n in r['left_beside_the_run']}) or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
