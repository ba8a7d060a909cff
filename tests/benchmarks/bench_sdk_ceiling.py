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

The two alternate (bare, eval, bare, eval, ...) so that drift in the machine's load hits both
alike; each reports calls/s (requests answered / wall time), the medians are compared, and the
ratio eval / bare is the figure (target >= 0.75). The client process is pinned to one core and
the server to another when the machine has two; the client's CPU use (process time / wall time)
is printed with each run, since the ratio measures the client only when the client, not the
server, is the bottleneck (client CPU near 100% in the bare loop).

Run (about a minute):

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
TARGET = 0.75


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
            "cpu": cpu / wall, "requests": requests}  # fmt: skip


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
    return {"calls": total, "wall_s": wall, "rate": total / wall, "cpu": cpu / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (bare tasks, eval workers)")
    parser.add_argument("--replicates", type=int, default=25, help="eval replicates per opponent (8 opponents)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5, help="bare/eval pairs; medians are reported")
    args = parser.parse_args()

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.support.llm_server import FakeLLMProcess

    loopback_only()
    bare: list[dict[str, Any]] = []
    evals: list[dict[str, Any]] = []
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
        for rep in range(args.repeats):
            # Alternating order (bare first, then eval first, ...): drift hits both alike.
            for kind in ("bare", "eval") if rep % 2 == 0 else ("eval", "bare"):
                server.reset()
                if kind == "bare":
                    bare.append(measured(partial(asyncio.run, bare_loop(server.openai_base_url, requests, total,
                                                                        args.concurrency))))  # fmt: skip
                else:
                    evals.append(measured(partial(run_eval, workdir, f"eval_{rep}", args.replicates, args.rounds,
                                                  args.concurrency)))  # fmt: skip
            b, e = bare[-1], evals[-1]
            print(f"  repeat {rep + 1}/{args.repeats}: bare {b['rate']:,.0f} calls/s (CPU: client {b['cpu']:.0%}, "
                  f"server {b['server_cpu']:.0%}); eval {e['rate']:,.0f} calls/s (CPU: client {e['cpu']:.0%}, "
                  f"server {e['server_cpu']:.0%}; {e['calls']:,} calls, {e['cached']} cached)", flush=True)  # fmt: skip

    bare_rate = statistics.median(r["rate"] for r in bare)
    eval_rate = statistics.median(r["rate"] for r in evals)
    pair_ratios = sorted(e["rate"] / b["rate"] for e, b in zip(evals, bare, strict=True))
    ratio = eval_rate / bare_rate
    print(f"\nSDK ceiling: {MODEL} against the loopback server, concurrency {args.concurrency}, "
          f"{evals[0]['calls']:,} calls per run, {args.repeats} alternating repeats")  # fmt: skip
    print(f"  bare AsyncOpenAI loop          {bare_rate:8,.0f} calls/s (median; range "
          f"{min(r['rate'] for r in bare):,.0f}-{max(r['rate'] for r in bare):,.0f})")  # fmt: skip
    print(f"  pdbench eval (all recorded)    {eval_rate:8,.0f} calls/s (median; range "
          f"{min(r['rate'] for r in evals):,.0f}-{max(r['rate'] for r in evals):,.0f})")  # fmt: skip
    print(f"  ratio eval / bare              {ratio:8.2f} (per-pair ratios {pair_ratios[0]:.2f}-{pair_ratios[-1]:.2f}, "
          f"median {statistics.median(pair_ratios):.2f}); target >= {TARGET}: "
          f"{'MET' if ratio >= TARGET else 'MISSED'}")  # fmt: skip
    bare_ms = statistics.median(r["cpu"] * r["wall_s"] / r["calls"] * 1000 for r in bare)
    eval_ms = statistics.median(r["cpu"] * r["wall_s"] / r["calls"] * 1000 for r in evals)
    print(f"  client CPU per call            bare {bare_ms:.2f} ms, eval {eval_ms:.2f} ms (median): with a core to "
          f"itself the client would reach {bare_ms / eval_ms:.2f} of the bare loop's rate")  # fmt: skip


if __name__ == "__main__":
    main()
