"""``pdbench runs``: every run of the results folder, newest first, with its kind, players, status, games,
cost and date; a kind filter and a limit; a run another process is writing listed as running, and one whose
writer was killed as crashed; and a table that fits 80 columns."""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from harness.cli.run_list import RunList
from harness.store.browse import run_entries
from tests.integration.test_eval import PRICES
from tests.support.cli import pdbench, sql_json
from tests.support.mock_latency import without_mock_latency


def runs_json(results: Path, *args: str) -> list[dict]:
    code, out, err = pdbench("runs", "--results", results, "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)


THREE_RUNS = pytest.mark.xdist_group("runs-command-three-runs")  # the tests that read them share one worker


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runs of ``make_runs``, made once for the module (each test reads a copy)."""
    results = tmp_path_factory.mktemp("three") / "results"
    results.mkdir()
    make_runs(results)
    return results


@pytest.fixture
def made_runs(three_runs: Path, results: Path) -> Path:
    """A results folder of its own holding the module's three runs."""
    shutil.copytree(three_runs, results, dirs_exist_ok=True)
    return results


def make_runs(results: Path) -> None:
    """A tournament of strategies, an eval of the mock model and an experiment of two models, in this order."""
    assert pdbench("tournament", "--players", "ALLC,ALLD,TFT", "--rounds", "5", "--results", results,
                   "--run-id", "t1")[0] == 0  # fmt: skip
    assert pdbench("eval", "--model", "mock/tft", "--opponents", "TFT,ALLD", "--rounds", "4", "--replicates", "2",
                   "--results", results, "--run-id", "e1")[0] == 0  # fmt: skip
    config = results.parent / "duel.yaml"
    config.write_text(
        "horizon: {type: fixed, n_rounds: 3}\nexperiment:\n  replicates: 2\n  conditions:\n"
        "    - {name: duel, agent_a: {model: mock/tft}, agent_b: {model: mock/cooperator, name: nice}}\n"
    )
    assert pdbench("run", config, "--results", results, "--run-id", "x1")[0] == 0


@pytest.mark.slow
@THREE_RUNS
def test_runs_are_listed_newest_first_with_their_players_games_and_cost(made_runs: Path) -> None:
    results = made_runs
    runs = runs_json(results)
    assert [r["run_id"] for r in runs] == ["x1", "e1", "t1"]
    created = sql_json(results, "select run_id, created_at from runs order by created_at desc")
    assert [r["run_id"] for r in created] == ["x1", "e1", "t1"] and [r["created_at"] for r in runs] == [
        r["created_at"] for r in created
    ]
    x1, e1, t1 = runs
    assert (t1["kind"], t1["status"], t1["models"], t1["opponents"]) == ("tournament", "complete", [],
                                                                         ["ALLC", "ALLD", "TFT"])  # fmt: skip
    assert (t1["games_done"], t1["games_planned"], t1["cost_usd"]) == (6, 6, None)  # 6 pairs, no model call
    assert (e1["kind"], e1["models"], e1["opponents"], e1["games_done"], e1["games_planned"]) == (
        "eval", ["mock/tft"], ["TFT", "ALLD"], 4, 4)  # fmt: skip
    assert e1["cost_usd"] == 0.0  # the mock model has no price: its calls cost 0, not "no calls"
    assert (x1["kind"], x1["models"], x1["opponents"]) == ("experiment", ["mock/tft", "nice"], [])


@pytest.mark.slow
@THREE_RUNS
def test_kind_filter_limit_and_the_table(made_runs: Path) -> None:
    results = made_runs
    assert [r["run_id"] for r in runs_json(results, "--kind", "eval")] == ["e1"]
    assert [r["run_id"] for r in runs_json(results, "--limit", "2")] == ["x1", "e1"]
    code, out, err = pdbench("runs", "--results", results, "--limit", "2")
    assert code == 0, err
    text = " ".join(out.split())
    assert "x1" in text and "e1" in text and " t1 " not in f" {text} "
    assert "The 2 newest of 3 runs; `--limit 3` lists them all." in text
    code, out, err = pdbench("runs", "--results", results, "--kind", "tournament")
    assert code == 0 and "t1" in out and "e1" not in out, err
    code, out, _ = pdbench("runs", "--results", results, "--format", "csv")
    header = "run_id,kind,status,created_at,games_done,games_planned,rounds,cost_usd,models"
    assert out.splitlines()[0].startswith(header)
    assert "mock/tft;nice" in out


def test_an_empty_folder_says_how_to_make_a_run(tmp_path: Path) -> None:
    code, out, _ = pdbench("runs", "--results", tmp_path)
    assert code == 0 and "No runs in" in out and "pdbench eval" in out
    code, out, _ = pdbench("runs", "--results", tmp_path, "--kind", "tournament")
    assert "No tournament runs in" in out


@pytest.mark.slow
def test_the_cost_counts_the_calls_a_resume_replaced(tmp_path: Path, results: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    base = ["--model", "mock/random", "--opponents", "TFT,ALLD", "--rounds", "10", "--replicates", "2",
            "--seed", "9", "--results", results, "--prices", prices]  # fmt: skip
    assert pdbench("eval", *base, "--run-id", "capped", "--max-cost", "5", "--despite-estimate")[0] == 130
    assert pdbench("resume", "capped", "--results", results, "--prices", prices)[0] == 0
    # Derived from the tokens and the price (1,000 dollars per million tokens either way), not from cost_usd.
    paid = "select input_tokens, output_tokens from {} where not cached"
    spent = sql_json(results, "select sum(input_tokens + output_tokens) * 1000.0 / 1e6 as usd, (select count(*) "
                              f"from superseded_calls) as replaced from ({paid.format('calls')} union all "
                              f"{paid.format('superseded_calls')})")[0]  # fmt: skip
    assert spent["replaced"] > 0  # the resume replayed unfinished games, whose first calls were paid
    (run,) = runs_json(results)
    assert abs(run["cost_usd"] - spent["usd"]) < 1e-9 and run["status"] == "complete"


@pytest.mark.slow
@THREE_RUNS
def test_a_run_being_written_by_another_process_is_listed_as_running(made_runs: Path) -> None:
    results = made_runs
    busy = results / "busy.duckdb"
    busy.write_bytes((results / "e1.duckdb").read_bytes())  # a results file, held open by another process
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1])\n"
                               "print('held', flush=True)\ntime.sleep(60)", str(busy)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        runs = runs_json(results)
        assert runs[0]["run_id"] == "busy" and runs[0]["status"] == "running"
        assert runs[0]["note"] == "being written by another process" and runs[0]["kind"] is None
        assert [r["run_id"] for r in runs[1:]] == ["x1", "e1", "t1"]
        code, out, err = pdbench("runs", "--results", results, "--kind", "eval")
        assert code == 0 and "e1" in out and "busy" not in out, err
        assert "1 run being written by another process left out" in " ".join(out.split())
        listing = run_entries(results, limit=2)  # the running one counts toward the limit and the total
        assert [e.run_id for e in listing.runs] == ["busy", "x1"] and listing.total == 4
    finally:
        holder.kill()
        holder.wait()
    # Released, the file is read: a copy of run e1 (the first file of the two, by name), counted once and said so.
    code, out, err = pdbench("runs", "--results", results, "--format", "json")
    assert code == 0 and [r["run_id"] for r in json.loads(out)] == ["x1", "e1", "t1"]
    assert "skipped e1.duckdb: it holds run 'e1', already read from busy.duckdb (a copy?)" in " ".join(err.split())


