"""Stopping a run with real signals, sent to a real ``pdbench eval`` in a subprocess.

Whatever the user (or the system) does, at any spacing: one, two or three Ctrl-C, a Ctrl-C storm that
lasts past the end of the run, SIGTERM, or closing the terminal (a real pseudo-terminal whose master is
closed, so the kernel sends SIGHUP and later writes fail) the run ends ``interrupted`` (never
``failed``), with exit code 130 and no traceback, its stored rounds whole, and ``pdbench resume``
completes it to the same games an uninterrupted run plays.

The run plays one opponent, ALLC: its games are all alike, so the scorecard shown when the run stops and
again when it completes fits SFEM without a bootstrap (200 fits of games that differ cost seconds a run),
and the signal handling, the same whatever the opponents, is what takes the time. ``pdbench resume`` runs
in-process (no signal is sent to it; starting an interpreter costs more than most of its play).
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.store.catalog import open_run
from tests.support.cli import pdbench
from tests.support.live_reader import look
from tests.support.mock_latency import without_mock_latency

pytestmark = pytest.mark.slow  # each case runs pdbench twice as a real process, signalled mid-run

RUN = "sig"
# 60 games (one opponent x 60 replicates) x 4 rounds at 100 ms a call and 10 games in flight: six waves of about
# 0.4 s, signalled once the first wave is stored (about 0.6 s into play), so the signal lands mid-run with about
# 1.8 s of play left and resume has games to play. The wait is what makes the run last: few calls, so resume,
# which plays the rest without it (tests/support/mock_latency.py), costs little.
EVAL = ["eval", "--model", "mock/tft?latency_ms=100", "--opponents", "ALLC", "--rounds", "4", "--replicates", "60",
        "--run-id", RUN]  # fmt: skip


def _env(results: Path) -> dict[str, str]:
    env = dict(os.environ, PDBENCH_RESULTS=str(results), NO_COLOR="1", COLUMNS="100")
    env.pop("PDBENCH_CACHE", None)
    return env


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness.entry", *args]


def _started(results: Path, proc: subprocess.Popen[bytes]) -> None:
    """Wait until the run has stored its first complete game (read as a reader reads a running run), so that
    the signal lands mid-run with games to keep."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, "pdbench ended before a game was stored"
        assert time.monotonic() < deadline, "no game was stored within 60 s"
        if (results / f"{RUN}.duckdb").exists() and look(results, RUN, check=False)["complete"]:
            return
        time.sleep(0.1)


def _sql(results: Path, query: str) -> list[dict[str, Any]]:
    with open_run(results, RUN) as cat:
        return cat.records(query)


def _check_interrupted_then_resumed(results: Path) -> int:
    """The run is ``interrupted`` with whole rounds stored; resume completes it. Returns the games kept."""
    run = _sql(results, "select status, games_planned from runs")[0]
    assert run["status"] == "interrupted", run
    kept = _sql(results, "select count(*) as n from games where status = 'complete'")[0]["n"]
    whole = _sql(
        results,
        "select count(*) as bad from games g where g.rounds_played <> "
        "(select count(*) from rounds r where r.game_id = g.game_id)",
    )[0]
    assert whole["bad"] == 0
    with without_mock_latency():  # the latency only made the signalled run last
        code, _, err = pdbench("resume", RUN, "--results", results)  # raises what would have been a traceback
    assert code == 0, err
    after = _sql(results, "select status, (select count(*) from games where status = 'complete') as n from runs")[0]
    assert after == {"status": "complete", "n": run["games_planned"]}
    assert isinstance(kept, int)
    return kept


def _press(proc: subprocess.Popen[bytes], gaps: list[float]) -> None:
    """Send SIGINT once per gap, waiting the gap after each."""
    for gap in gaps:
        if proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)


@pytest.mark.parametrize(
    "gaps",
    [
        pytest.param([0.0], id="one"),
        pytest.param([0.3, 0.0], id="two-0.3s-apart"),
        pytest.param([0.02, 0.0], id="two-at-once"),
        pytest.param([0.05, 0.05, 0.0], id="three-fast"),
        pytest.param([0.7, 0.7, 0.0], id="three-slow"),
        pytest.param([0.15] * 25, id="a-storm-past-the-end"),
    ],
)
def test_ctrl_c_at_any_spacing_leaves_an_interrupted_run_that_resumes(tmp_path: Path, gaps: list[float]) -> None:
    proc = subprocess.Popen(_cmd(*EVAL), env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _started(tmp_path, proc)
    _press(proc, gaps)
    out, err = proc.communicate(timeout=120)
    text = err.decode() + out.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "Query interrupted" not in text, text
    assert _check_interrupted_then_resumed(tmp_path) > 0  # games finished before the press are kept


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_termination_signals_leave_an_interrupted_run(tmp_path: Path, signum: signal.Signals) -> None:
    proc = subprocess.Popen(_cmd(*EVAL), env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _started(tmp_path, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    text = err.decode() + out.decode()
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    run = _sql(tmp_path, "select error from runs")[0]
    assert "stopped by SIG" in str(run["error"])
    assert _check_interrupted_then_resumed(tmp_path) > 0


def _drain(master: int, seen: bytearray) -> Callable[[], None]:
    """Read the terminal's output in the background (a full pty buffer would block the run's display)."""

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return lambda: thread.join(timeout=5)


def test_closing_the_terminal_leaves_an_interrupted_run(tmp_path: Path) -> None:
    """The run's terminal is a real pseudo-terminal; closing its master end is what closing the window does."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, b"\x18\x00\x50\x00\x00\x00\x00\x00")  # 24 rows, 80 columns

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the pty becomes the run's controlling terminal

    env = _env(tmp_path)
    env.pop("COLUMNS")
    proc = subprocess.Popen(_cmd(*EVAL), env=env, stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal)
    os.close(slave)
    seen = bytearray()
    join = _drain(master, seen)
    _started(tmp_path, proc)
    assert seen, "the live display wrote nothing to the terminal"
    os.close(master)  # the window is gone: SIGHUP, and every later write to the terminal fails
    join()
    assert proc.wait(timeout=120) == 130
    run = _sql(tmp_path, "select error from runs")[0]
    assert "SIGHUP" in str(run["error"])
    assert _check_interrupted_then_resumed(tmp_path) > 0
