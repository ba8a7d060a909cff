"""Benchmark: how much of a 100-round eval's input a provider's prompt cache reads, and what the eval costs.

``pdbench eval --rounds 100`` (the default panel of 9 opponents, 3 replicates: 27 games, 2,700 calls) is played
through the official SDKs against the loopback server (``tests/support/llm_server.py --prompt-cache``), which
accounts for caching as each provider does, at the providers' own thresholds:

* OpenAI: a prompt whose longest start seen before is at least 1,024 tokens reports that start, in whole
  128-token steps, as ``prompt_tokens_details.cached_tokens``;
* Anthropic: a start that ends at a ``cache_control`` breakpoint and is at least 1,024 tokens (Claude Sonnet's
  minimum) is written to the cache and read by a later request whose breakpoint lies at most 20 blocks further.

Each provider is played in both prompt layouts: ``cached`` (the default: each round's prompt extends the last
one's) and ``classic`` (PDBench 0.1's, which starts every prompt with "This is round N"). The figures are read
back from the run's ``calls`` table: the share of input tokens read from the cache, the tokens written to it,
and the cost of the same tokens at the listed prices (``configs/prices.yaml``) in each mode: standard, flex
and batch, with the cache (as the tokens were recorded) and without it (every input token at the input price).

The loopback server counts about four characters a token, so token counts differ somewhat from a real
tokenizer's; the share read from the cache does not depend much on that. Run (about two minutes):

    .venv/bin/python tests/benchmarks/bench_prompt_cache.py [--rounds 100] [--replicates 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# The server answers in turn from a cycle of moves, so that games differ from one another as a sampled model's do:
# a constant answer against deterministic opponents would make many games identical, and one game's prompts would
# then be read from the cache by the others (real, on OpenAI, whose cache an organisation's requests share; but
# not what the layout earns).
REPLIES = [arg for move in ("C", "C", "D", "C", "D", "D", "C") for arg in ("--reply", move)]
TARGET = 0.60  # share of input tokens read from the provider's cache, in the cached layout
PLAYED = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-sonnet-4-5"}
PRICED = {  # the models priced from each provider's recorded tokens (the loopback server counts alike for all)
    "openai": ["openai/gpt-4o-mini", "openai/o4-mini", "openai/gpt-4.1"],
    "anthropic": ["anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5"],
}


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The loopback server in a process of its own, accounting for prompt caching; its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llm_server", "--prompt-cache", *REPLIES],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("LISTENING "):
        proc.kill()
        raise SystemExit(f"the loopback server did not start: {line!r}")
    return proc, line.removeprefix("LISTENING ")


def play(url: str, provider: str, layout: str, rounds: int, replicates: int, results: Path) -> dict[str, Any]:
    """One ``pdbench eval`` against the server; the run's token sums from its calls table."""
    import duckdb

    env = dict(os.environ)
    env.update({
        "OPENAI_API_KEY": "sk-bench-0000", "ANTHROPIC_API_KEY": "sk-ant-bench-0000",
        "OPENAI_BASE_URL": f"{url}/v1", "ANTHROPIC_BASE_URL": url,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })  # fmt: skip
    run_id = f"{provider}_{layout}"
    start = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("pdbench")), "eval", "--model", PLAYED[provider], "--rounds", str(rounds),
         "--replicates", str(replicates), "--prompt-layout", layout, "--no-cache", "--concurrency", "16",
         "--results", str(results), "--run-id", run_id],
        env=env, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"pdbench eval failed ({done.returncode}):\n{done.stderr[-2000:]}")
    con = duckdb.connect(str(results / f"{run_id}.duckdb"), read_only=True)
    try:
        row = con.execute(
            "SELECT count(*), sum(input_tokens), sum(output_tokens), coalesce(sum(cached_input_tokens), 0), "
            "coalesce(sum(cache_write_tokens), 0), count(*) FILTER (WHERE outcome <> 'ok') FROM calls"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    calls, inp, out, cached, written, failed = (int(x or 0) for x in row)
    return {"calls": calls, "input": inp, "output": out, "cached": cached, "written": written, "failed": failed,
            "wall_s": time.perf_counter() - start}  # fmt: skip


def costs(model: str, run: dict[str, Any]) -> list[str]:
    """The run's tokens priced for ``model`` in each mode, with and without the cache ('-': not sold there)."""
    from harness.calls.pricing import DEFAULT_PRICES, PriceTable
    from harness.providers.tiers import ServiceTier

    table = PriceTable.load(DEFAULT_PRICES)
    out = []
    for tier in ServiceTier:
        plain = table.cost(model, run["input"], run["output"], tier=tier)
        cached = table.cost(model, run["input"], run["output"], cached_input_tokens=run["cached"],
                            cache_write_tokens=run["written"], tier=tier)  # fmt: skip
        out += ["-" if plain is None else f"${plain:.4f}", "-" if cached is None else f"${cached:.4f}"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=3)
    args = parser.parse_args()
    proc, url = start_server()
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for provider in PLAYED:
                for layout in ("cached", "classic"):
                    runs[(provider, layout)] = play(url, provider, layout, args.rounds, args.replicates, Path(tmp))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"{args.rounds}-round eval, default panel, {args.replicates} replicates, through the SDKs against the "
          "loopback server caching at the providers' thresholds (1,024 tokens)\n")  # fmt: skip
    print(f"{'provider':<10} {'layout':<8} {'calls':>6} {'input tok':>10} {'cached':>10} {'share':>7} "
          f"{'written':>9} {'wall s':>7}")  # fmt: skip
    for (provider, layout), run in runs.items():
        share = run["cached"] / run["input"] if run["input"] else 0.0
        print(f"{provider:<10} {layout:<8} {run['calls']:>6,} {run['input']:>10,} {run['cached']:>10,} "
              f"{share:>7.1%} {run['written']:>9,} {run['wall_s']:>7.1f}")  # fmt: skip
        if run["failed"]:
            print(f"  ({run['failed']} calls did not end ok)")
    print("\nCost of one such eval at the listed prices (configs/prices.yaml), without / with the prompt cache:")
    print(f"{'model':<28} {'layout':<8} {'standard':>19} {'flex':>19} {'batch':>19}")
    for provider, models in PRICED.items():
        for model in models:
            for layout in ("cached", "classic"):
                c = costs(model, runs[(provider, layout)])
                print(f"{model:<28} {layout:<8} {c[0]:>9} {c[1]:>9} {c[2]:>9} {c[3]:>9} {c[4]:>9} {c[5]:>9}")
    shares = {p: runs[(p, "cached")]["cached"] / max(runs[(p, "cached")]["input"], 1) for p in PLAYED}
    verdict = "met" if min(shares.values()) >= TARGET else "NOT met"
    print("\nshare read from cache, cached layout: " + ", ".join(f"{p} {s:.1%}" for p, s in shares.items())
          + f" (target >= {TARGET:.0%}: {verdict})")  # fmt: skip


if __name__ == "__main__":
    main()
