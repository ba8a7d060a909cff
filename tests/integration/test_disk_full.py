"""A full disk stops a run cleanly as interrupted, says so, and resume finishes it once there is space."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from harness.engine import scheduler
from harness.store import live
from harness.store.run_file import write_error
from tests.support.cli import ROOT, pdbench, sql_json

OPPONENTS = ("--opponents", "ALLC,ALLD", "--replicates", "10")
# On a 1 MB disk: 20 games of 50 rounds fill it after about 420 rounds, mid-run. A run that fits until its last
# checkpoint fails there instead, on another path (20 games of 20 rounds did), so the run is 2.4 times that.
DISK_EVAL = ("eval", "--model", "mock/tft", *OPPONENTS, "--rounds", "50")
DISK_ROUNDS = 2 * 10 * 50
# The injected error needs only a run long enough for three batches.
EVAL = ("eval", "--model", "mock/tft", *OPPONENTS, "--rounds", "20")
ROUNDS = 2 * 10 * 20
# The same run with answers that take 5 ms, so that it lasts well over three 10 ms batches however fast the machine
# (without it, 400 instant answers once fitted in two batches and the injected error never came).
SLOW_EVAL = ("eval", "--model", "mock/tft?latency_ms=5", *OPPONENTS, "--rounds", "20")


@contextlib.contextmanager
def small_disk(tmp_path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted in ``tmp_path`` (root only: skipped, saying why, elsewhere)."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="mounting a tmpfs to fill needs Linux root")
def test_a_full_disk_interrupts_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    with small_disk(tmp_path, "1m") as disk:
        results = disk / "results"
        done = subprocess.run([sys.executable, "-m", "harness.cli", *DISK_EVAL, "--results", str(results),
                               "--run-id", "full"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode != 0
        assert "disk holding" in done.stderr and "is full" in done.stderr, done.stderr
        assert "Traceback" not in done.stdout + done.stderr and "corrupt" not in done.stderr
        subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], check=True)
        status = sql_json(results, "select status, error from runs")[0]
        assert status["status"] in ("interrupted", "running"), status  # running: not even that line fitted
        assert "DiskFull" not in str(status["error"]) and "IOException" not in str(status["error"])
        code, _, err = pdbench("resume", "full", "--results", results)
        assert code == 0, err
        assert sql_json(results, "select status from runs")[0]["status"] == "complete"
        assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == DISK_ROUNDS


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="mounting a tmpfs to fill needs Linux root")
def test_a_run_that_fills_the_disk_only_at_its_last_checkpoint_is_complete_with_a_note(tmp_path: Path) -> None:
    """20 games of 20 rounds fit on a 1.5 MB disk until the final checkpoint, which DuckDB reports as a fatal
    error. Everything was committed to the file's log: the run is complete and shown, with what to do, not called
    damaged (as it was)."""
    with small_disk(tmp_path, "1500k") as disk:
        results = disk / "results"
        done = subprocess.run([sys.executable, "-m", "harness.cli", *EVAL, "--results", str(results),
                               "--run-id", "last"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
        text = " ".join(done.stderr.split())
        assert done.returncode == 0, done.stderr
        assert "damaged" not in text and "Traceback" not in text
        assert "note: the disk holding" in text and "is full" in text and "last.duckdb.wal" in text, text
        subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], check=True)
        assert sql_json(results, "select status from runs")[0]["status"] == "complete"
        assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == ROUNDS


@pytest.mark.slow
def test_a_full_disk_reported_by_the_results_writer_stops_cleanly(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, on any machine: the writer's third batch meets DuckDB's out-of-space error (batches every 10 ms
    here rather than every 0.25 s, so a short run writes more than two)."""
    monkeypatch.setattr(scheduler, "FLUSH_EVERY_S", 0.01)
    write = live.LiveRecorder.write
    batches = {"n": 0}

    def full_after_two(self: live.LiveRecorder, batch: live._Batch) -> None:
        batches["n"] += 1
        if batches["n"] > 2 and (batch.rounds or batch.calls):
            exc = duckdb.IOException('IO Error: Could not write file "x.duckdb": No space left on device')
            raise write_error(exc, self.writer.path, self.run_id)
        write(self, batch)

    monkeypatch.setattr(live.LiveRecorder, "write", full_after_two)
    code, out, err = pdbench(*SLOW_EVAL, "--results", results, "--run-id", "injected")
    assert code == 2 and "is full" in err and "pdbench resume injected" in err, err
    assert "Traceback" not in out + err
    run = sql_json(results, "select status, error from runs")[0]
    assert run == {"status": "interrupted", "error": "the disk is full; free some space, then `pdbench resume`"}
    monkeypatch.setattr(live.LiveRecorder, "write", write)
    code, _, err = pdbench("resume", "injected", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select count(*) as n from rounds")[0]["n"] == ROUNDS
