"""``pdbench eval``, ``run`` with model players, ``resume`` and ``cache``, on the offline mock provider."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import duckdb
import pytest

from tests.integration.test_engine_server import server  # noqa: F401  (the loopback server fixture)
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer

PRICES = "mock/*: {input: 1000.0, output: 1000.0}\n"  # fake dollars, so that --max-cost has something to count


def rounds_of(results: Path, run_id: str) -> list[dict]:
    return sql_json(results, f"select game_id, round, action_a, action_b, payoff_a, payoff_b, flagged_a "
                             f"from rounds where run_id = '{run_id}' order by game_id, round")  # fmt: skip


@pytest.mark.slow
def test_eval_prints_a_scorecard_and_records_every_call(results: Path) -> None:
    code, out, err = pdbench(
        "eval",
        "--model",
        "mock/tft?unparseable=0.2",
        "--opponents",
        "ALLC,ALLD,TFT",
        "--rounds",
        "8",
        "--replicates",
        "2",
        "--results",
        results,
        "--run-id",
        "ev",
    )
    assert code == 0, err
    assert "Scorecard ev" in out and "😈 ALLD" in out and "Summary" in out and "run id: ev" in out
    games = sql_json(results, "select player_a, player_b, status, rounds_played from games order by game_id")
    assert len(games) == 6 and all(g["player_a"] == "mock/tft?unparseable=0.2" for g in games)
    assert all(g["status"] == "complete" and g["rounds_played"] == 8 for g in games)
    # Every round has at least one call, and the last call of a round holds the move that was played
    # (or, in a flagged round, no readable move: the fallback was played).
    check = sql_json(
        results,
        """
        with last as (select game_id, round, arg_max(action, attempt) as action, count(*) as n
                      from calls group by all)
        select count(*) as rounds, count(l.round) as with_calls,
               count(*) filter (where l.action = r.action_a or (r.flagged_a and l.action is null)) as same_move
        from rounds r left join last l using (game_id, round)""",
    )[0]
    assert check["rounds"] == check["with_calls"] == check["same_move"] == 48
    calls = sql_json(results, "select outcome, count(*) as n from calls group by all")
    outcomes = {c["outcome"]: c["n"] for c in calls}
    flagged = sql_json(results, "select count(*) as n from rounds where flagged_a")[0]["n"]
    assert outcomes["unparseable"] > 0 and outcomes["ok"] == 48 - flagged
    assert sql_json(results, "select count(*) as n from calls where player <> 'a'")[0]["n"] == 0
    request = json.loads(sql_json(results, "select request_json from calls limit 1")[0]["request_json"])
    assert request["messages"][0]["role"] == "system" and request["sample"]["seat"] == "a"


@pytest.mark.slow
def test_unreadable_answers_fall_back_to_d_and_flag_the_round(results: Path) -> None:
    code, _, err = pdbench(
        "eval",
        "--model",
        "mock/cooperator?unparseable=1",
        "--opponents",
        "ALLC",
        "--rounds",
        "3",
        "--replicates",
        "1",
        "--results",
        results,
        "--run-id",
        "junk",
    )
    assert code == 0, err
    rows = rounds_of(results, "junk")
    assert [r["action_a"] for r in rows] == ["D", "D", "D"] and all(r["flagged_a"] for r in rows)
    per_round = sql_json(results, "select round, count(*) as n, max(attempt) as last from calls group by round")
    assert all(r["n"] == 3 and r["last"] == 3 for r in per_round)  # the first ask and 2 re-asks


@pytest.mark.slow
def test_model_against_model_from_a_config_file(tmp_path: Path, results: Path) -> None:
    config = tmp_path / "llm.yaml"
    config.write_text("""
run: {run_id: duel, seed: 3}
horizon: {type: fixed, n_rounds: 6}
experiment:
  replicates: 2
  conditions:
    - name: tft_vs_random
      agent_a: {model: mock/tft, persona: cooperative, temperature: 0.7}
      agent_b: {model: "mock/random?p=0.3", prompts: {labels: {cooperate: J, defect: F}, history_window: 3}}
