"""Benchmark: how close ``pdbench eval`` through the openai SDK gets to the SDK's own ceiling.

Against a real endpoint the SDK, not the harness, bounds the calls per second: a bare
``openai.AsyncOpenAI`` loop is the most any client built on it can send. This script measures,
side by side in one run, against the same loopback server (``tests/support/llm_server.py`` in a
process of its own, zero latency):

* **bare**: ``AsyncOpenAI(max_retries=0)`` and ``C`` tasks, each sending
  ``chat.completions.create`` requests one after the other (the request bodies are those the
  harness sent in a warm-up run, cycled), nothing recorded;
* **eval**: the engine call ``pdbench eval`` makes (``run_experiment`` of ``eval_config``) with
  ``openai/bench`` at ``OPENAI_BASE_URL`` = the server, ``C`` workers and ``concurrency: C``,
  against a panel of classic strategies, with everything recorded: every game, round and call
  in DuckDB, every answer in a fresh SQLite response cache (a miss and a write per request).

* **long**: the same eval with games of ``--long-rounds`` rounds (100) and as many fewer replicates, so the
  same number of calls: what a longer history costs per call.

The three alternate (bare, eval, long; then in the reverse order, ...) so that drift in the machine's load
hits all alike. Two figures compare eval with bare, from the medians:

* **calls per CPU-second** of the client (calls / the client's process time): eval / bare, target >= 0.8.
  This is the harness's own cost per call, whatever the server does;
* **calls/s** (requests answered / wall time): eval / bare, target >= 0.75 (the earlier figure); it measures
  the client only when the client, not the server, is the bottleneck (client CPU near 100% in the bare loop).

and one compares eval with long: the client's CPU per call at ``--long-rounds`` over that at ``--rounds``,
target <= 1.2. The client process is pinned to one core and the server to another when the machine has
two; the client's and the server's CPU use (process time / wall time) are printed with each run.

Run (about two minutes):

    .venv/bin/python tests/benchmarks/bench_sdk_ceiling.py [--concurrency 16] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PANEL = ["ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT"]
MODEL = "openai/bench"
RATE_TARGET = 0.75  # eval / bare, calls per wall-clock second
CPU_TARGET = 0.8  # eval / bare, calls per client CPU-second
GROWTH_TARGET = 1.2  # client CPU per call, long games / short games


def loopback_only() -> None:
    """Requests go to 127.0.0.1 directly, never through a proxy; the key is a placeholder."""
    os.environ["OPENAI_API_KEY"] = "bench"
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        os.environ.pop(var, None)


def cores() -> tuple[set[int], set[int]]:
    """The cores of the client and of the server: one each when there are two or more."""
    cpus = sorted(os.sched_getaffinity(0))
    return ({cpus[0]}, {cpus[1]}) if len(cpus) >= 2 else (set(cpus), set(cpus))


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's children (the server), from /proc."""
    total = 0.0
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return total


def measured(run: Any) -> dict[str, Any]:
    """``run()``'s figures, with the server's CPU use (CPU time / wall time) beside the client's."""
    server_cpu, start = children_cpu_s(), time.perf_counter()
    figures: dict[str, Any] = run()
    figures["server_cpu"] = (children_cpu_s() - server_cpu) / (time.perf_counter() - start)
    return figures


def run_eval(workdir: Path, run_id: str, replicates: int, rounds: int, concurrency: int) -> dict[str, Any]:
    """One eval run through the engine, recorded to DuckDB and a fresh response cache."""
    import duckdb

    from harness.config.engine_options import EngineOptions
    from harness.config.presets.evaluation import eval_config
    from harness.engine.runner import run_experiment

    config = eval_config(
        MODEL, opponents=PANEL, rounds=rounds, replicates=replicates, seed=7, limits={"concurrency": concurrency}
    )
    engine = EngineOptions(cache_path=workdir / f"{run_id}.sqlite", workers=concurrency)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_experiment(config, results_dir=workdir, run_id=run_id, engine=engine)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        calls, cached, ok, games = con.execute(
            "SELECT (SELECT count(*) FROM calls), (SELECT count(*) FILTER (WHERE cached) FROM calls), "
            "(SELECT count(*) FILTER (WHERE outcome = 'ok') FROM calls), "
            "(SELECT count(*) FILTER (WHERE status = 'complete') FROM games)"
        ).fetchone()
        requests = [
            json.loads(r[0]) for r in con.execute("SELECT request_json FROM calls ORDER BY game_id, round").fetchall()
        ]
    finally:
        con.close()
    if result.status != "complete" or ok != calls:
        raise SystemExit(f"the eval run {run_id} did not complete cleanly: {result.status}, {ok}/{calls} calls ok")
    return {"calls": calls, "cached": cached, "games": games, "wall_s": wall, "rate": calls / wall,
            "cpu": cpu / wall, "cpu_ms": cpu / calls * 1000, "requests": requests}  # fmt: skip


