"""Rate limits as a user meets them, through a real ``pdbench eval`` against the loopback server.

* A Ctrl-C while the endpoint is paused (the server's limit reached, a minute to wait) is acknowledged at
  once with what the run waits for, and the run stops in seconds, not when the pause ends.
* Stray 429s (a share of requests refused at random) cost their own requests' waits: the run completes
  with every game, and no rate is learned from them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store.catalog import open_run
from tests.support.cli import pdbench
from tests.support.llm_server import FakeLLMServer

RUN = "limited"


@pytest.fixture
def server(llm_server: FakeLLMServer) -> FakeLLMServer:
    llm_server.configure(latency_ms=5)
    return llm_server


def _env(results: Path, server: FakeLLMServer) -> dict[str, str]:
    env = dict(os.environ, PDBENCH_RESULTS=str(results), NO_COLOR="1", COLUMNS="160",
               OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="sk-test-limits",
               NO_PROXY="127.0.0.1,localhost", PDBENCH_RETRY_SECONDS="300")  # fmt: skip
    env.pop("PDBENCH_CACHE", None)
    return env


def _eval(*extra: str) -> list[str]:
    return ["eval", "--model", "openai/limited", "--opponents", "TFT,ALLD", "--rounds", "5", "--replicates", "4",
            "--run-id", RUN, "--no-cache", *extra]  # fmt: skip


@pytest.mark.slow
def test_ctrl_c_while_the_limit_pauses_the_endpoint_stops_the_run_in_seconds(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    # Two requests a minute, and headers that say when none is left: the third request meets the limit and
    # the endpoint pauses for the rest of the minute.
    server.configure(rpm_limit=2, ratelimit_headers=True)
    proc = subprocess.Popen([sys.executable, "-m", "harness.entry", *_eval()], env=_env(tmp_path, server),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while server.rate_limited_count == 0:  # the limit was met: the endpoint pauses for most of a minute
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never met the server's limit"
        time.sleep(0.05)
    time.sleep(0.5)
    pressed = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=50)  # the pause lasts ~58 s more: stopping must not wait for it
    took = time.monotonic() - pressed
    text = out.decode() + err.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text
    assert "Stopping (interrupted by the user (Ctrl-C)): no new game, round or request starts" in text
    assert took < 30, f"the run stopped {took:.1f} s after Ctrl-C"
    with open_run(tmp_path, RUN) as cat:
        status = cat.records("select status from runs")[0]["status"]
        games = cat.records("select status, count(*) as n from games group by status")
    assert status == "interrupted"
    assert {g["status"] for g in games} <= {"complete", "interrupted"}
    assert server.count(status=200) == 2  # nothing beyond the limit was answered, nothing was paid twice


@pytest.mark.slow
def test_stray_429s_cost_only_their_own_waits_and_teach_no_rate(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process: what it checks is in the run file, and no signal is sent."""
    server.configure(stray_429_rate=0.1, retry_after_s=0.2, seed=3)
    monkeypatch.delenv("PDBENCH_CACHE", raising=False)
    for name, value in _env(tmp_path, server).items():
        monkeypatch.setenv(name, value)
    code, out, err = pdbench(*_eval("--concurrency", "4"))
    assert code == 0, out + err
    with open_run(tmp_path, RUN) as cat:
        calls = cat.records("select outcome, count(*) as n from calls group by outcome order by outcome")
        games = cat.records("select status, count(*) as n from games group by status")
    refused = server.count(status=429)
    assert refused > 0
    assert {c["outcome"]: c["n"] for c in calls} == {"ok": 40, "rate_limited": refused}
    assert games == [{"status": "complete", "n": 8}]


def test_validate_says_which_limits_apply_when_agents_on_one_endpoint_disagree(tmp_path: Path) -> None:
    config = tmp_path / "two_limits.yaml"
    config.write_text(
        "horizon: {type: fixed, n_rounds: 3}\n"
        "experiment:\n"
        "  replicates: 1\n"
        "  conditions:\n"
        "    - agent_a: {model: openai/m, base_url: 'http://localhost:8000/v1', limits: {concurrency: 8, rpm: 500}}\n"
        "      agent_b: {policy: TFT}\n"
        "    - agent_a: {model: openai/m, base_url: 'http://127.0.0.1:8000/v1/',\n"
        "               limits: {concurrency: 4, tpm: 90000}}\n"
        "      agent_b: {policy: ALLD}\n"
    )
    code, out, err = pdbench("validate", config)
    assert code == 0, err
    text = " ".join((out + err).split())
    assert "set different limits" in text
    assert "the run applies the strictest of each: concurrency 4, rpm 500, tpm 90000" in text
    assert "openai at http://127.0.0.1:8000/v1" in text  # one endpoint, however it was spelled
