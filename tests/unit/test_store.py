"""The results store: writer failures, overwrite safety, the catalog's handling of odd files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from harness.cli.render import rows_json
from harness.config.plan import iter_games
from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.errors import DiskFull, RunExistsError, StoreError
from harness.players.strategies.games import StrategyGames
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.run_file import write_error
from harness.store.schema import SCHEMA_VERSION
from harness.store.writer import RunWriter


def small(players: str = "TFT,ALLD,GTFT", rounds: int = 20, replicates: int = 3):  # type: ignore[no-untyped-def]
    return tournament_config(players.split(","), rounds=rounds, replicates=replicates, seed=5)


def test_a_failed_write_marks_the_run_failed_and_says_why(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self):  # type: ignore[no-untyped-def]
        raise duckdb.IOException("No space left on device")

    monkeypatch.setattr("harness.store.writer._MovesBuffer.arrays", broken)
    with pytest.raises(StoreError, match="No space left on device"):
        run_experiment(small(), results_dir=results, run_id="full")
    con = duckdb.connect(str(results / "full.duckdb"), read_only=True)
    status, error = con.execute("SELECT status, error FROM runs").fetchone()
    assert status == "failed" and "No space left" in error
    assert con.execute("SELECT count(*) FROM games").fetchone() == (0,)


class _CheckpointFails:
    """A writer's connection whose CHECKPOINT fails as DuckDB's does on a full disk (a fatal error, which
    invalidates the database) or with ``text``; every other statement is the real connection's."""

    def __init__(self, con: duckdb.DuckDBPyConnection, text: str) -> None:
        self._con, self._text = con, text

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        if sql == "CHECKPOINT":
            raise duckdb.FatalException(self._text)
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


FULL_AT_CHECKPOINT = (
    'FATAL Error: Failed to create checkpoint because of error: Could not write file "x.duckdb": '
    "No space left on device"
)


def test_a_full_disk_at_the_last_checkpoint_leaves_the_run_complete_and_says_what_to_do(results: Path) -> None:
    """What was committed (every game, and the status) is in the file's log: the run is whole and readable, so it
    is complete, with a note, not "damaged" (found on a 1.5 MB tmpfs: tests/integration/test_disk_full.py)."""
    writer = RunWriter.create(results, "full")
    writer.start_run(kind="run", config={}, seed=1, games_planned=0, collapse_k=3, collapse_threshold=0.5)
    real = writer.con
    writer.con = _CheckpointFails(real, FULL_AT_CHECKPOINT)  # type: ignore[assignment]
    assert writer.finish(RunStatus.COMPLETE) == (RunStatus.COMPLETE, None)
    assert writer.log_kept is not None and "is full" in writer.log_kept and "full.duckdb.wal" in writer.log_kept
    writer.con = real
    writer.close()
    with Catalog(results) as cat:
        assert cat.records("SELECT status FROM runs") == [{"status": "complete"}]


def test_any_other_failure_of_the_last_checkpoint_is_still_an_error(results: Path) -> None:
    writer = RunWriter.create(results, "broken")
    writer.start_run(kind="run", config={}, seed=1, games_planned=0, collapse_k=3, collapse_threshold=0.5)
    real = writer.con
    writer.con = _CheckpointFails(real, "FATAL Error: Failed to create checkpoint: Data Corruption")  # type: ignore[assignment]
    with pytest.raises(StoreError, match="damaged"):
        writer.finish(RunStatus.COMPLETE)
    writer.con = real
    writer.close()


def test_a_full_disk_is_said_as_such_even_when_duckdb_calls_it_fatal(tmp_path: Path) -> None:
    error = write_error(duckdb.FatalException(FULL_AT_CHECKPOINT), tmp_path / "r.duckdb", "r")
    assert isinstance(error, DiskFull) and "is full" in str(error) and "pdbench resume r" in str(error)


def test_overwrite_refuses_a_run_another_process_is_writing(results: Path) -> None:
    run_experiment(small(), results_dir=results, run_id="busy")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(results / "busy.duckdb")!r})
            print('locked', flush=True)
            time.sleep(30)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError, match="another PDBench process"):
            RunWriter.create(results, "busy", overwrite=True)
        assert (results / "busy.duckdb").exists()
    finally:
        holder.kill()
        holder.wait()
    with pytest.raises(RunExistsError):
        RunWriter.create(results, "busy")
    RunWriter.create(results, "busy", overwrite=True).close()