async def bare_loop(base_url: str, requests: list[dict[str, Any]], total: int, concurrency: int) -> dict[str, Any]:
    """``total`` requests through a bare AsyncOpenAI client, ``concurrency`` at a time."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    sent = 0

    async def worker() -> None:
        nonlocal sent
        while sent < total:
            body = requests[sent % len(requests)]
            sent += 1
            params = body["params"]
            await client.chat.completions.create(
                model="bench", messages=body["messages"], max_tokens=params["max_tokens"], timeout=60
            )

    try:
        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        await client.close()
    return {"calls": total, "wall_s": wall, "rate": total / wall, "cpu": cpu / wall, "cpu_ms": cpu / total * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (bare tasks, eval workers)")
    parser.add_argument("--replicates", type=int, default=20, help="eval replicates per opponent (8 opponents)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--long-rounds", type=int, default=100, help="rounds of the long eval (same calls in all)")
    parser.add_argument("--repeats", type=int, default=5, help="bare/eval/long triples; medians are reported")
    args = parser.parse_args()
    if (args.replicates * args.rounds) % args.long_rounds:
        parser.error("--replicates x --rounds must be a multiple of --long-rounds (the long eval makes as many calls)")
    long_replicates = args.replicates * args.rounds // args.long_rounds

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.support.llm_server import FakeLLMProcess

    loopback_only()
    runs: dict[str, list[dict[str, Any]]] = {"bare": [], "eval": [], "long": []}
    client_cores, server_cores = cores()
    os.sched_setaffinity(0, server_cores)  # the server process inherits it ...
    with tempfile.TemporaryDirectory(prefix="pdbench_sdk_ceiling_") as tmp, FakeLLMProcess(latency_ms=0) as server:
        os.sched_setaffinity(0, client_cores)  # ... and this one moves to its own core
        os.environ["OPENAI_BASE_URL"] = server.openai_base_url
        workdir = Path(tmp)
        print(f"loopback server at {server.base_url} (own process, zero latency, cpu {sorted(server_cores)}); "
              f"client on cpu {sorted(client_cores)}", flush=True)  # fmt: skip
        # A warm-up run: imports, the server's first connections, and the request bodies the bare loop sends.
        warm = run_eval(workdir, "warmup", max(1, args.replicates // 5), args.rounds, args.concurrency)
        requests = warm["requests"]
        total = len(PANEL) * args.replicates * args.rounds  # the calls of one eval run
        kinds = {
            "bare": lambda rep: asyncio.run(bare_loop(server.openai_base_url, requests, total, args.concurrency)),
            "eval": lambda rep: run_eval(workdir, f"eval_{rep}", args.replicates, args.rounds, args.concurrency),
            "long": lambda rep: run_eval(workdir, f"long_{rep}", long_replicates, args.long_rounds, args.concurrency),
        }
        for rep in range(args.repeats):
            # Alternating order (bare first, then long first, ...): drift hits all alike.
            for kind in ("bare", "eval", "long") if rep % 2 == 0 else ("long", "eval", "bare"):
                server.reset()
                runs[kind].append(measured(partial(kinds[kind], rep)))
            last = ((kind, rows[-1]) for kind, rows in runs.items())
            figures = [f"{kind} {r['rate']:,.0f} calls/s, {r['cpu_ms']:.2f} ms CPU a call "
                       f"(CPU: client {r['cpu']:.0%}, server {r['server_cpu']:.0%})" for kind, r in last]  # fmt: skip
            print(f"  repeat {rep + 1}/{args.repeats}: " + "; ".join(figures), flush=True)

    bare, evals, long = runs["bare"], runs["eval"], runs["long"]
    if any(r["calls"] != total for r in evals + long):
        raise SystemExit(f"the eval runs did not all make {total:,} calls: {[r['calls'] for r in evals + long]}")

    def median(rows: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    def spread(rows: list[dict[str, Any]], key: str, fmt: str) -> str:
        return f"(median; range {min(r[key] for r in rows):{fmt}}-{max(r[key] for r in rows):{fmt}})"

    def verdict(met: bool) -> str:
        return "MET" if met else "MISSED"

    bare_ms, eval_ms, long_ms = median(bare, "cpu_ms"), median(evals, "cpu_ms"), median(long, "cpu_ms")
    cpu_ratio, growth = bare_ms / eval_ms, long_ms / eval_ms
    rate_ratio = median(evals, "rate") / median(bare, "rate")
    print(f"\nSDK ceiling: {MODEL} against the loopback server, concurrency {args.concurrency}, "
          f"{total:,} calls per run, {args.repeats} alternating repeats")  # fmt: skip
    rows = [("bare AsyncOpenAI loop", bare, bare_ms), (f"eval, {args.rounds}-round games", evals, eval_ms),
            (f"eval, {args.long_rounds}-round games", long, long_ms)]  # fmt: skip
    for name, runs_of, ms in rows:
        print(f"  client CPU per call, {name:24} {ms:6.3f} ms {spread(runs_of, 'cpu_ms', '.3f')}")
    print(f"  calls per CPU-second, eval / bare           {cpu_ratio:6.2f}; target >= {CPU_TARGET}: "
          f"{verdict(cpu_ratio >= CPU_TARGET)}")  # fmt: skip
    print(f"  CPU per call, {args.long_rounds} / {args.rounds} rounds              {growth:6.2f}; "
          f"target <= {GROWTH_TARGET}: {verdict(growth <= GROWTH_TARGET)}")  # fmt: skip
    print(f"  calls/s: bare {median(bare, 'rate'):,.0f}, eval {median(evals, 'rate'):,.0f}, long "
          f"{median(long, 'rate'):,.0f}; eval / bare {rate_ratio:.2f}; target >= {RATE_TARGET}: "
          f"{verdict(rate_ratio >= RATE_TARGET)}")  # fmt: skip


if __name__ == "__main__":
    main()
