"""The engine against a loopback server that speaks the OpenAI and Anthropic APIs, through the real SDKs:
rate limits, server errors, timeouts, bad requests, unreadable answers, kill -9 and resume,
two processes at once, and the cost limit."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.cli import ROOT, pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, garbage_then, serve_to_the_cli


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=1)


def evaluate(results: Path, run_id: str, *extra: str, model: str = "openai/test-model") -> tuple[int, str, str]:
    return pdbench("eval", "--model", model, "--opponents", "TFT,ALLD", "--rounds", "5", "--replicates", "1",
                   "--results", results, "--run-id", run_id, *extra)  # fmt: skip


def outcomes(results: Path, run_id: str) -> Counter[str]:
    rows = sql_json(results, f"select outcome, count(*) as n from calls where run_id = '{run_id}' group by all")
    return Counter({r["outcome"]: r["n"] for r in rows})


@pytest.mark.slow
def test_openai_end_to_end(server: FakeLLMServer, results: Path) -> None:
    code, out, err = evaluate(results, "oa")
    assert code == 0, err
    assert "Scorecard oa" in out
    calls = sql_json(results, "select provider, model, input_tokens, output_tokens, cached, response_text from calls")
    assert {c["provider"] for c in calls} == {"openai"}
    assert all(c["input_tokens"] > 0 for c in calls if not c["cached"])
    assert server.count(provider="openai", status=200) == sum(not c["cached"] for c in calls)
    dump = json.dumps(sql_json(results, "select * from calls")) + json.dumps(sql_json(results, "select * from runs"))
    assert "sk-test-secret" not in dump  # keys never reach the results


@pytest.mark.slow
def test_anthropic_end_to_end_from_a_config(server: FakeLLMServer, tmp_path: Path, results: Path) -> None:
    config = tmp_path / "claude.yaml"
    config.write_text(
        "run: {run_id: claude}\nhorizon: {n_rounds: 4}\nexperiment:\n  conditions:\n"
        "    - {agent_a: {model: anthropic/claude-test, max_tokens: 50}, agent_b: {policy: GRIM}}\n"
    )
    code, _, err = pdbench("run", config, "--results", results)
    assert code == 0, err
    sent = [r for r in server.requests if r.provider == "anthropic"]
    assert len(sent) == 4 and all("system" in r.body and r.body["max_tokens"] == 50 for r in sent)
    assert all(m["role"] != "system" for r in sent for m in r.body["messages"])
    assert sql_json(results, "select status from games")[0]["status"] == "complete"


@pytest.mark.slow
def test_429_with_retry_after_is_honoured_and_recorded(server: FakeLLMServer, results: Path) -> None:
    server.configure(rpm_limit=4, rate_window_s=1.0)
    code, _, err = evaluate(results, "limited", "--concurrency", "4")
    assert code == 0, err
    seen = outcomes(results, "limited")
    assert seen["rate_limited"] == server.rate_limited_count > 0
    assert sql_json(results, "select count(*) filter (where status = 'complete') as n from games")[0]["n"] == 2


@pytest.mark.slow
def test_server_errors_and_timeouts_are_retried_and_recorded(server: FakeLLMServer, results: Path) -> None:
    server.fail_next("openai", [500, 529, "timeout", 503])
    code, _, err = evaluate(results, "flaky", "--concurrency", "1")
    assert code == 0, err
    seen = outcomes(results, "flaky")
    assert seen["error"] == 3 and seen["timeout"] == 1
    errors = sql_json(results, "select error from calls where outcome in ('error', 'timeout') order by created_at")
    assert any("HTTP 529" in e["error"] for e in errors) and any("500" in e["error"] for e in errors)
    assert sql_json(results, "select count(*) as n from games where status = 'complete'")[0]["n"] == 2


@pytest.mark.slow
def test_a_400_fails_the_game_fast_and_the_run_goes_on(server: FakeLLMServer, results: Path) -> None:
    server.fail_next("openai", [400])
    code, _, err = evaluate(results, "bad", "--concurrency", "1")
    assert code == 0, err
    games = sql_json(results, "select status, error from games order by game_id")
    assert [g["status"] for g in games].count("failed") == 1
    failed = next(g for g in games if g["status"] == "failed")
    assert "HTTP 400" in failed["error"] and "gave up" not in failed["error"]
    assert outcomes(results, "bad")["error"] == 1  # one attempt: never retried


@pytest.mark.slow
def test_unreadable_answers_are_asked_again(server: FakeLLMServer, results: Path) -> None:
    server.responder = garbage_then(1)
    code, _, err = evaluate(results, "reask", "--concurrency", "1")
    assert code == 0, err
    first = sql_json(
        results, "select attempt, outcome, action from calls where game_id = 0 and round = 1 order by attempt"
    )
    assert [(c["attempt"], c["outcome"]) for c in first] == [(1, "unparseable"), (2, "ok")]
    asked_again = [r for r in server.requests if len(r.body["messages"]) == 4]
    assert asked_again and "could not tell your move" in asked_again[0].body["messages"][-1]["content"]


@pytest.mark.slow
def test_max_cost_stops_a_paid_run(server: FakeLLMServer, tmp_path: Path, results: Path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text("openai/test-model: {input: 100.0, output: 100.0}\n")
    code, _, err = evaluate(
        results, "budget", "--prices", str(prices), "--max-cost", "0.05", "--despite-estimate", "--concurrency", "1"
    )
    assert code == 130, err
    run = sql_json(results, "select status, error from runs")[0]
    assert run["status"] == "interrupted" and "cost limit" in run["error"]
    spent = sql_json(results, "select sum(cost_usd) as c, count(*) as n from calls")[0]
    assert spent["n"] < 10 and spent["c"] >= 0.05


def wait_for_answers(server: FakeLLMServer, n: int, timeout_s: float = 60) -> None:
    """Until the server has answered ``n`` requests (at most ``timeout_s``): the moment to interrupt a run."""
    deadline = time.monotonic() + timeout_s
    while server.count(provider="openai", status=200) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def _cli(results: Path, run_id: str, server: FakeLLMServer, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "eval", "--model", "openai/test-model", "--opponents", "TFT,ALLD,GRIM",
         "--rounds", "12", "--replicates", "2", "--results", str(results), "--run-id", run_id, *extra],
        cwd=ROOT, env={**os.environ}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.slow
def test_kill_9_then_resume_gives_the_uninterrupted_result(server: FakeLLMServer, results: Path) -> None:
    server.configure(latency_ms=40)
    proc = _cli(results, "killed", server, "--concurrency", "2")
    wait_for_answers(server, 25)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    answered_before = server.count(provider="openai", status=200)
    assert 0 < answered_before < 72

    server.configure(latency_ms=0)  # the latency only kept the run playing until the kill
    code, _, err = pdbench("resume", "killed", "--results", results)
    assert code == 0, err
    runs = sql_json(results, "select status from runs where run_id = 'killed'")
    assert runs[0]["status"] == "complete"
    dupes = sql_json(
        results, "select count(*) as n from (select game_id, round from rounds group by all having count(*) > 1)"
    )
    assert dupes[0]["n"] == 0
    # No answer that had reached the cache was requested again. What may repeat: requests in flight
    # at the kill (at most the concurrency, 2) and answers received but not yet committed to the
    # cache (at most 2 more).
    bodies = Counter(json.dumps(r.body, sort_keys=True) for r in server.requests if r.status == 200)
    assert sum(n - 1 for n in bodies.values()) <= 4
    # No paid call is recorded twice (kept, or superseded by the replay). Calls answered in the last
    # writer interval (0.25 s) before the kill are not in the results, but their answers are in the cache.
    paid = sql_json(results, "select count(*) as n from (select 1 from calls where not cached "
                             "union all select 1 from superseded_calls where not cached)")[0]["n"]  # fmt: skip
    assert 0 < paid <= server.count(provider="openai", status=200)
    # Same rounds as a run that was never interrupted (fresh cache: every answer asked anew).
    code, _, err = pdbench("eval", "--model", "openai/test-model", "--opponents", "TFT,ALLD,GRIM", "--rounds", "12",
                           "--replicates", "2", "--results", results, "--run-id", "whole", "--no-cache")  # fmt: skip
    assert code == 0, err
    a = sql_json(results, "select game_id, round, action_a, action_b from rounds where run_id = 'killed' order by all")
    b = sql_json(results, "select game_id, round, action_a, action_b from rounds where run_id = 'whole' order by all")
    assert a == b and len(a) == 72


@pytest.mark.slow
def test_two_processes_share_the_results_folder_and_the_cache(server: FakeLLMServer, results: Path) -> None:
    server.configure(latency_ms=10)
    procs = [_cli(results, f"twin{i}", server) for i in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    runs = sql_json(results, "select run_id, status from runs order by run_id")
    assert runs == [{"run_id": "twin1", "status": "complete"}, {"run_id": "twin2", "status": "complete"}]
    paid = sql_json(results, "select count(*) filter (where not cached) as paid, count(*) as n from calls")[0]
    assert paid["n"] == 144 and server.count(provider="openai", status=200) == paid["paid"]
    # Sharing one cache, no request is paid twice: a process asking what the other is sending waits for
    # its answer (the other's claim in the cache) instead of buying it too.
    per_request = sql_json(
        results, "select max(n) as most from (select count(*) as n from calls where not cached group by request_json)"
    )
    assert per_request[0]["most"] == 1
    assert server.count(provider="openai", status=200) == 72


@pytest.mark.slow
def test_ctrl_c_marks_games_in_flight_interrupted_and_resume_completes(server: FakeLLMServer, results: Path) -> None:
    server.configure(latency_ms=30)
    proc = _cli(results, "stopped", server, "--concurrency", "4")
    wait_for_answers(server, 15)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "pdbench resume stopped" in err
    run = sql_json(results, "select status, error from runs")[0]
    assert run["status"] == "interrupted" and "Ctrl-C" in run["error"]
    states = Counter(g["status"] for g in sql_json(results, "select status from games"))
    assert states["interrupted"] > 0 and states["running"] == 0
    # every recorded round has its calls, interrupted games included
    orphans = sql_json(
        results,
        "select count(*) as n from rounds r where not exists "
        "(select 1 from calls c where c.game_id = r.game_id and c.round = r.round)",
    )
    assert orphans[0]["n"] == 0
    server.configure(latency_ms=0)
    code, _, err = pdbench("resume", "stopped", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select count(*) as n from games where status = 'complete'")[0]["n"] == 6


@pytest.mark.slow
def test_third_ctrl_c_abandons_requests_in_flight_and_keeps_the_run_consistent(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PDBENCH_TIMEOUT", "60")
    server.configure(latency_ms=20)
    proc = _cli(results, "forced", server, "--concurrency", "4")
    wait_for_answers(server, 10)
    server.configure(latency_ms=30_000)  # every request now in flight would take 30 s to answer
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)  # first: waits for the answers in flight
    time.sleep(0.5)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)  # second: says it waits for them, because they are paid for
    time.sleep(0.5)
    assert proc.poll() is None
    third = time.monotonic()
    proc.send_signal(signal.SIGINT)  # third: abandons them
    _, err = proc.communicate(timeout=20)
    assert time.monotonic() - third < 5, "the third Ctrl-C did not abandon the requests in flight"
    assert "waiting for the answers to the requests already sent" in err
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "pdbench resume forced" in err
    run = sql_json(results, "select status, error from runs")[0]
    assert run["status"] == "interrupted" and "Ctrl-C" in run["error"]
    states = Counter(g["status"] for g in sql_json(results, "select status from games"))
    assert states["interrupted"] > 0 and states["running"] == 0 and states["failed"] == 0
    orphans = sql_json(
        results,
        "select count(*) as n from rounds r where not exists "
        "(select 1 from calls c where c.game_id = r.game_id and c.round = r.round)",
    )
    assert orphans[0]["n"] == 0
    server.configure(latency_ms=0)
    code, _, err = pdbench("resume", "forced", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select count(*) as n from games where status = 'complete'")[0]["n"] == 6
    assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == 72


@pytest.mark.slow
def test_a_rejected_key_stops_the_run_instead_of_failing_every_game(server: FakeLLMServer, results: Path) -> None:
    server.fail_next("openai", [401] * 50)
    args = ["--opponents", "TFT,ALLD,GRIM", "--rounds", "5", "--replicates", "5", "--concurrency", "1"]
    code, _, err = pdbench("eval", "--model", "openai/test-model", *args, "--results", results, "--run-id", "denied")
    assert code == 130, err
    assert "rejected the API key" in err and "sk-test-secret" not in err
    run = sql_json(results, "select status, error from runs")[0]
    assert run["status"] == "interrupted" and "HTTP 401" in run["error"]
    assert server.count(provider="openai") < 15


@pytest.mark.slow
def test_games_failed_by_an_outage_are_replayed_by_resume(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An outage that outlasts the retries fails the games it touches; the run is not complete, and
    once the outage ends `pdbench resume` plays those games again (recorded answers from the cache)."""
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "2")
    args = ("--opponents", "TFT,ALLD,GRIM", "--rounds", "4", "--replicates", "2", "--concurrency", "1")
    server.fail_next("openai", [500] * 12)  # each game's first request fails twice: every game fails
    code, _, err = pdbench("eval", "--model", "openai/test-model", *args, "--results", results, "--run-id", "outage")
    assert code == 130, err
    assert "Traceback" not in err and "pdbench resume outage" in err
    run = sql_json(results, "select status, error from runs")[0]
    assert run["status"] == "interrupted" and "transient error" in run["error"]
    failed = sql_json(results, "select game_id, failure from games where status = 'failed'")
    assert len(failed) == 6 and {g["failure"] for g in failed} == {"retryable"}
    paid = server.count(provider="openai", status=200)
    code, _, err = pdbench("resume", "outage", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select status from runs")[0]["status"] == "complete"
    states = sql_json(results, "select status, count(*) as n from games group by all")
    assert states == [{"status": "complete", "n": 6}]
    assert paid == 0 and server.count(provider="openai", status=200) == 24  # 6 games x 4 rounds, once each
    superseded = sql_json(results, "select count(*) as n from superseded_calls where outcome = 'error'")
    assert superseded[0]["n"] == 12  # the failed attempts stay on record


@pytest.mark.slow
def test_games_failed_by_a_refused_key_are_replayed_once_the_key_is_fixed(server: FakeLLMServer, results: Path) -> None:
    server.fail_next("openai", [401])
    args = ("--opponents", "TFT,ALLD", "--rounds", "3", "--replicates", "1", "--concurrency", "1")
    code, _, err = pdbench("eval", "--model", "openai/test-model", *args, "--results", results, "--run-id", "key")
    assert code == 130 and "rejected" in err and "Traceback" not in err, err
    assert sql_json(results, "select failure from games where status = 'failed'") == [{"failure": "authentication"}]
    code, _, err = pdbench("resume", "key", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select status, count(*) as n from games group by all") == [{"status": "complete", "n": 2}]


@pytest.mark.slow
def test_permanent_failures_are_replayed_only_with_retry_failed(server: FakeLLMServer, results: Path) -> None:
    server.fail_next("openai", [400])
    args = ("--opponents", "TFT,ALLD", "--rounds", "3", "--replicates", "1", "--concurrency", "1")
    code, _, err = pdbench("eval", "--model", "openai/test-model", *args, "--results", results, "--run-id", "bad")
    assert code == 0, err  # a request refused for good fails its game, and the run is complete
    assert sql_json(results, "select status from runs")[0]["status"] == "complete"
    assert sql_json(results, "select failure from games where status = 'failed'") == [{"failure": "permanent"}]
    code, _, err = pdbench("resume", "bad", "--results", results)
    assert code != 0 and "nothing to resume" in err and "--retry-failed" in err, err
    code, _, err = pdbench("resume", "bad", "--retry-failed", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select status, count(*) as n from games group by all") == [{"status": "complete", "n": 2}]


def _paid_recorded(results: Path, run_id: str) -> int:
    """Answers paid for (not from the cache) that the run file records, kept or superseded."""
    where = f"run_id = '{run_id}' and not cached and outcome in ('ok', 'unparseable')"
    query = f"select count(*) as n from (select 1 from calls where {where} union all " \
            f"select 1 from superseded_calls where {where})"  # fmt: skip
    return sql_json(results, query)[0]["n"]


@pytest.mark.slow
def test_every_paid_answer_reaches_the_results_after_kill_9(server: FakeLLMServer, results: Path) -> None:
    """kill -9 at concurrency 32: resume rebuilds, from the cache's ledger, the calls answered but not yet
    written to the results file, so every answer the server sent and PDBench received is recorded once,
    and only answers in flight at the kill (at most the concurrency) are bought twice."""
    server.configure(latency_ms=30)
    proc = _cli(results, "k9", server, "--concurrency", "32")
    wait_for_answers(server, 40)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    sent_before = server.count(provider="openai", status=200)
    server.configure(latency_ms=0)
    code, _, err = pdbench("resume", "k9", "--results", results)
    assert code == 0, err
    sent = server.count(provider="openai", status=200)
    bodies = Counter(json.dumps(r.body, sort_keys=True) for r in server.requests if r.status == 200)
    bought_twice = sum(n - 1 for n in bodies.values())
    assert bought_twice <= 32
    # Every answer received is recorded exactly once; what was bought twice was in flight at the kill.
    assert _paid_recorded(results, "k9") == sent - bought_twice
    assert sent_before < sent and sql_json(results, "select status from runs")[0]["status"] == "complete"
    assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == 72


@pytest.mark.slow
def test_a_cache_deleted_mid_run_is_noticed_and_replaced(server: FakeLLMServer, results: Path) -> None:
    server.configure(latency_ms=20)
    proc = _cli(results, "gone", server, "--concurrency", "4")
    cache = results / ".cache" / "responses.sqlite"
    wait_for_answers(server, 20)
    for f in (cache, cache.with_name(cache.name + "-wal"), cache.with_name(cache.name + "-shm")):
        f.unlink(missing_ok=True)
    at_delete = server.count(provider="openai", status=200)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "deleted or replaced" in err and "fresh cache" in err and "Traceback" not in err
    # Every answer received after the deletion is in the new cache (none written to the deleted file).
    with sqlite3.connect(cache) as con:
        kept = con.execute("select count(*) from responses").fetchone()[0]
    assert 72 - at_delete <= kept < 72, err


@pytest.mark.slow
def test_resume_works_from_the_run_file_alone_when_the_cache_is_corrupt(
    server: FakeLLMServer, results: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.configure(latency_ms=20)
    proc = _cli(results, "broken_cache", server, "--concurrency", "4")
    wait_for_answers(server, 30)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    cache = results / ".cache" / "responses.sqlite"
    for f in (cache.with_name(cache.name + "-wal"), cache.with_name(cache.name + "-shm")):
        f.unlink(missing_ok=True)
    cache.write_bytes(b"garbage, not a database " * 1000)
    answered = server.count(provider="openai", status=200)
    recorded = _paid_recorded(results, "broken_cache")
    server.configure(latency_ms=0)
    code, _, err = pdbench("resume", "broken_cache", "--results", results)
    assert code == 0, err
    warned = err + caplog.text  # pytest's log capture takes the warning the terminal shows
    assert "corrupt" in warned and "fresh cache" in warned
    assert list(cache.parent.glob("responses.sqlite.corrupt-*"))  # moved aside, not deleted
    # Every answer the interrupted session recorded was served from the run file, none bought again.
    assert server.count(provider="openai", status=200) - answered == 72 - recorded
    assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == 72


@pytest.mark.slow
def test_second_ctrl_c_keeps_the_answers_in_flight_so_resume_buys_none_again(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PDBENCH_TIMEOUT", "60")
    server.configure(latency_ms=20)
    proc = _cli(results, "twice", server, "--concurrency", "8")
    wait_for_answers(server, 10)
    server.configure(latency_ms=1_500)  # the requests now in flight take 1.5 s to answer
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "waiting for the answers" in err
    assert sql_json(results, "select status from runs")[0]["status"] == "interrupted"
    server.configure(latency_ms=0)
    code, _, err = pdbench("resume", "twice", "--results", results)
    assert code == 0, err
    bodies = Counter(json.dumps(r.body, sort_keys=True) for r in server.requests if r.status == 200)
    assert sum(n - 1 for n in bodies.values()) == 0  # no answer bought twice
    assert _paid_recorded(results, "twice") == server.count(provider="openai", status=200)
