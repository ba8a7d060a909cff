"""Benchmark: peak memory of a large run, fresh and resumed, against the number of games done.

A run's memory must not grow with its size: a 100,000-game run should peak where a 10,000-game
run does. This plays an experiment of offline ``mock/`` models against classic strategies (every
round a model call, recorded with its prompt in ``calls``: that is what makes a results file
large, about 3.5 KB per 5-round game) through the command line, as a user would:

* ``fresh``: ``pdbench run`` of the whole experiment;
* ``resume``: ``pdbench run`` interrupted with SIGINT (a Ctrl-C; ``--kill``: SIGKILL, a crash) once
  half the games are done, then ``pdbench resume`` of the rest, with the response cache the
  interrupted run filled.

Each command runs in its own process. Its memory is read from ``/proc/<pid>/status`` (``VmRSS``,
the resident set now, and ``VmHWM``, the kernel's record of the highest resident set so far, so no
peak between two polls is missed) whenever the live display prints a status line (every 5 s when
the output is not a terminal: ``games <done>/<planned>``). Printed for each command: peak RSS
against games done, at every tenth of the run, the peak while playing, the peak including the
report printed after the run, and the results file's size; and the ratio of the peak at the end
of the run to the peak at 10% of it (at 10,000 games of a 100,000-game run). Flat memory: a
ratio near 1.

``--checkout DIR`` runs another checkout's ``harness`` package (for example ``/work/main``) with
this virtualenv, to compare before and after on one machine.

Run:

    .venv/bin/python tests/benchmarks/bench_memory.py                 # 100,000 games, about 5 minutes
    .venv/bin/python tests/benchmarks/bench_memory.py --quick         # 20,000 games
    .venv/bin/python tests/benchmarks/bench_memory.py --checkout /work/main --phase resume
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN_ID = "memory"
# Model seats against classic strategies: every round is a model call with its prompt recorded.
CONDITIONS = [("mock/tft", "TFT"), ("mock/random", "ALLD"), ("mock/grim", "WSLS"), ("mock/cooperator", "GRIM")]
STATUS = re.compile(r"games (\d+)/(\d+)")
LAUNCH = (
    "import sys, harness; print('harness from', harness.__file__, file=sys.stderr, flush=True); "
    "from harness.cli import main; sys.exit(main())"
)


def experiment_yaml(games: int, rounds: int) -> str:
    replicates = max(1, games // len(CONDITIONS))
    conditions = "\n".join(
        f"    - name: {model.split('/')[1]}_vs_{policy}\n"
        f"      agent_a: {{model: {model}}}\n"
        f"      agent_b: {{policy: {policy}}}"
        for model, policy in CONDITIONS
    )
    return (
        f"run: {{run_id: {RUN_ID}, seed: 7}}\n"
        f"horizon: {{type: fixed, n_rounds: {rounds}}}\n"
        f"experiment:\n  replicates: {replicates}\n  conditions:\n{conditions}\n"
    )


def proc_memory_mib(pid: int) -> tuple[float, float]:
    """``(VmRSS, VmHWM)`` of ``pid`` in MiB; ``(0, 0)`` once it has exited."""
    values = {"VmRSS": 0.0, "VmHWM": 0.0}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                key = line.split(":", 1)[0]
                if key in values:
                    values[key] = int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return values["VmRSS"], values["VmHWM"]


@dataclass
class Sample:
    games: int
    rss_mib: float
    peak_mib: float
    seconds: float


@dataclass
class Measurement:
    label: str
    planned: int = 0
    samples: list[Sample] = field(default_factory=list)
    play_peak_mib: float = 0.0  # VmHWM when the run announced its end (before the report)
    peak_mib: float = 0.0  # VmHWM at exit, the report included
    db_mib: float = 0.0
    seconds: float = 0.0
    exit_code: int | None = None
    harness_from: str = ""
    tail: list[str] = field(default_factory=list)

    def peak_at(self, games: int) -> float | None:
        """Peak RSS so far at the first status line with at least ``games`` games done."""
        return next((s.peak_mib for s in self.samples if s.games >= games), None)


def run_command(label: str, argv: list[str], env: dict[str, str], db: Path, *, interrupt_at: int | None = None,
                sig: signal.Signals = signal.SIGINT, timeout: float) -> Measurement:  # fmt: skip
    """Run one ``pdbench`` command, following its memory and its status lines; send ``sig`` once
    ``interrupt_at`` games are done (if given)."""
    m = Measurement(label)
    started = time.monotonic()
    # ``python -c`` puts its working folder first on sys.path: the work folder, so that PYTHONPATH (--checkout) wins.
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *argv], env=env, cwd=db.parent.parent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)  # fmt: skip
    peak = 0.0
    stop_polling = threading.Event()

    def poll() -> None:  # VmHWM is the kernel's own peak; this only keeps the last value read before exit
        nonlocal peak
        while not stop_polling.wait(0.05):
            _, hwm = proc_memory_mib(proc.pid)
            peak = max(peak, hwm)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    interrupted = False
    assert proc.stderr is not None
    for line in proc.stderr:
        line = line.rstrip("\n")
        if line.startswith("harness from"):
            m.harness_from = line.split(" ", 2)[2]
            continue
        m.tail = [*m.tail[-14:], line]
        rss, hwm = proc_memory_mib(proc.pid)
        peak = max(peak, hwm)
        if (found := STATUS.search(line)) and line.startswith(f"[{RUN_ID}]"):
            done, m.planned = int(found.group(1)), int(found.group(2))
            m.samples.append(Sample(done, rss, peak, time.monotonic() - started))
            if interrupt_at is not None and not interrupted and done >= interrupt_at:
                proc.send_signal(sig)
                interrupted = True
        if re.match(r"^(complete|interrupted|failed): run ", line):
            m.play_peak_mib = peak
        if time.monotonic() - started > timeout:
            proc.kill()
            raise SystemExit(f"{label}: no end after {timeout:.0f} s")
    m.exit_code = proc.wait()
    stop_polling.set()
    poller.join()
    m.peak_mib = peak
    m.play_peak_mib = m.play_peak_mib or peak  # killed: it never announced its end
    m.seconds = time.monotonic() - started
    m.db_mib = db.stat().st_size / 2**20 if db.exists() else 0.0
    expected = {0} if interrupt_at is None else {130 if sig == signal.SIGINT else -sig}
    if m.exit_code not in expected:
        raise SystemExit(f"{label}: exit {m.exit_code}\n" + "\n".join(m.tail))
    return m


def report(m: Measurement, marks: list[int]) -> None:
    print(f"\n{m.label}  (harness from {m.harness_from}; exit {m.exit_code}, {m.seconds:.0f} s, "
          f"results file {m.db_mib:.0f} MiB)")  # fmt: skip
    print(f"  {'games done':>12}  {'RSS now MiB':>12}  {'peak RSS MiB':>12}  {'seconds':>8}")
    shown: set[int] = set()
    for mark in marks:
        sample = next((s for s in m.samples if s.games >= mark), None)
        if sample is None or id(sample) in shown:
            continue
        shown.add(id(sample))
        print(f"  {sample.games:>12,}  {sample.rss_mib:>12.0f}  {sample.peak_mib:>12.0f}  {sample.seconds:>8.0f}")
    print(f"  peak while playing: {m.play_peak_mib:.0f} MiB; peak with the report after the run: {m.peak_mib:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000, help="games in the run (default 100,000)")
    parser.add_argument("--quick", action="store_true", help="20,000 games instead")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per game (default 5)")
    parser.add_argument("--phase", choices=("fresh", "resume", "both"), default="both")
    parser.add_argument("--kill", action="store_true", help="stop the first half with SIGKILL (kill -9), not SIGINT")
    parser.add_argument("--checkout", type=Path, help="run the harness package of this checkout instead")
    parser.add_argument("--workdir", type=Path, help="keep the results here (default: a temporary folder)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per command")
    args = parser.parse_args()
    games = 20_000 if args.quick else args.games
    checkout = (args.checkout or ROOT).resolve()
    env = {**os.environ, "PYTHONPATH": str(checkout), "COLUMNS": "200"}
    env.pop("PDBENCH_RESULTS", None)
    marks = [games * k // 10 for k in range(1, 11)]

    with tempfile.TemporaryDirectory(prefix="pdbench_memory_") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        config = work / "memory.yaml"
        config.write_text(experiment_yaml(games, args.rounds))
        results: list[Measurement] = []
        print(f"{games:,} games of {args.rounds} rounds ({len(CONDITIONS)} conditions of a mock model against a "
              f"classic strategy), harness from {checkout}")  # fmt: skip
        if args.phase in ("fresh", "both"):
            folder = work / "fresh"
            m = run_command("fresh: pdbench run", ["run", str(config), "--results", str(folder), "--overwrite"], env,
                            folder / f"{RUN_ID}.duckdb", timeout=args.timeout)  # fmt: skip
            report(m, marks)
            results.append(m)
        if args.phase in ("resume", "both"):
            folder = work / "resume"
            db = folder / f"{RUN_ID}.duckdb"
            sig = signal.SIGKILL if args.kill else signal.SIGINT
            how = "kill -9" if args.kill else "Ctrl-C"
            first = run_command(f"resume, part 1: pdbench run, {how} at half the games",
                                ["run", str(config), "--results", str(folder), "--overwrite"], env, db,
                                interrupt_at=games // 2, sig=sig, timeout=args.timeout)  # fmt: skip
            report(first, marks)
            m = run_command("resume, part 2: pdbench resume", ["resume", RUN_ID, "--results", str(folder)], env, db,
                            timeout=args.timeout)  # fmt: skip
            report(m, marks)
            results.append(m)
        print()
        for m in results:
            tenth, end = m.peak_at(games // 10), m.play_peak_mib
            first = m.samples[0] if m.samples else None
            if tenth is not None and first is not None and first.games <= games // 10:
                print(f"{m.label}: peak RSS at {games:,} games / at {games // 10:,} games = {end:.0f} / {tenth:.0f} "
                      f"MiB = {end / tenth:.2f}")  # fmt: skip
            elif first is not None:
                print(f"{m.label}: peak RSS at {games:,} games / at its first status line ({first.games:,} games) = "
                      f"{end:.0f} / {first.peak_mib:.0f} MiB = {end / first.peak_mib:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
