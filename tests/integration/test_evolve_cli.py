"""``pdbench evolve`` as a user runs it: one run shown and stored, bad input refused before anything runs,
Ctrl-C keeping the generations played, and populations with language models playing their payoff games
through the engine (cached, recorded, resumable)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from harness.engine.interrupts import StopFlag
from harness.evolution import EvolutionSettings, evolve
from harness.states import RunStatus
from harness.store.evolution_writer import read_evolution
from tests.support.cli import pdbench
from tests.support.llm_server import FakeLLMServer


@pytest.mark.slow
def test_the_example_prints_the_final_shares_and_stores_the_run_evolve_plays(results: Path) -> None:
    code, out, err = pdbench("evolve", "--players", "TFT,ALLD,ALLC,GRIM", "--counts", "25,25,25,25", "--generations",
                             "100", "--noise", "0.05", "--results", results, "--run-id", "ex")  # fmt: skip
    assert code == 0, err
    settings = EvolutionSettings(
        players=["TFT", "ALLD", "ALLC", "GRIM"], counts=[25, 25, 25, 25], generations=100, noise=0.05
    )
    direct = evolve(settings)  # the same settings and seed give the same run, byte for byte
    run, stored = read_evolution(results, "ex")
    assert run.status == RunStatus.COMPLETE and run.settings == settings
    assert np.array_equal(stored.population, direct.population) and stored.fixation == direct.fixation
    assert np.array_equal(stored.payoffs.values, direct.payoffs.values, equal_nan=True)
    assert "Final shares after generation" in out and "run id: ex" in out
    for player, share in direct.final_shares().items():
        assert f"{100 * share:5.1f}%" in out, player
    if direct.fixation is not None:
        assert f"{direct.fixation.player} took over the population at generation {direct.fixation.generation}" in out
    else:
        assert "No player took over" in out
    assert "complete" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--players", "TFT,ALLD", "--shares", "0.5,0.4", "--population", "10"], "shares sum to 0.9, not 1"),
        (["--players", "TFT,ALLD,GRIM", "--shares", "0.5,0.25,0.25", "--population", "2"],
         "a population of 2 is smaller than the 3 players"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--mutation", "-0.1"], "mutation: Input should be greater"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--noise", "-0.2"], "noise: Input should be greater"),
        (["--players", "TFT,NOPE", "--counts", "5,5"], "unknown strategy 'NOPE'"),
        (["--players", "TFT,ALLD", "--counts", "5,x"], "'x' is not a whole number"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--dynamics", "darwin"], "'darwin' is not one of"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--rounds", "5", "--stop-prob", "0.1"], "not both"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--sweep", "colour=1,2"], "'colour' cannot be swept"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--sweep", "noise=0,1.5"], "noise=1.5: noise: Input should be"),
        (["--players", "TFT,openai/gpt-4o-mini", "--counts", "5,5"], "openai/gpt-4o-mini needs an API key"),
        (["--players", "TFT,ALLD", "--counts", "5,5", "--score", "totals"],
         "score: 'totals' is not one of per_round, match_total"),
    ],
)  # fmt: skip
def test_bad_input_is_one_paragraph_before_anything_runs(
    results: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, out, err = pdbench("evolve", *args, "--results", results, "--run-id", "bad")
    assert code == 2, err
    assert says in " ".join(err.split()), err
    assert err.startswith("error:") and "Traceback" not in err and out == ""
    assert list(results.iterdir()) == []  # nothing ran: no run file, no cache


@pytest.mark.slow
def test_a_stop_keeps_the_generations_played(results: Path) -> None:
    """The stop flag (what Ctrl-C sets) ends the run after the generation being played, interrupted, with every
    generation up to it in the file, equal to the first generations of the uninterrupted run."""
    from harness.engine.evolution.run import run_evolution

    settings = EvolutionSettings(
        players=["TFT", "ALLD", "GTFT(p=0.3)"], counts=[10, 10, 10], generations=60, noise=0.1, mutation=0.05, seed=3
    )
    stop = StopFlag()

    def after(generation: int, _population: np.ndarray) -> None:
        if generation == 7:
            stop.set("stopped by the test")

    outcome = run_evolution(settings, results_dir=results, run_id="cut", stop=stop, on_generation=after)
    assert outcome.status == RunStatus.INTERRUPTED and outcome.reason == "stopped by the test"
    assert outcome.generations == 7 and outcome.trajectory is None
    run, stored = read_evolution(results, "cut")
    assert run.status == RunStatus.INTERRUPTED and run.generations == 7
    assert np.array_equal(stored.population, evolve(settings).population[:8])


@pytest.mark.slow
def test_ctrl_c_leaves_the_run_interrupted_with_its_generations(results: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "evolve", "--players", "TFT,ALLD,ALLC,GRIM,GTFT", "--counts",
         "200,200,200,200,200", "--dynamics", "moran", "--generations", "5000000", "--mutation", "0.01", "--noise",
         "0.05", "--results", str(results), "--run-id", "long"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (results / "long.duckdb").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err and "run id: long" in out
    run, stored = read_evolution(results, "long")
    assert run.status == RunStatus.INTERRUPTED and "Ctrl-C" in (run.error or "")
    assert 0 < run.generations < 5_000_000 and stored.population.shape == (run.generations + 1, 5)
    assert (stored.population.sum(axis=1) == 1000).all()


@pytest.mark.slow
def test_a_status_line_is_printed_while_it_runs_off_a_terminal(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off a terminal the live view is a status line every few seconds (here: every 0.05 s)."""
    monkeypatch.setattr("harness.cli.evolve_view.PLAIN_EVERY", 0.05)
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD", "--counts", "500,500", "--dynamics", "moran",
                           "--generations", "20000", "--mutation", "0.01", "--results", results,
                           "--run-id", "lv")  # fmt: skip
    assert code == 0, err
    import re

    lines = [line for line in err.splitlines() if line.startswith("lv: step ")]
    assert len(lines) >= 2, err
    steps = []
    for line in lines:
        found = re.fullmatch(r"lv: step ([\d,]+) of 20,000: TFT (\d+\.\d)%, ALLD (\d+\.\d)%", line)
        assert found, line
        steps.append(int(found[1].replace(",", "")))
        assert abs(float(found[2]) + float(found[3]) - 100.0) <= 0.1, line
    assert steps == sorted(steps) and steps[-1] <= 20_000