""")
    code, out, err = pdbench("run", config, "--results", results)
    assert code == 0, err
    assert "tft_vs_random" in out
    rows = rounds_of(results, "duel")
    assert len(rows) == 12
    # mock/tft copies the other model's previous move, read from its own prompt.
    for prev, cur in itertools.pairwise(rows):
        if prev["game_id"] == cur["game_id"]:
            assert cur["action_a"] == prev["action_b"]
    b_prompt = sql_json(results, "select request_json from calls where player = 'b' limit 1")[0]["request_json"]
    assert "J or F" in b_prompt and "cooperate" not in b_prompt.lower()


def test_a_missing_key_is_reported_before_anything_starts(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, _, err = pdbench("eval", "--model", "openai/gpt-4o-mini", "--results", results, "--run-id", "nokey")
    assert code == 2 and "OPENAI_API_KEY" in err and "Traceback" not in err
    assert not (results / "nokey.duckdb").exists()


def _coin(provider: str, request: dict) -> str:
    """A served model whose move is a fixed draw of its request (messages and sampling seed), as mock/random's."""
    digest = hashlib.sha256(json.dumps([request["messages"], request.get("seed")], sort_keys=True).encode()).digest()
    return f"Final answer: {'CD'[digest[0] & 1]}"


@pytest.mark.slow
def test_max_cost_stops_the_run_and_resume_finishes_it_without_paying_twice(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
    results: Path,
) -> None:
    # A served model: only paid answers are cached (a mock's are computed again, free), so only they can be
    # paid twice.
    server.responder = _coin
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/*: {input: 1000.0, output: 1000.0}\n")
    base = ["--model", "openai/test-model", "--opponents", "TFT,ALLD", "--rounds", "10", "--replicates", "2",
            "--seed", "9", "--results", results, "--prices", prices]  # fmt: skip
    code, _, err = pdbench("eval", *base, "--run-id", "capped", "--max-cost", "5", "--despite-estimate")
    assert code == 130, err
    run = sql_json(results, "select status, error from runs where run_id = 'capped'")[0]
    assert run["status"] == "interrupted" and "cost limit" in run["error"]
    paid_before = sql_json(results, "select count(*) as n from calls where run_id = 'capped' and not cached")[0]["n"]
    assert paid_before > 0

    code, _, err = pdbench("resume", "capped", "--results", results, "--prices", prices)
    assert code == 0, err
    assert sql_json(results, "select status from runs where run_id = 'capped'")[0]["status"] == "complete"
    # Same rounds as an uninterrupted run with the same seed (its own cache, so nothing is shared).
    code, _, err = pdbench("eval", *base, "--run-id", "whole", "--no-cache")
    assert code == 0, err
    assert [{k: v for k, v in r.items()} for r in rounds_of(results, "capped")] == rounds_of(results, "whole")
    dupes = sql_json(results, "select count(*) as n from (select game_id, round from rounds "
                              "where run_id = 'capped' group by all having count(*) > 1)")  # fmt: skip
    assert dupes[0]["n"] == 0
    # No request was paid for twice: across the calls kept and those of replayed games (superseded),
    # every paid request is distinct. The replayed games' earlier calls were kept, not deleted.
    paid = sql_json(
        results,
        """
        select count(*) as n, count(distinct request_json) as distinct_requests from (
            select request_json from calls where run_id = 'capped' and not cached
            union all select request_json from superseded_calls where run_id = 'capped' and not cached)""",
    )[0]
    assert paid["n"] == paid["distinct_requests"] and paid["n"] >= paid_before
    assert sql_json(results, "select count(*) as n from superseded_calls")[0]["n"] > 0


@pytest.mark.slow
def test_max_cost_needs_a_price_for_every_model(results: Path) -> None:
    code, _out, err = pdbench("eval", "--model", "mock/tft", "--rounds", "2", "--results", results, "--max-cost", "1",
                             "--prices", str(Path(__file__).parent / "no_such_prices.yaml"))  # fmt: skip
    assert code == 2 and "cannot read the price table" in err
    prices = results.parent / "p.yaml"
    prices.write_text("openai/*: {input: 1, output: 1}\n")
    # the shipped table prices mock/* at zero, so a table without a mock entry falls back to it
    code, _, err = pdbench("eval", "--model", "mock/tft", "--opponents", "TFT", "--rounds", "2", "--replicates", "1",
                           "--results", results, "--max-cost", "1", "--prices", str(prices))  # fmt: skip
    assert code == 0, err


@pytest.mark.slow
def test_resuming_a_tournament_prints_its_leaderboard(results: Path) -> None:
    from harness.config.presets.tournament import tournament_config
    from harness.engine.interrupts import StopFlag
    from harness.engine.runner import run_experiment

    stop = StopFlag()

    def progress(done: int, total: int) -> None:
        if done == 5:
            stop.set("test stop")

    config = tournament_config(["TFT", "ALLD", "GRIM"], rounds=10, replicates=4)
    run_experiment(config, results_dir=results, run_id="tour", progress=progress, stop=stop)
    code, out, err = pdbench("resume", "tour", "--results", results)
    assert code == 0, err
    assert "Tournament tour" in out and "Matchups" in out
    assert sql_json(results, "select count(*) as n from games where status = 'complete'")[0]["n"] == 24


@pytest.mark.slow
def test_cache_stats_and_clear(server: FakeLLMServer, results: Path) -> None:  # noqa: F811
    assert pdbench("eval", "--model", "openai/test-model", "--opponents", "TFT", "--rounds", "3", "--replicates", "1",
                   "--results", results, "--run-id", "c1")[0] == 0  # fmt: skip
    code, out, _ = pdbench("cache", "stats", "--results", results)
    assert code == 0 and ": 3 answers, " in out
    # The server reports its model as test-model: named once with its provider, not openai/openai/test-model.
    assert "  openai/test-model: 3" in out.splitlines() and "openai/openai" not in out
    code, out, _ = pdbench("cache", "clear", "--results", results)
    assert code == 0 and "Deleted" in out
    code, out, _ = pdbench("cache", "stats", "--results", results)
    assert "0 answers" in out
    con = duckdb.connect(str(results / "c1.duckdb"), read_only=True)
    assert con.execute("select count(*) from calls").fetchone()[0] == 3


@pytest.mark.slow
def test_failures_in_a_model_vs_model_game_fail_that_game_only(
    tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("PDBENCH_BACKOFF", "0.01")
    config = tmp_path / "duel.yaml"
    config.write_text("""
run: {run_id: broken}
horizon: {n_rounds: 3}
experiment:
  conditions:
    - {name: fails, agent_a: {model: "mock/tft?error_rate=1"}, agent_b: {model: "mock/random?p=0.3"}}
    - {name: works, agent_a: {model: mock/tft}, agent_b: {model: mock/cooperator}}
""")
    code, out, err = pdbench("run", config, "--results", results)
    # The failed game may pass on a later try, so the run is not complete: resume would replay it.
    assert code == 130, err
    assert "Traceback" not in out + err and "pdbench resume broken" in err
    games = {g["condition"]: g for g in sql_json(results, "select condition, status, error, failure from games")}
    assert games["fails"]["status"] == "failed" and "gave up after 2 attempts" in games["fails"]["error"]
    assert games["fails"]["failure"] == "retryable"
    assert games["works"]["status"] == "complete"
    assert sql_json(results, "select status from runs")[0]["status"] == "interrupted"
    # the failed attempts and the other seat's answer in that round were recorded all the same
    rows = sql_json(results, "select player, outcome from calls where game_id = 0 order by player, attempt")
    assert [r["outcome"] for r in rows if r["player"] == "a"] == ["error", "error"]
    assert [r["outcome"] for r in rows if r["player"] == "b"] == ["ok"]


def test_a_base_url_that_is_not_a_url_is_a_clear_error(results: Path) -> None:
    code, out, err = pdbench("eval", "--model", "mock/tft", "--base-url", "localhost:8000", "--results", results)
    assert code == 2 and "is not a server's URL: it does not start with http://" in err
    assert "Traceback" not in out + err