@pytest.mark.slow
@THREE_RUNS
def test_the_table_fits_80_columns_and_uses_120(made_runs: Path) -> None:
    results = made_runs
    listing = run_entries(results)
    for width in (80, 120, 200):
        console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
        console.print(RunList(listing.runs))
        lines = console.export_text().splitlines()
        assert all(cell_len(line) <= width for line in lines), width
        rows = [i for i, line in enumerate(lines) if line.startswith(("  x1 ", "  e1 ", "  t1 "))]
        assert len(rows) == 3
        gaps = [b - a for a, b in itertools.pairwise(rows)]
        if width == 80:  # two lines a row: the date under the id
            assert gaps == [2, 2] and "created" in lines[rows[0] - 2]
            assert lines[rows[0] + 1].strip().startswith(listing.runs[0].created_at.strftime("%Y-%m-%d"))
        else:  # one line a row, the date in its own column
            assert gaps == [1, 1] and "created" in lines[rows[0] - 2]
            assert "mock/tft, nice" in lines[rows[0]]


@pytest.mark.slow
def test_a_run_killed_by_kill_9_is_listed_as_crashed_with_its_cost_so_far_and_resumes(
    tmp_path: Path, results: Path
) -> None:
    """Issue 19, point 10: a run whose writer was killed (so its file still says running, though no process holds
    it) was listed as running for ever. It is crashed, with what it cost so far and how to resume it; the file is
    left as it was, and resume completes the run."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    args = ["--model", "mock/random?latency_ms=50", "--opponents", "TFT,ALLD", "--rounds", "8", "--replicates", "8",
            "--concurrency", "2", "--results", str(results), "--prices", str(prices)]  # fmt: skip
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PDBENCH_CACHE", None)
    proc = subprocess.Popen([sys.executable, "-m", "harness.entry", "eval", *args, "--run-id", "killed"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (results / "killed.duckdb").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        while not [e for e in run_entries(results).runs if e.games_done]:  # read through its live copy, as it plays
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no game finished within 60 s"
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    (run,) = runs_json(results)
    assert run["status"] == "crashed" and run["note"] == (
        "its process ended without finishing it; `pdbench resume killed` continues it"
    )
    paid = sql_json(results, "select sum(cost_usd) as usd, count(*) as calls from calls")[0]
    assert run["cost_usd"] == paid["usd"] > 0 and 0 < run["games_done"] < 16
    assert sql_json(results, "select status from runs") == [{"status": "running"}]  # shown crashed, stored as it was
    code, out, err = pdbench("runs", "--results", results)
    assert code == 0 and "crashed" in out, err
    assert "Run killed crashed: its process ended without finishing it; `pdbench resume killed` continues it." in (
        " ".join(out.split())
    )

    with without_mock_latency():  # the latency only kept the killed run playing
        code, _out, err = pdbench("resume", "killed", "--results", results, "--prices", prices)
    assert code == 0, err
    (run,) = runs_json(results)
    assert (run["status"], run["games_done"], run["note"]) == ("complete", 16, None)


def test_a_running_run_shows_the_rounds_it_has_played_so_far(results: Path) -> None:
    """``games.rounds_played`` is written when a game ends: a run still running (here its writer is gone, so it is
    shown crashed) counts a game still playing by its recorded rounds, as the dashboard does (issue 23 point 5)."""
    import duckdb

    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment

    # TFT and ALLD, self-play included: 3 games of 5 rounds.
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5, replicates=1), results_dir=results, run_id="t")
    with duckdb.connect(str(results / "t.duckdb")) as con:  # as the writer leaves a run with a game mid-play
        con.execute("UPDATE runs SET status = 'running', finished_at = NULL")
        con.execute("UPDATE games SET status = 'running', rounds_played = 0 WHERE condition = 'TFT_vs_ALLD'")
    (entry,) = run_entries(results).runs
    assert (entry.status, entry.games_done, entry.games_planned, entry.rounds) == ("crashed", 2, 3, 15)
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(RunList([entry]))
    assert "2/3, 15 rounds" in console.export_text()
    (row,) = runs_json(results)
    assert (row["games_done"], row["rounds"]) == (2, 15)