# -- language models in the population ---------------------------------------------------------------
@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:  # type: ignore[misc]
    with FakeLLMServer() as server:
        server.configure(require_key=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-evolve")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        yield server


def test_the_score_is_stored_with_the_run_and_selects_as_evolve_does(results: Path) -> None:
    args = ["evolve", "--players", "TFT,ALLD", "--counts", "5,5", "--dynamics", "moran", "--selection", "0.1",
            "--rounds", "20", "--generations", "300", "--results", results]  # fmt: skip
    for score, run_id in (("match_total", "totals"), (None, "rates")):
        code, _, err = pdbench(*args, *(["--score", score] if score else []), "--run-id", run_id)
        assert code == 0, err
        run, stored = read_evolution(results, run_id)
        assert run.settings.score.value == (score or "per_round")
        assert np.array_equal(stored.population, evolve(run.settings).population)


@pytest.mark.slow
def test_a_model_gets_its_payoffs_from_games_played_through_the_engine_and_reruns_from_the_cache(
    results: Path, llm: FakeLLMServer
) -> None:
    """The loopback model always answers C. Its payoffs come from a recorded tournament of the distinct players
    (self-play included); the same population again sends no request (every answer from the cache)."""
    args = ["evolve", "--players", "ALLD,TFT,openai/test-model", "--counts", "4,4,4", "--rounds", "5",
            "--replicates", "2", "--generations", "30", "--results", results]  # fmt: skip
    code, out, err = pdbench(*args, "--run-id", "first")
    assert code == 0, err
    sent = llm.count(provider="openai")
    # the model's seats: 2 games each against ALLD and TFT, and 2 self-play games with two seats; 5 rounds each
    assert sent == 5 * (2 + 2 + 2 * 2)
    assert "payoffs from run: first_payoffs" in out
    run, stored = read_evolution(results, "first")
    assert run.payoff_run == "first_payoffs" and stored.payoffs.source.value == "supplied"
    # Hand-worked payoffs of 5-round matches (R=3, S=0, T=5, P=1), the model always cooperating:
    # ALLD v ALLD 5, ALLD v TFT 5+1*4 = 9, ALLD v model 25; TFT v ALLD 0+4 = 4, TFT v TFT 15, TFT v model 15;
    # model v ALLD 0, model v TFT 15, model v model 15.
    expected = np.array([[5, 9, 25], [4, 15, 15], [0, 15, 15]], dtype=np.float64)
    assert np.array_equal(stored.payoffs.values, expected)
    assert (stored.payoffs.matches == 2).all()
    # selection read those payoffs per round (each 5-round game's total over 5): as evolve on the table does
    assert np.array_equal(evolve(run.settings, payoffs=expected).population, stored.population)
    con = duckdb.connect(str(results / "first_payoffs.duckdb"), read_only=True)
    assert con.execute("SELECT kind, status, count(*) FROM runs GROUP BY ALL").fetchall() == [
        ("tournament", "complete", 1)
    ]
    assert con.execute("SELECT count(*) FROM games").fetchone() == (12,)  # 6 pairs × 2
    con.close()
    code, _, err = pdbench(*args, "--run-id", "again")
    assert code == 0, err
    assert llm.count(provider="openai") == sent  # not one request more
    _, again = read_evolution(results, "again")
    assert np.array_equal(again.population, stored.population)


@pytest.mark.slow
def test_interrupted_payoff_games_are_resumed_by_the_same_command(
    results: Path, llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Payoff games stopped part way are continued, not replayed, when the command runs again under its run id."""
    import contextlib
    import threading

    import harness.engine.runner as runner_module

    real = runner_module.run_experiment
    llm.configure(latency_ms=40)

    def stopping(config, **kw):  # type: ignore[no-untyped-def]
        """The payoff games, stopped (as Ctrl-C stops them) once three games are done."""
        stop, shown = kw["stop"], kw["monitor"]

        @contextlib.contextmanager
        def watch(monitor):  # type: ignore[no-untyped-def]
            done = threading.Event()

            def poll() -> None:
                while not done.wait(0.01):
                    if monitor.progress.games_done >= 3:
                        stop.set("stopped by the test")

            thread = threading.Thread(target=poll)
            thread.start()
            try:
                with shown(monitor):
                    yield
            finally:
                done.set()
                thread.join()

        return real(config, **{**kw, "monitor": watch})

    monkeypatch.setattr("harness.engine.evolution.models.run_experiment", stopping)
    args = ["evolve", "--players", "ALLD,openai/test-model", "--counts", "3,3", "--rounds", "4", "--replicates",
            "3", "--generations", "10", "--results", results, "--run-id", "rs"]  # fmt: skip
    code, _, err = pdbench(*args)
    assert code == 130, err
    assert "--run-id rs to continue" in " ".join(err.split())
    assert not (results / "rs.duckdb").exists()
    con = duckdb.connect(str(results / "rs_payoffs.duckdb"), read_only=True)
    query = "SELECT (SELECT status FROM runs), count(*) FILTER (status = 'complete') FROM games"
    status, played = con.execute(query).fetchone()  # type: ignore[misc]
    con.close()
    assert status == "interrupted" and 3 <= played < 9
    monkeypatch.setattr("harness.engine.evolution.models.run_experiment", real)
    code, out, err = pdbench(*args)
    assert code == 0, err
    assert "run id: rs" in out
    con = duckdb.connect(str(results / "rs_payoffs.duckdb"), read_only=True)
    assert con.execute("SELECT status FROM runs").fetchone() == ("complete",)
    assert con.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone() == (9,)
    con.close()
    assert (
        json.loads(
            duckdb.connect(str(results / "rs.duckdb"), read_only=True)
            .execute("SELECT config_json FROM runs")
            .fetchone()[0]  # type: ignore[index]
        )["payoff_run"]
        == "rs_payoffs"
    )


@pytest.mark.slow
def test_an_evolution_run_is_listed_with_its_players_and_not_resumed(results: Path) -> None:
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD,mock/tft", "--counts", "2,2,2", "--rounds", "3",
                           "--replicates", "1", "--generations", "5", "--results", results,
                           "--run-id", "ls")  # fmt: skip
    assert code == 0, err
    code, out, err = pdbench("runs", "--kind", "evolution", "--format", "json", "--results", results)
    assert code == 0, err
    [entry] = json.loads(out)
    assert (entry["run_id"], entry["models"], entry["opponents"]) == ("ls", ["mock/tft"], ["TFT", "ALLD"])
    assert (entry["games_done"], entry["games_planned"]) == (None, None)  # generations, not games
    code, out, err = pdbench("runs", "--results", results)
    [row] = [line.split() for line in out.splitlines() if line.split()[:1] == ["ls"]]
    assert code == 0 and "0/0" not in row and "—" in row, out
    code, _, err = pdbench("resume", "ls", "--results", results)
    assert code == 2 and "ls is an evolution run, which is not resumed" in " ".join(err.split())


@pytest.mark.slow
def test_evolve_help_loads_no_heavy_library() -> None:
    from tests.unit.test_startup import HEAVY, loaded_after

    loaded = loaded_after(
        "import sys\nfrom harness.cli import app\nsys.argv = ['pdbench', 'evolve', '--help']\ntry:\n    app()\n"
        "except SystemExit:\n    pass"
    )
    assert not loaded & set(HEAVY), f"`pdbench evolve --help` loads {sorted(loaded & set(HEAVY))}"
