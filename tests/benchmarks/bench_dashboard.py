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

With ``--browser`` it also measures what a person sees: `pdbench ui` is started afresh for each
repeat, Chromium (Debian's, through Playwright) opens it, waits for the first view, then clicks
📊 View Results and times until the timeline, both charts and the condition summary are drawn
(server work, transfer and the browser's rendering, with the server's data cache empty).

Target (issue 4): the Results view loads in under 2 s for a run of 1,000 games x 100 rounds.

Run:

    python tests/benchmarks/bench_dashboard.py [--games 1000] [--rounds 100] [--repeats 5] [--browser]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.testing.v1 import AppTest

from harness.config.presets.duel import duel_config
from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.ui.launch import APP
from harness.ui.views import PENDING_VIEW, RESULTS


def picker(at: AppTest, prefix: str) -> Any:
    """The selectbox whose key starts with ``prefix`` (the replicate picker's key carries the run id)."""
    return next(s for s in at.selectbox if s.key and s.key.startswith(prefix))


def build(folder: Path, games: int, rounds: int) -> None:
    started = time.perf_counter()
    for i in range(5):
        run_experiment(tournament_config(["TFT", "ALLD", "GRIM", "WSLS"], rounds=50, replicates=3, seed=i),
                       results_dir=folder, run_id=f"small{i}")  # fmt: skip
    config = duel_config({"policy": "TFT"}, {"policy": "RAND"}, rounds=rounds, replicates=games, seed=7)
    run_experiment(config, results_dir=folder, run_id="big")  # the newest: the view opens on it
    print(f"built the results folder in {time.perf_counter() - started:.1f} s: 'big' = {games:,} games x "
          f"{rounds} rounds ({games * rounds:,} rounds), plus 5 small tournaments")  # fmt: skip


def timed(at: AppTest) -> float:
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"the app failed: {at.exception}")
    return elapsed


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def browser_loads(folder: Path, repeats: int, settle_s: float) -> list[float]:
    """Seconds from clicking 📊 View Results to the whole view drawn, each on a fresh `pdbench ui`."""
    from playwright.sync_api import expect, sync_playwright

    times = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PDBENCH_CHROMIUM", "/usr/bin/chromium"), args=CHROMIUM_ARGS
        )
        for _ in range(repeats):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            server = subprocess.Popen([sys.executable, "-m", "harness.cli", "ui", "--results", str(folder), "--port",
                                       str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            try:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                            if r.read() == b"ok":
                                break
                    except OSError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/")
                expect(page.get_by_role("button", name="🚀 Run experiment")).to_be_visible(timeout=60_000)
                page.wait_for_timeout(settle_s * 1000)  # the user reads the first page before clicking
                started = time.perf_counter()
                page.get_by_role("radiogroup", name="View").get_by_role("radio", name=RESULTS.split(" ", 1)[1]).click()
                expect(page.locator(".pdb-timeline").first).to_be_visible(timeout=60_000)
                expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(2, timeout=60_000)
                expect(page.get_by_text("payoff per round", exact=True)).to_be_visible(timeout=60_000)
                times.append(time.perf_counter() - started)
                page.close()
            finally:
                server.terminate()
                server.wait(timeout=20)
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--browser", action="store_true", help="also time the view in Chromium")
    parser.add_argument("--settle", type=float, default=0.5, help="seconds on the first page before the click")
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
            assert len(picker(at, "results_game_").options) == args.games
            games = picker(at, "results_game_")
            games.select(games.options[len(games.options) // 2])
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
        if args.browser:
            # the 'big' run must be the one the Results view opens with: it is the newest
            shown = browser_loads(folder, args.repeats, args.settle)
            print(f"\nIn Chromium, fresh `pdbench ui` each time, {args.settle:g} s on the first page, then click to "
                  f"fully drawn ({args.repeats} repeats): "
                  f"median {statistics.median(shown):.3f} s [{min(shown):.3f}-{max(shown):.3f}]")  # fmt: skip
            print(f"target: < 2 s -> {'MET' if statistics.median(shown) < 2.0 else 'NOT MET'}")


if __name__ == "__main__":
    main()
