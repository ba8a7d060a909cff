"""Issue 9, point 11: `pdbench resume` (and the commands that read runs) on results files that are damaged,
empty, half set up or edited: one paragraph that says what to do, never a traceback; and a results file is
set up in one transaction, so a kill while setting it up leaves a file that resume explains. Issue 19, point 9:
damage met by a query, not when the file is attached, leaves that file out, not the whole folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from harness.store.schema import MIGRATIONS
from harness.store.writer import RunWriter
from tests.support.cli import pdbench

ROOT = Path(__file__).resolve().parents[2]
SET_UP = "it was created, but the process stopped while setting it up, before the run began"
DAMAGED = "is damaged and cannot be read"


def interrupted_run(results: Path, run_id: str = "t") -> Path:
    """A finished tournament, marked as a run a crash interrupted after game 20 (so resume has work to do)."""
    code, _out, err = pdbench("tournament", "--players", "TFT,ALLD,GRIM,WSLS", "--rounds", "300", "--replicates",
                              "10", "--results", results, "--run-id", run_id)  # fmt: skip
    assert code == 0, err
    path = results / f"{run_id}.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE runs SET status = 'interrupted'")
        con.execute("UPDATE games SET status = 'interrupted' WHERE game_id > 20")
    return path


@pytest.mark.slow
def test_resume_on_a_file_whose_checksums_do_not_match(results: Path, tmp_path: Path) -> None:
    """Flip bytes at 16 places spread over the file, in turn: each is refused up front as damaged (before
    resume changes anything), or, where the bytes were unused, resumed to completion; never a traceback."""
    original = interrupted_run(tmp_path / "orig").read_bytes()
    outcomes: dict[str, int] = {"damaged": 0, "resumed": 0}
    for offset in [0, 4096, 8192, 12288, *range(16_384, len(original), len(original) // 12)]:
        damaged = bytearray(original)
        for i in range(offset + 64, min(offset + 192, len(damaged))):
            damaged[i] ^= 0xFF
        path = results / "t.duckdb"
        path.write_bytes(bytes(damaged))
        code, _out, err = pdbench("resume", "t", "--results", results)
        if code == 0:
            outcomes["resumed"] += 1
        else:
            assert DAMAGED in " ".join(err.split()) and "run the experiment again under a new run id" in err, err
            assert path.read_bytes() == bytes(damaged), "a damaged file must be left as it was"
            outcomes["damaged"] += 1
        path.unlink()
    print(outcomes, f"{len(original):,} bytes")
    assert outcomes["damaged"] >= 6, outcomes  # the headers, the catalog and the data blocks were all hit


def test_resume_on_a_file_without_tables(results: Path) -> None:
    duckdb.connect(str(results / "empty.duckdb")).close()
    code, _out, err = pdbench("resume", "empty", "--results", results)
    assert code != 0 and SET_UP in " ".join(err.split()) and "--overwrite" in err, err
    code, _out, err = pdbench(
        "tournament", "--players", "TFT,ALLD", "--rounds", "5", "--results", results, "--run-id", "empty", "--overwrite"
    )
    assert code == 0, err


@pytest.mark.slow
def test_resume_on_a_non_integer_schema_version(results: Path) -> None:
    path = interrupted_run(results)
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE pdbench_meta SET value = 'two' WHERE key = 'schema_version'")
    code, _out, err = pdbench("resume", "t", "--results", results)
    assert code != 0 and "its schema version 'two' is not a version number" in " ".join(err.split()), err
    code, _out, err = pdbench("sql", "select count(*) from runs", "--results", results)
    assert code == 0 and "skipped" in err and "not a version number" in " ".join(err.split()), err


def test_resume_on_a_file_an_older_pdbench_left_half_set_up(results: Path) -> None:
    """Before set-up was one transaction, a kill could leave some tables and no schema version: resume
    called it "not a PDBench results file"."""
    with duckdb.connect(str(results / "half.duckdb")) as con:
        for statement in MIGRATIONS[0].statements[:4]:  # the move type, pdbench_meta, runs, games
            con.execute(statement)
    code, _out, err = pdbench("resume", "half", "--results", results)
    assert code != 0 and SET_UP in " ".join(err.split()), err
    assert "not a PDBench results file" not in err


def test_a_foreign_duckdb_file_is_still_called_foreign(results: Path) -> None:
    with duckdb.connect(str(results / "other.duckdb")) as con:
        con.execute("CREATE TABLE prices (a INT)")
    code, _out, err = pdbench("resume", "other", "--results", results)
    assert code != 0 and "is not a PDBench results file" in err, err


def test_an_interrupted_set_up_leaves_no_tables(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C (or any failure) in the middle of setting up a results file rolls the whole set-up back."""

    def interrupted(con: duckdb.DuckDBPyConnection) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("harness.store.views.core.create_views", interrupted)  # after the tables, before the version
    with pytest.raises(KeyboardInterrupt):
        RunWriter.create(results, "cut")
    with duckdb.connect(str(results / "cut.duckdb")) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone() == (0,)
    monkeypatch.undo()
    code, _out, err = pdbench("resume", "cut", "--results", results)
    assert code != 0 and SET_UP in " ".join(err.split()), err