def test_the_catalog_skips_a_run_another_process_is_writing_and_reads_the_rest(results: Path) -> None:
    """A file locked by another process is listed as skipped, with why; a file that is not a database, which
    DuckDB refuses with the same exception type, is not mistaken for one being written."""
    run_experiment(small(), results_dir=results, run_id="busy")
    run_experiment(small(), results_dir=results, run_id="free")
    (results / "junk.duckdb").write_bytes(b"not a database" * 100)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, time
            con = duckdb.connect({str(results / "busy.duckdb")!r})
            print('locked', flush=True)
            time.sleep(30)
        """)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with Catalog(results) as cat:
            assert list(cat.attached.values()) == [results / "free.duckdb"]
            reasons = {path.name: reason for path, reason in cat.skipped}
    finally:
        holder.kill()
        holder.wait()
    assert reasons["busy.duckdb"] == "it is being written by another PDBench process; try again when it ends"
    assert "being written" not in reasons["junk.duckdb"] and "not a valid DuckDB database" in reasons["junk.duckdb"]


def test_overwrite_of_a_folder_is_refused(results: Path) -> None:
    (results / "odd.duckdb").mkdir()
    with pytest.raises(StoreError, match="not a results file"):
        RunWriter.create(results, "odd", overwrite=True)


def test_catalog_counts_a_copied_run_once_and_skips_foreign_files(results: Path) -> None:
    run_experiment(small(), results_dir=results, run_id="orig")
    shutil.copy(results / "orig.duckdb", results / "orig-backup.duckdb")
    duckdb.connect(str(results / "foreign.duckdb")).execute("CREATE TABLE x (a INT)").close()
    partial = duckdb.connect(str(results / "partial.duckdb"))
    partial.execute("CREATE TABLE pdbench_meta (key VARCHAR, value VARCHAR)")
    partial.execute("INSERT INTO pdbench_meta VALUES ('schema_version', '1')")
    partial.close()
    with Catalog(results) as cat:
        reasons = {p.name: r for p, r in cat.skipped}
        assert "already read from orig-backup.duckdb" in reasons["orig.duckdb"]
        assert reasons["foreign.duckdb"].startswith("it is not a PDBench results file")
        assert "lacks the tables" in reasons["partial.duckdb"]
        assert cat.query("SELECT count(*) FROM games")[1] == [(18,)]


def test_run_files_carry_the_metric_views(results: Path) -> None:
    run_experiment(small(), results_dir=results, run_id="own")
    con = duckdb.connect(str(results / "own.duckdb"), read_only=True)
    direct = con.execute("SELECT player, mean_payoff_per_round FROM tournament ORDER BY player").fetchall()
    with Catalog(results) as cat:
        assert cat.query("SELECT player, mean_payoff_per_round FROM tournament ORDER BY player")[1] == direct


def test_deterministic_games_are_played_once_and_stochastic_ones_every_time() -> None:
    config = small("TFT,GTFT,ALLD", rounds=50, replicates=4)
    games = StrategyGames()
    played = {}
    for plan in iter_games(config):
        cond = plan.condition
        match, _ = games.play(*cond.strategies(), cond.game, cond.horizon, cond.noise, plan.seed)
        played.setdefault(plan.condition.name, []).append(match)
    assert all(m is played["TFT_vs_ALLD"][0] for m in played["TFT_vs_ALLD"])
    assert len({id(m) for m in played["GTFT_vs_ALLD"]}) == 4
    assert len({"".join(m.moves_a) for m in played["GTFT_vs_ALLD"]}) > 1
    fresh = StrategyGames()
    for plan in iter_games(config):  # a new memo gives the same games: memoization changes nothing
        cond = plan.condition
        match, _ = fresh.play(*cond.strategies(), cond.game, cond.horizon, cond.noise, plan.seed)
        assert match.moves_a == played[plan.condition.name][plan.replicate].moves_a


def test_games_are_planned_replicate_by_replicate() -> None:
    order = [(g.replicate, g.condition.name) for g in iter_games(small("TFT,ALLD", replicates=2))]
    assert order == [
        (0, "TFT_vs_TFT"),
        (0, "TFT_vs_ALLD"),
        (0, "ALLD_vs_ALLD"),
        (1, "TFT_vs_TFT"),
        (1, "TFT_vs_ALLD"),
        (1, "ALLD_vs_ALLD"),
    ]


def test_json_rows_never_contain_nan_or_infinity() -> None:
    text = rows_json(["x", "y", "z"], [(float("nan"), [1.0, float("inf")], {"a": float("-inf"), "b": 2})])
    assert json.loads(text) == [{"x": None, "y": [1.0, None], "z": {"a": None, "b": 2}}]


def test_interrupting_between_games_keeps_them(results: Path) -> None:
    from harness.engine.interrupts import StopFlag

    stop = StopFlag()
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if done == 7:
            stop.set("test stop")

    result = run_experiment(small(replicates=10), results_dir=results, run_id="cut", progress=progress, stop=stop)
    assert result.status == "interrupted" and result.games_done == 7
    con = duckdb.connect(str(results / "cut.duckdb"), read_only=True)
    assert con.execute("SELECT status, error FROM runs").fetchone() == ("interrupted", "test stop")
    assert con.execute("SELECT count(*), sum(rounds_played) FROM games").fetchone() == (7, 140)
    assert con.execute("SELECT count(*) FROM rounds").fetchone() == (140,)


async def test_the_scheduler_pulls_games_lazily(tmp_path: Path) -> None:
    """A huge plan is consumed one game at a time by a fixed pool of workers, never materialised."""
    from harness.calls.limits import LimiterRegistry
    from harness.calls.path import CallPath
    from harness.calls.pricing import DEFAULT_PRICES, PriceTable
    from harness.config.presets.evaluation import eval_config
    from harness.engine.interrupts import StopFlag
    from harness.engine.progress import Progress
    from harness.engine.scheduler import ModelPlayers, Scheduler
    from harness.store.live import LiveRecorder

    config = eval_config("mock/tft", opponents=["TFT"], rounds=2, replicates=100_000)
    writer = RunWriter.create(tmp_path, "lazy")
    stop = StopFlag()
    pulled = 0

    def plans():  # type: ignore[no-untyped-def]
        nonlocal pulled
        for plan in iter_games(config):
            pulled += 1
            if pulled == 50:
                stop.set("enough")
            yield plan

    calls = CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES))
    scheduler = Scheduler(recorder=LiveRecorder(writer), calls=calls, players=ModelPlayers(LimiterRegistry()),
                          run_seed=0, stop=stop, progress=Progress(games_total=100_000), workers=8)  # fmt: skip
    await scheduler.run(plans())
    assert 50 <= pulled <= 50 + 8
    assert writer.con.execute("select count(*) from games").fetchone()[0] == pulled
    writer.close()


def test_a_results_file_of_schema_1_is_migrated_when_read(tmp_path: Path) -> None:
    """A file written by PDBench at schema 1 (tests/fixtures/schema_v1) is upgraded in place when read:
    every row kept, the new columns filled as schema 1 meant them, the views recreated."""
    import gzip

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "schema_v1"
    for name in ("schema_v1_eval", "schema_v1_tournament"):
        with gzip.open(fixtures / f"{name}.duckdb.gz") as src, open(tmp_path / f"{name}.duckdb", "wb") as dst:
            shutil.copyfileobj(src, dst)
    before = duckdb.connect(str(tmp_path / "schema_v1_eval.duckdb"), read_only=True)
    counts = {t: before.execute(f"SELECT count(*) FROM {t}").fetchone() for t in ("games", "rounds", "calls")}
    assert before.execute("SELECT value FROM pdbench_meta WHERE key = 'schema_version'").fetchone() == ("1",)
    before.close()
    with Catalog(tmp_path) as cat:
        assert cat.skipped == []
        assert sorted(cat.query("SELECT run_id FROM runs")[1]) == [("schema_v1_eval",), ("schema_v1_tournament",)]
        for table, n in counts.items():
            assert cat.query(f"SELECT count(*) FROM {table} WHERE run_id = 'schema_v1_eval'")[1] == [n]
        assert cat.query("SELECT DISTINCT purpose, option_order FROM calls")[1] == [("move", None)]
        assert cat.query("SELECT count(*) FROM comprehension")[1] == [(0,)]  # the table exists, empty
        assert cat.query("SELECT count(*) FROM comprehension_accuracy")[1] == [(0,)]
        assert cat.query("SELECT count(*) FROM player_metrics WHERE run_id = 'schema_v1_eval'")[1] == [(8,)]
    after = duckdb.connect(str(tmp_path / "schema_v1_eval.duckdb"), read_only=True)
    meta = dict(after.execute("SELECT key, value FROM pdbench_meta").fetchall())
    assert meta == {"schema_version": str(SCHEMA_VERSION), "migrated_from": "1"}
    columns = [r[0] for r in after.execute("DESCRIBE comprehension").fetchall()]  # written out by the migration
    assert columns == ["run_id", "game_id", "round", "player", "question", "kind", "expected", "answer", "correct",
                       "attempt"]  # fmt: skip


def test_a_schema_1_file_reopened_for_resume_gets_exactly_the_tables_a_new_file_has(tmp_path: Path) -> None:
    """The other normal way a file is opened, ``RunWriter.reopen`` (what ``pdbench resume`` does), migrates a
    schema-1 file too, and the written-out migrations give every data table the columns, types, defaults and
    nullability that a file created by this version has (compared with ``DESCRIBE``, not with the DDL)."""
    import gzip

    from harness.store import resume
    from harness.store.schema import data_tables

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "schema_v1" / "schema_v1_eval.duckdb.gz"
    old = tmp_path / "old" / "schema_v1_eval.duckdb"
    old.parent.mkdir()
    with gzip.open(fixture) as src, open(old, "wb") as dst:
        shutil.copyfileobj(src, dst)
    fresh = RunWriter.create(tmp_path / "new", "fresh")
    migrated = RunWriter.reopen(old, "schema_v1_eval")
    try:
        for table in data_tables():
            assert (
                migrated.con.execute(f"DESCRIBE {table}").fetchall()
                == fresh.con.execute(f"DESCRIBE {table}").fetchall()
            ), table
        meta = dict(migrated.con.execute("SELECT key, value FROM pdbench_meta").fetchall())
        assert meta == {"schema_version": str(SCHEMA_VERSION), "migrated_from": "1"}
        status, config_json = resume.run_state(migrated)
        assert status == "complete" and json.loads(config_json)["run"]["run_id"] == "schema_v1_eval"
        assert len(resume.finished_game_ids(migrated)) == resume.games_planned(migrated) == 4
    finally:
        fresh.close()
        migrated.close()
