"""Memory that does not grow with the run: DuckDB's memory is bounded while a run is written.

These guard the structure of the fix cheaply; ``tests/benchmarks/bench_memory.py`` measures the
peak resident memory of a 100,000-game run against the games done.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.errors import ConfigError
from harness.store.writer import MEMORY_LIMIT_ENV, RunWriter, memory_limit

ROOT = Path(__file__).resolve().parents[2]


def _limit(writer: RunWriter) -> str:
    return writer.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_the_writer_bounds_duckdb_memory_when_it_creates_and_when_it_reopens_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's own default is 80% of the machine's memory, which let the buffer pool grow with the results
    file; a run's writer sets 128 MB (DuckDB's units: 128e6 bytes = 122.07 MiB, shown as "122.0 MiB")."""
    monkeypatch.delenv(MEMORY_LIMIT_ENV, raising=False)
    writer = RunWriter.create(tmp_path, "bounded")
    assert _limit(writer) == "122.0 MiB"
    writer.close()
    writer = RunWriter.reopen(tmp_path / "bounded.duckdb", "bounded")  # what `pdbench resume` opens
    assert _limit(writer) == "122.0 MiB"
    writer.close()
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "1GiB")
    writer = RunWriter.reopen(tmp_path / "bounded.duckdb", "bounded")
    assert _limit(writer) == "1.0 GiB"
    writer.close()
    monkeypatch.setenv(MEMORY_LIMIT_ENV, " 512 mb ")  # 512e6 / 2**20 = 488.28 MiB
    writer = RunWriter.create(tmp_path, "more")
    assert _limit(writer) == "488.2 MiB"
    writer.close()


@pytest.mark.parametrize("value", ["lots", "256", "MB", "-1MB", "1e9B", "256 furlongs", "0.5GB;DROP TABLE runs"])
def test_a_memory_setting_that_is_not_a_size_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match=rf"{MEMORY_LIMIT_ENV}=.* is not a size\. Give a number and a unit"):
        memory_limit({MEMORY_LIMIT_ENV: value})


@pytest.mark.parametrize("value", ["1MB", "63MB", "60MiB", "0GB"])
def test_a_memory_setting_too_small_to_write_a_run_is_refused(value: str) -> None:
    # 64 MB = 64e6 bytes; 60 MiB = 62.9e6 bytes is under it, 61 MiB = 63.96e6 too, 62 MiB = 65.01e6 is not.
    with pytest.raises(ConfigError, match="too little for DuckDB to write a run; give at least 64MB"):
        memory_limit({MEMORY_LIMIT_ENV: value})
    assert memory_limit({MEMORY_LIMIT_ENV: "62MiB"}) == "62MiB"
    assert memory_limit({}) == "128MB"


def test_pdbench_run_refuses_a_bad_memory_setting_before_it_creates_the_results_file(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MEMORY_LIMIT_ENV, "plenty")
    outcome = CliRunner().invoke(app, ["run", str(ROOT / "configs" / "experiment.yaml"), "--results", str(results)])
    assert outcome.exit_code == 2
    assert f"{MEMORY_LIMIT_ENV}='plenty' is not a size" in outcome.stderr
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert list(results.iterdir()) == []
