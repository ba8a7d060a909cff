"""Benchmark: how long the dashboard's 📊 View Results view takes to load for a big run.

Builds a run of 1,000 games x 100 rounds (TFT against RAND, so every game differs) in a
folder that also holds a few other runs, then drives the real app script with Streamlit's
AppTest and times complete script runs, which is what the server does before it sends the
page:

* ``fresh server process``: the very first page a new server renders, which also imports the
  plotting and dataframe libraries (once per server, whatever the view);
* ``first load``: the Results view with Streamlit's data cache empty (the run file is attached
  and queried: run list, conditions, 1,000-game picker, rounds, metrics, charts, condition
  summary over 1,000 replicates);
* ``another replicate``: picking another game of the run (cache warm for the lists);
* ``another run``: switching to another run and back.

Target (issue 4): the Results view loads in under 2 s for a run of 1,000 games x 100 rounds.
The browser's own rendering is not included; the end-to-end test shows the page in Chromium.

Run:

    python tests/benchmarks/bench_dashboard.py [--games 1000] [--rounds 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from harness.duel import duel_config
from harness.runner import run_experiment
from harness.tournament import tournament_config
from harness.ui.launch import APP
from harness.ui.views import PENDING_VIEW, RESULTS


def build(folder: Path, games: int, rounds: int) -> None:
    started = time.perf_counter()
    config = duel_config({"policy": "TFT"}, {"policy": "RAND"}, rounds=rounds, replicates=games, seed=7)
    run_experiment(config, results_dir=folder, run_id="big")
    for i in range(5):
        run_experiment(tournament_config(["TFT", "ALLD", "GRIM", "WSLS"], rounds=50, replicates=3, seed=i),
                       results_dir=folder, run_id=f"small{i}")  # fmt: skip
    print(f"built the results folder in {time.perf_counter() - started:.1f} s: 'big' = {games:,} games x "
          f"{rounds} rounds ({games * rounds:,} rounds), plus 5 small tournaments")  # fmt: skip


def timed(at: AppTest) -> float:
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"the app failed: {at.exception}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, args.games, args.rounds)
        sys.argv = [str(APP), "--results", str(folder)]
        firsts, replicates, runs = [], [], []
        st.cache_data.clear()
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state[PENDING_VIEW] = RESULTS
        at.session_state["selected_run"] = "big"
        fresh = timed(at)  # the first page this process serves: it also imports Streamlit's, Altair's, pandas' modules
        for _ in range(args.repeats):
            st.cache_data.clear()
            at = AppTest.from_file(str(APP), default_timeout=120)
            at.session_state[PENDING_VIEW] = RESULTS
            at.session_state["selected_run"] = "big"
            firsts.append(timed(at))
            metrics = {m.label: m.value for m in at.metric}
            assert metrics["Rounds"] == str(args.rounds), metrics
            assert len(at.selectbox(key="results_game").options) == args.games
            picker = at.selectbox(key="results_game")
            picker.select(picker.options[len(picker.options) // 2])
            replicates.append(timed(at))
            at.selectbox(key="results_run").select("small0")
            t = timed(at)
            at.selectbox(key="results_run").select("big")
            runs.append((t + timed(at)) / 2)
        print(f"\nResults view, run of {args.games:,} games x {args.rounds} rounds, {args.repeats} repeats "
              "(complete script runs through AppTest; median [min-max]):")  # fmt: skip
        print(f"  {'fresh server process':<26} {fresh:6.3f} s  (once per server: imports included)")
        for name, xs in (("first load (cache empty)", firsts), ("another replicate", replicates),
                         ("another run", runs)):  # fmt: skip
            print(f"  {name:<26} {statistics.median(xs):6.3f} s  [{min(xs):.3f}-{max(xs):.3f}]")
        verdict = "MET" if statistics.median(firsts) < 2.0 else "NOT MET"
        print(f"target: first load < 2 s -> {verdict}")


if __name__ == "__main__":
    main()
