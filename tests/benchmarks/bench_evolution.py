"""Benchmark: population evolution, PDBench against the Axelrod library's MoranProcess, and a large
generational run.

1. A Moran process of 12 strategies (one individual each, N = 12; the deterministic strategies both
   libraries share), 200 rounds a match, default payoffs, mutation 0.05 so that neither stops at
   fixation, run for the same number of steps in PDBench (``harness.evolution.evolve``) and in axelrod
   (``MoranProcess(..., stop_on_fixation=False)``, advanced with ``next()``). Each time includes setting
   the process up (PDBench plays its payoff table; axelrod fills its deterministic cache as it goes).
   Reported: steps per second for each, and the ratio (target: PDBench >= 50 times axelrod). Then the
   same with noise 0.05, where no match is deterministic: both play fresh matches every step (PDBench
   one per pair of types present, axelrod one per pair of individuals); and PDBench's estimated mode.
2. A generational run of 100 individuals of 17 strategies for 500 generations (mutation 0.01), without
   noise, with noise 0.05 (random pairs replayed every generation) and with noise 0.05 in estimated mode.

axelrod is not a PDBench dependency (it needs PyTorch). It runs in a subprocess under another
interpreter, ``--axelrod-python`` (default /work/axvenv/bin/python; or the current one if it imports
axelrod), while PDBench runs in this process:

    .venv/bin/python tests/benchmarks/bench_evolution.py [--steps 1000] [--noisy-steps 30]

Both sides run on one core each, one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# PDBench name -> axelrod class: the 12 deterministic strategies of tests/fixtures/axelrod_matches.json
# (the first 12, in its order).
MORAN = {
    "ALLC": "Cooperator",
    "ALLD": "Defector",
    "TFT": "TitForTat",
    "GRIM": "Grudger",
    "WSLS": "WinStayLoseShift",
    "TF2T": "TitFor2Tats",
    "STFT": "SuspiciousTitForTat",
    "ALT": "Alternator",
    "TTFT": "TwoTitsForTat",
    "HTFT": "HardTitForTat",
    "SMAJ": "GoByMajority",
    "HMAJ": "HardGoByMajority",
}
ROUNDS = 200
MUTATION = 0.05

AXELROD_SCRIPT = """
import json, sys, time
import axelrod as axl

def main():
    names, turns, mutation, noise, steps, seed = json.loads(sys.argv[1])
    start = time.perf_counter()
    players = [getattr(axl, n)() for n in names]
    process = axl.MoranProcess(
        players, turns=turns, noise=noise, mutation_rate=mutation, seed=seed, stop_on_fixation=False
    )
    for _ in range(steps):
        next(process)
    seconds = time.perf_counter() - start
    print(json.dumps({"version": axl.__version__, "seconds": seconds, "steps": steps,
                      "final": dict(process.population_distribution())}))

if __name__ == "__main__":
    main()
"""


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def axelrod_python(given: str | None) -> str:
    if given:
        return given
    try:
        import axelrod  # noqa: F401

        return sys.executable
    except ImportError:
        return "/work/axvenv/bin/python"


def run_axelrod(python: str, noise: float, steps: int, seed: int) -> dict[str, object]:
    args = json.dumps([list(MORAN.values()), ROUNDS, MUTATION, noise, steps, seed])
    core = str(sorted(os.sched_getaffinity(0))[0]) if hasattr(os, "sched_getaffinity") else None
    command = [python, "-c", AXELROD_SCRIPT, args]
    if core is not None and Path("/usr/bin/taskset").exists():
        command = ["taskset", "-c", core, *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def run_pdbench_moran(noise: float, steps: int, seed: int, mode: str = "exact") -> dict[str, object]:
    from harness.evolution import EvolutionSettings, evolve

    start = time.perf_counter()
    settings = EvolutionSettings(
        players=list(MORAN), counts=[1] * len(MORAN), dynamics="moran", generations=steps, mutation=MUTATION,
        noise=noise, seed=seed, horizon={"type": "fixed", "n_rounds": ROUNDS}, payoff_mode=mode, replicates=50,
    )  # fmt: skip
    trajectory = evolve(settings)
    seconds = time.perf_counter() - start
    assert trajectory.generations == steps
    return {"seconds": seconds, "steps": steps, "final": {k: v for k, v in trajectory.final_shares().items() if v}}


def run_generational(noise: float, mode: str, seed: int) -> tuple[float, str | None]:
    from harness.evolution import EvolutionSettings, evolve
    from harness.players.strategies import known_names

    players = [n for n in known_names() if n != "DONCE"]  # 17: every strategy but Defect Once
    assert len(players) == 17
    start = time.perf_counter()
    settings = EvolutionSettings(
        players=players, counts=[6] * 15 + [5, 5], dynamics="generational", generations=500, mutation=0.01,
        noise=noise, payoff_mode=mode, replicates=50, seed=seed,
    )  # fmt: skip
    assert settings.size == 100
    trajectory = evolve(settings)
    assert trajectory.generations == 500
    return time.perf_counter() - start, trajectory.winner()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="Moran steps without noise, both libraries")
    parser.add_argument("--noisy-steps", type=int, default=30, help="Moran steps with noise, both libraries")
    parser.add_argument("--long-steps", type=int, default=100_000, help="PDBench alone, for its steady rate")
    parser.add_argument("--axelrod-python", help="an interpreter that imports axelrod")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pin_to_one_core()
    python = axelrod_python(args.axelrod_python)

    print(f"1. Moran process: {len(MORAN)} strategies, N = {len(MORAN)}, {ROUNDS} rounds, mutation {MUTATION}")
    for noise, steps in ((0.0, args.steps), (0.05, args.noisy_steps)):
        ours = run_pdbench_moran(noise, steps, args.seed)
        theirs = run_axelrod(python, noise, steps, args.seed)
        our_rate = steps / float(ours["seconds"])  # type: ignore[arg-type]
        their_rate = steps / float(theirs["seconds"])  # type: ignore[arg-type]
        print(
            f"   noise {noise:<4}  {steps:>6} steps   PDBench {our_rate:>10,.0f} steps/s ({ours['seconds']:.3f} s)   "
            f"axelrod {theirs['version']} {their_rate:>8,.1f} steps/s ({theirs['seconds']:.2f} s)   "
            f"ratio {our_rate / their_rate:,.0f}x"
        )
    estimated = run_pdbench_moran(0.05, args.steps, args.seed, mode="estimated")
    print(
        f"   noise 0.05, PDBench estimated payoffs (50 matches a pair, once): {args.steps} steps in "
        f"{estimated['seconds']:.3f} s ({args.steps / float(estimated['seconds']):,.0f} steps/s)"  # type: ignore[arg-type]
    )
    long = run_pdbench_moran(0.0, args.long_steps, args.seed)
    print(
        f"   PDBench alone, {args.long_steps:,} steps without noise: {long['seconds']:.2f} s "
        f"({args.long_steps / float(long['seconds']):,.0f} steps/s, table included)"  # type: ignore[arg-type]
    )

    print("2. Generational: 100 individuals, 17 strategies, 500 generations, mutation 0.01")
    for noise, mode in ((0.0, "exact"), (0.05, "exact"), (0.05, "estimated")):
        seconds, winner = run_generational(noise, mode, args.seed)
        print(f"   noise {noise:<4} {mode:<9}  {seconds:6.2f} s   (largest share at the end: {winner})")


if __name__ == "__main__":
    main()