def test_a_set_up_run_that_never_started_says_so(results: Path) -> None:
    """Set up, then stopped before the run's row was written (a Ctrl-C between the two)."""
    RunWriter.create(results, "never").close()
    code, _out, err = pdbench("resume", "never", "--results", results)
    assert code != 0 and "before run 'never' began" in " ".join(err.split()) and "--overwrite" in err, err


KILLED_SET_UP = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from harness.store.writer import RunWriter
    folder = Path(sys.argv[1])
    print("ready", flush=True)
    for i in range(10_000):
        RunWriter.create(folder, f"k{i}").close()
    """
)


@pytest.mark.slow
def test_kill_9_while_setting_up_files_leaves_only_whole_or_empty_ones(results: Path) -> None:
    """Files are set up one after another until kill -9; every file left is whole or empty, never half. Three
    processes, killed 0.3, 0.7 and 1.1 s after they start setting up, run side by side."""
    delays = (0.3, 0.7, 1.1)
    procs = []
    for delay in delays:
        folder = results / f"after_{delay}"
        folder.mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-c", KILLED_SET_UP, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        ))  # fmt: skip
    ready = []
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        ready.append(time.monotonic())
    for proc, delay, at in zip(procs, delays, ready, strict=True):
        time.sleep(max(0.0, at + delay - time.monotonic()))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    for delay in delays:
        folder = results / f"after_{delay}"
        files = sorted(folder.glob("*.duckdb"))
        assert files
        for path in files:
            with duckdb.connect(str(path)) as con:
                tables = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0]
                if tables:
                    version = con.execute("SELECT value FROM pdbench_meta WHERE key = 'schema_version'").fetchall()
                    assert version, f"{path.name}: tables without a schema version"
        last = files[-1] if len(files) == 1 else max(files, key=lambda p: int(p.stem[1:]))
        code, _out, err = pdbench("resume", last.stem, "--results", folder)
        assert code != 0 and "before" in err and "--overwrite" in err, err


def damage_rows_of(path: Path, table: str) -> None:
    """Flip bytes in every block that holds ``table``'s rows and no row of the tables read when a file is
    attached (``runs``, ``pdbench_meta``): the file still attaches, and a query that reads ``table`` meets a
    checksum that does not match."""
    with duckdb.connect(str(path), read_only=True) as con:

        def blocks(name: str) -> set[int]:
            return {r[0] for r in con.execute(f"select block_id from pragma_storage_info('{name}') "
                                              "where block_id >= 0").fetchall()}  # fmt: skip

        hit = blocks(table) - blocks("runs") - blocks("pdbench_meta")
        size = con.execute("select block_size from pragma_database_size()").fetchone()[0]
    assert hit, f"no block of {table} alone"
    data = bytearray(path.read_bytes())
    for block in hit:
        start = 3 * 4096 + block * size  # after the file's three headers
        for i in range(start + 64, start + 4096):
            data[i] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.slow
def test_a_damaged_block_a_query_meets_leaves_out_that_file_not_the_folder(results: Path) -> None:
    """Issue 19, point 9: damage that attaching does not see (the rows of `calls`) broke every query that read
    them: `pdbench runs` listed no run and `pdbench sql` over `calls` failed for every run. Now the file is left
    out, with a warning naming it, and the rest answered, in the CLI and in what the dashboard lists."""
    from harness.store.browse import list_runs

    for run_id in ("good", "bad"):
        code, _out, err = pdbench("eval", "--model", "mock/random", "--opponents", "TFT,ALLD", "--rounds", "20",
                                  "--replicates", "1", "--results", results, "--run-id", run_id)  # fmt: skip
        assert code == 0, err
    damage_rows_of(results / "bad.duckdb", "calls")
    damage_rows_of(results / "bad.duckdb", "games")  # what the dashboard's list of runs reads
    warning = "bad.duckdb: it is damaged and cannot be read (Corrupt database file"

    code, out, err = pdbench("runs", "--results", results, "--format", "json")
    assert code == 0, err
    assert [r["run_id"] for r in json.loads(out)] == ["good"] and f"skipped {warning}" in " ".join(err.split()), err

    code, out, err = pdbench(
        "sql", "select run_id, count(*) as n from calls group by run_id", "--results", results, "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out) == [{"run_id": "good", "n": 40}] and f"skipped {results}/{warning}" in " ".join(err.split())

    folder = list_runs(results)  # the dashboard's listing
    assert [r.run_id for r in folder.runs] == ["good"]
    assert [name for name, _ in folder.unreadable] == ["bad.duckdb"]
