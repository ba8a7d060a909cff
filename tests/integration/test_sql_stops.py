"""Issue 19, point 12: a runaway `pdbench sql` query ran on through Ctrl-C (DuckDB does not look at Python's
signals while it works). Ctrl-C now stops it with one line and exit code 130, and every query has a time limit
(``--timeout``) past which it is stopped with a clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_games
from tests.support.cli import pdbench

RUNAWAY = "select count(*) from range(1000000000000) a, range(10) b"  # hours of work


def _holds(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (the catalog attaches the run files just before the query)."""
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


@pytest.mark.slow
def test_ctrl_c_stops_a_runaway_query_with_one_line_and_exit_130(results: Path) -> None:
    write_games(results, "r", [("CC", "CD")]).close()
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "harness.entry", "sql", RUNAWAY, "--results", str(results)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _holds(proc.pid, results / "r.duckdb"):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.5)  # into the query
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # before: still running 15 s later, and for hours
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.startswith("pdbench: query stopped (Ctrl-C) after ") and err.endswith("; nothing was changed.\n"), err
    assert len(err.splitlines()) == 1 and out == ""


@pytest.mark.slow
def test_a_query_past_its_time_limit_is_stopped_with_a_clear_error(results: Path) -> None:
    write_games(results, "r", [("CC", "CD")]).close()
    code, out, err = pdbench("sql", RUNAWAY, "--results", results, "--timeout", "0.3")
    text = " ".join(err.split())
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert "error: the query was stopped after" in text and "its time limit" in text, err
    assert "give it more time with --timeout SECONDS (0: no limit)" in text, err
    code, out, err = pdbench(
        "sql", "select count(*) as n from rounds", "--results", results, "--format", "json", "--timeout", "0"
    )
    assert code == 0 and out.strip() == '[{"n": 2}]', err
