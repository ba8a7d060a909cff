"""The ``pdbench`` commands as a user runs them, on a temporary results folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from harness.store.browse import run_entries
from harness.store.schema import SCHEMA_VERSION
from tests.support.cli import pdbench, sql_json

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = ROOT / "configs" / "experiment.yaml"


@pytest.mark.slow
def test_tournament_prints_leaderboard_and_stores_the_run(results: Path) -> None:
    code, out, err = pdbench(
        "tournament", "--players", "ALLC,ALLD,TFT", "--rounds", "10", "--results", results, "--run-id", "t1"
    )
    assert code == 0, err
    assert "Tournament t1" in out and "Matchups" in out and "😈 ALLD" in out
    # Hand-computed, 10 rounds, self-play played but left out of the leaderboard:
    # ALLD: vs ALLC 50, vs TFT 14 -> (5 + 1.4) / 2 a turn; TFT: 30, 9 -> (3 + 0.9) / 2; ALLC: 30, 0 -> 1.5.
    board = sql_json(
        results,
        "select player, rank, games, replicates, median_score_per_turn, mean_score_per_turn, mean_total, "
        "mean_payoff_per_round, wins, draws, losses from tournament where run_id = 't1' order by rank",
    )
    assert [r["player"] for r in board] == ["ALLD", "TFT", "ALLC"]
    assert [r["rank"] for r in board] == [1, 2, 3]
    assert [r["games"] for r in board] == [2, 2, 2] and [r["replicates"] for r in board] == [1, 1, 1]
    assert [r["median_score_per_turn"] for r in board] == pytest.approx([3.2, 1.95, 1.5])
    assert [r["mean_score_per_turn"] for r in board] == pytest.approx([3.2, 1.95, 1.5])  # one repetition
    assert [r["mean_payoff_per_round"] for r in board] == pytest.approx([3.2, 1.95, 1.5])
    assert board[0]["mean_total"] == pytest.approx(32)
    assert (board[0]["wins"], board[1]["wins"], board[1]["draws"], board[2]["losses"]) == (2, 0, 1, 1)
    assert "🥇 1" in out and "🥈 2" in out and "🥉 3" in out and "3.200" in out and "median/turn" in out
    games = sql_json(results, "select player_a, player_b, rounds_played, status from games order by game_id")
    assert len(games) == 6 and {g["status"] for g in games} == {"complete"}
    assert {(g["player_a"], g["player_b"]) for g in games} >= {("ALLC", "ALLC"), ("TFT", "TFT"), ("ALLD", "TFT")}
    run = sql_json(results, "select status, kind, games_planned, finished_at from runs")[0]
    assert run["status"] == "complete" and run["kind"] == "tournament" and run["games_planned"] == 6


@pytest.mark.slow
def test_tournament_ties_share_a_rank_and_its_medal(results: Path) -> None:
    code, out, err = pdbench(
        "tournament", "--players", "ALLC,TFT,GRIM,ALLD", "--rounds", "10", "--results", results, "--run-id", "tie"
    )
    assert code == 0, err
    # 10 rounds, self-play left out: ALLD (5 + 1.4 + 1.4) / 3 = 2.6; TFT and GRIM (3 + 3 + 0.9) / 3 = 2.3 each;
    # ALLC (3 + 3 + 0) / 3 = 2. Standard competition ranking: 1, 2, 2, 4.
    board = sql_json(results, "select rank, player, median_score_per_turn from tournament order by rank, player")
    assert [(r["rank"], r["player"]) for r in board] == [(1, "ALLD"), (2, "GRIM"), (2, "TFT"), (4, "ALLC")]
    assert [r["median_score_per_turn"] for r in board] == pytest.approx([2.6, 2.3, 2.3, 2.0])
    lines = [line for line in out.splitlines() if "│" in line]
    medals = [next((m for m in ("🥇", "🥈", "🥉") if m in line), None) for line in lines if "2.300" in line]
    assert medals == ["🥈", "🥈"]
    assert "🥉" not in out and sum("🥇" in line for line in lines) == 1
    assert any(" 4 " in line and "ALLC" in line for line in lines)


@pytest.mark.slow
def test_a_tournament_of_one_player_has_matchups_but_no_leaderboard(results: Path) -> None:
    code, out, err = pdbench("tournament", "--players", "TFT", "--rounds", "4", "--results", results, "--run-id", "one")
    assert code == 0, err
    assert "no leaderboard, since no complete game between two different players" in out
    assert "Matchups" in out and "3.00" in out  # TFT against itself: 3 a round, still shown
    assert sql_json(results, "select * from tournament") == []


@pytest.mark.slow
def test_tournament_without_self_play_and_with_a_geometric_horizon(results: Path) -> None:
    code, _, err = pdbench(
        "tournament",
        "--players",
        "TFT,ALLD,GTFT",
        "--stop-prob",
        "0.1",
        "--max-rounds",
        "40",
        "--replicates",
        "3",
        "--no-self-play",
        "--noise",
        "0.05",
        "--results",
        results,
        "--run-id",
        "geo",
    )
    assert code == 0, err
    games = sql_json(results, "select horizon, planned_rounds, rounds_played, stop_prob, noise from games")
    assert len(games) == 9
    assert all(g["horizon"] == "geometric" and g["stop_prob"] == 0.1 and g["noise"] == 0.05 for g in games)
    assert all(1 <= g["rounds_played"] == g["planned_rounds"] <= 40 for g in games)
    assert len({g["rounds_played"] for g in games}) > 1


@pytest.mark.slow
def test_tournament_players_may_be_models(results: Path) -> None:
    code, out, err = pdbench(
        "tournament", "--players", "TFT,mock/defector,ALLC", "--rounds", "5", "--results", results, "--run-id", "m"
    )
    assert code == 0, err
    assert "Tournament m" in out and "mock/defector" in out
    # 5 rounds: mock/defector defects like ALLD: vs TFT 9, vs ALLC 25 -> (1.8 + 5) / 2 a turn (self-play left out)
    board = sql_json(results, "select player, median_score_per_turn, cooperation_rate from tournament order by rank")
    assert [r["player"] for r in board] == ["mock/defector", "TFT", "ALLC"]
    assert board[0]["median_score_per_turn"] == pytest.approx(3.4) and board[0]["cooperation_rate"] == 0
    calls = sql_json(results, "select count(*) as n, count(distinct model) as models from calls")[0]
    assert calls == {"n": 20, "models": 1}  # 5 rounds vs TFT, 5 vs ALLC, 2 seats x 5 in self-play
    assert not (results / ".cache" / "responses.sqlite").exists()  # mock answers are computed, never cached


@pytest.mark.slow
def test_tournament_with_models_takes_the_engine_options(results: Path, tmp_path: Path) -> None:
    args = ["tournament", "--players", "TFT,mock/tft", "--rounds", "3", "--results", results]
    code, _, err = pdbench(*args, "--run-id", "nc", "--no-cache")
    assert code == 0, err
    assert not (results / ".cache" / "responses.sqlite").exists()
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/*: {input: 1, output: 1}\n")
    code, _, err = pdbench(*args, "--run-id", "priced", "--max-cost", "0.5", "--prices", str(prices))
    assert code == 0, err  # mock/* is priced at zero by the shipped table, read after the user's
    assert sql_json(results, "select status from runs where run_id = 'priced'") == [{"status": "complete"}]


@pytest.mark.slow
def test_run_is_reproducible_byte_for_byte(results: Path) -> None:
    for rid in ("r1", "r2"):
        code, out, err = pdbench("run", EXPERIMENT, "--results", results, "--run-id", rid)
        assert code == 0, err
        assert "TFT_vs_ALLD" in out and "±" in out
    dump = {}
    for rid in ("r1", "r2"):
        code, out, _ = pdbench(
            "sql",
            f"select * exclude (run_id) from rounds where run_id = '{rid}' order by game_id, round",
            "--results",
            results,
            "--format",
            "csv",
        )
        assert code == 0
        dump[rid] = out
    assert dump["r1"] == dump["r2"] and dump["r1"].count("\n") == 1 + 4 * 5 * 50
    # A different seed gives a different game wherever there is randomness.
    text = EXPERIMENT.read_text().replace("seed: 1337", "seed: 1338")
    other = results.parent / "other.yaml"
    other.write_text(text)
    (results.parent / "agents").mkdir(exist_ok=True)
    (results.parent / "agents" / "policies.yaml").write_text((ROOT / "configs/agents/policies.yaml").read_text())
    code, _, err = pdbench("run", other, "--results", results, "--run-id", "r3")
    assert code == 0, err
    code, out, _ = pdbench(
        "sql",
        "select * exclude (run_id) from rounds where run_id = 'r3' order by game_id, round",
        "--results",
        results,
        "--format",
        "csv",
    )
    assert out != dump["r1"]


@pytest.mark.slow
def test_run_replicates_option_and_dry_run(results: Path) -> None:
    code, out, err = pdbench("run", EXPERIMENT, "--dry-run", "--replicates", "3", "--results", results)
    assert code == 0, err
    assert "4 conditions × 3 replicates = 12 games" in out and "model calls: 0" in out
    assert list(results.iterdir()) == []
    code, _, err = pdbench("run", EXPERIMENT, "--replicates", "2", "--results", results, "--run-id", "two")
    assert code == 0, err
    assert sql_json(results, "select count(*) as n from games")[0]["n"] == 8


@pytest.mark.slow
def test_existing_run_is_refused_unless_overwrite(results: Path) -> None:
    assert pdbench("run", EXPERIMENT, "--results", results, "--run-id", "same")[0] == 0
    code, out, err = pdbench("run", EXPERIMENT, "--results", results, "--run-id", "same")
    assert code == 2 and "already exists" in err and "--overwrite" in err and "Traceback" not in err + out
    assert pdbench("run", EXPERIMENT, "--results", results, "--run-id", "same", "--overwrite")[0] == 0
    assert sql_json(results, "select count(*) as n from runs")[0]["n"] == 1


@pytest.mark.slow
def test_bad_input_gets_one_clear_error_and_no_traceback(tmp_path: Path, results: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiment:\n  conditions:\n    - {agent_a: {policy: NOPE}, agent_b: {policy: ALLD}}\n")
    cases = [
        (("validate", bad), "unknown strategy 'NOPE'"),
        (("run", bad, "--results", results), "unknown strategy 'NOPE'"),
        (("validate", tmp_path / "missing.yaml"), "config file not found"),
        (("tournament", "--players", "TFT,XYZ", "--results", results), "unknown strategy 'XYZ'"),
        (("tournament", "--players", "TFT,mock/nope", "--results", results), "unknown mock behaviour 'nope'"),
        (("tournament", "--rounds", "5", "--stop-prob", "0.1", "--results", results), "not both"),
        (("run", EXPERIMENT, "--results", bad / "sub"), "cannot create the results folder"),
        (("run", EXPERIMENT, "--results", results, "--run-id", "../escape"), "not usable as a file name"),
        (("report", "nope", "--results", results), "no run 'nope'"),
        (("sql", "select * from no_such_table", "--results", results), "the query failed"),
        (("sql", "create table x (a int)", "--results", results), "only queries are allowed"),
        (("sql", "", "--results", results), "empty"),
    ]
    for args, message in cases:
        code, out, err = pdbench(*args)
        assert code != 0, args
        assert message in err, (args, err)
        assert "Traceback" not in out + err
    bad.write_text("experiment: [unclosed\n")
    code, _, err = pdbench("validate", bad)
    assert code == 2 and "not valid YAML" in err and "line" in err


def test_validate_reports_every_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "horizon: {type: sideways}\nexperiment:\n  conditions:\n"
        "    - {agent_a: {policy: NOPE}, agent_b: {ref: nowhere.yaml}}\n"
    )
    code, _, err = pdbench("validate", bad)
    assert code == 2
    assert "3 problems" in err
    assert "horizon.type" in err and "conditions[0].agent_a.policy" in err
    assert str(tmp_path / "nowhere.yaml") in err


def test_validate_ok_and_non_pd_warning(tmp_path: Path) -> None:
    code, out, _ = pdbench("validate", EXPERIMENT)
    assert code == 0 and "OK" in out and "20 games" in out
    odd = tmp_path / "odd.yaml"
    odd.write_text(
        "game:\n  payoff_matrix: {C: {C: [5, 5], D: [0, 3]}, D: {C: [3, 0], D: [1, 1]}}\n"
        "experiment:\n  conditions:\n    - {agent_a: {policy: TFT}, agent_b: {policy: ALLD}}\n"
    )
    code, out, err = pdbench("validate", odd)
    assert code == 0 and "warning" in err and "T > R > P > S" in err


@pytest.mark.slow
def test_report_formats(results: Path) -> None:
    assert pdbench("run", EXPERIMENT, "--results", results, "--run-id", "rep")[0] == 0
    code, out, _ = pdbench("report", "rep", "--results", results)
    assert code == 0 and "95% CI" in out and "GRIM_vs_RAND" in out
    code, out, _ = pdbench("report", "rep", "--results", results, "--format", "json")
    rows = json.loads(out)
    tft_alld = next(r for r in rows if r["condition"] == "TFT_vs_ALLD")
    assert tft_alld["games"] == 5 and tft_alld["a_payoff_per_round"] == pytest.approx(49 / 50)
    assert tft_alld["a_retaliation_rate"] == 1.0


@pytest.mark.slow
def test_sql_spans_runs_and_is_read_only(results: Path) -> None:
    assert (
        pdbench("tournament", "--players", "TFT,ALLD", "--rounds", "5", "--results", results, "--run-id", "a")[0] == 0
    )
    assert (
        pdbench("tournament", "--players", "TFT,ALLC", "--rounds", "5", "--results", results, "--run-id", "b")[0] == 0
    )
    rows = sql_json(results, "select run_id, count(*) as games from games group by run_id order by run_id")
    assert rows == [{"run_id": "a", "games": 3}, {"run_id": "b", "games": 3}]
    code, out, _ = pdbench("sql", "select run_id from runs order by 1", "--results", results, "--format", "csv")
    assert out == "run_id\na\nb\n"
    code, _, _err = pdbench("sql", "copy games to 'leak.csv'", "--results", results)
    assert code != 0 and not Path("leak.csv").exists()
    db = duckdb.connect(str(results / "a.duckdb"), read_only=True)
    version = db.execute("select value from pdbench_meta where key = 'schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    assert db.execute("select count(*) from calls").fetchone() == (0,)


@pytest.mark.slow
def test_ctrl_c_keeps_finished_games_and_marks_the_run_interrupted(results: Path) -> None:
    env = {**os.environ, "PDBENCH_RESULTS": str(results)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "tournament",
            "--rounds",
            "200",
            "--replicates",
            "20000",
            "--run-id",
            "stopped",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while not (results / "stopped.duckdb").exists() or not [e for e in run_entries(results).runs if e.games_done]:
        assert proc.poll() is None, "the tournament ended before it could be stopped"
        assert time.monotonic() < deadline, "no game was stored within 60 s"
        time.sleep(0.05)  # read through its live copy, as it plays: Ctrl-C once games are stored
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    run = sql_json(results, "select status, error, games_planned from runs")[0]
    assert run["status"] == "interrupted" and "Ctrl-C" in run["error"]
    stats = sql_json(
        results,
        "select count(*) as games, sum(rounds_played) as rounds_expected, "
        "(select count(*) from rounds) as rounds_stored from games",
    )[0]
    assert 0 < stats["games"] < run["games_planned"]
    assert stats["rounds_expected"] == stats["rounds_stored"]


@pytest.mark.slow
def test_dotenv_in_the_working_folder_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDBENCH_RESULTS", raising=False)
    (tmp_path / ".env").write_text("PDBENCH_RESULTS=from_dotenv\n")
    try:
        code, _, err = pdbench("tournament", "--players", "TFT,ALLD", "--rounds", "3", "--run-id", "env")
        assert code == 0, err
        assert (tmp_path / "from_dotenv" / "env.duckdb").is_file()
    finally:
        os.environ.pop("PDBENCH_RESULTS", None)


@pytest.mark.slow
def test_a_variable_set_in_the_environment_wins_over_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDBENCH_RESULTS", str(tmp_path / "from_env"))
    (tmp_path / ".env").write_text("PDBENCH_RESULTS=from_dotenv\nPDBENCH_TIMEOUT=5000\n")
    monkeypatch.setenv("PDBENCH_TIMEOUT", "5")
    code, _, err = pdbench("tournament", "--players", "mock/tft,ALLD", "--rounds", "3", "--run-id", "env")
    assert code == 0, err
    assert (tmp_path / "from_env" / "env.duckdb").is_file() and not (tmp_path / "from_dotenv").exists()


def test_max_rounds_needs_a_geometric_horizon(results: Path) -> None:
    code, _, err = pdbench("tournament", "--max-rounds", "3", "--results", results)
    assert code == 2 and "--max-rounds caps a geometric game" in err
