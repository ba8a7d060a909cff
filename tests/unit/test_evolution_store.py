"""Evolution runs in the results store: round trips, the views, interrupted runs, and the migration to schema 3."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pytest

from harness.evolution import EvolutionSettings, Fixation, PayoffSource, PayoffTable, Score, Trajectory
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.evolution_writer import EvolutionWriter, list_evolution_runs, read_evolution, settings_config
from harness.store.schema import SCHEMA_VERSION, data_tables
from harness.store.writer import RunWriter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "schema_v2"
GEOMETRIC = {"type": "geometric", "stop_prob": 0.25, "max_rounds": 30}

# A hand-made population of 10 over five generations: ALLD takes over at generation 4.
COUNTS = np.array([[4, 3, 3], [3, 5, 2], [1, 8, 1], [1, 9, 0], [0, 10, 0], [0, 10, 0]], dtype=np.int64)
PLAYERS = ("TFT", "ALLD", "GTFT(generous_prob=0.3)")
VALUES = np.array([[600.0, 199.0, 600.0], [204.0, 200.0, 380.5], [600.0, 120.25, 600.0]])
MATCHES = np.array([[1, 1, 5], [1, 1, 5], [5, 5, 5]], dtype=np.int64)


def _settings(**over: object) -> EvolutionSettings:
    base: dict[str, object] = {"players": ["TFT", "ALLD", "GTFT(p=0.3)"], "counts": [4, 3, 3], "generations": 5,
                               "noise": 0.05, "seed": 7}  # fmt: skip
    return EvolutionSettings(**{**base, **over})


def _trajectory(population: np.ndarray, size: int | None, fixation: Fixation | None) -> Trajectory:
    table = PayoffTable(PLAYERS, VALUES, MATCHES, PayoffSource.estimated, replicates=5)
    return Trajectory(PLAYERS, population, size, fixation, table)


def _write(results: Path, run_id: str, settings: EvolutionSettings, traj: Trajectory, **kw: object) -> None:
    with EvolutionWriter.create(results, run_id, settings, **kw) as writer:  # type: ignore[arg-type]
        for generation, row in enumerate(traj.population):
            view = row.view()
            view.setflags(write=False)  # evolve hands over read-only rows
            writer.on_generation(generation, view)
        writer.finish(RunStatus.COMPLETE, trajectory=traj)


def test_a_stored_run_reads_back_as_the_same_trajectory(results: Path) -> None:
    settings = _settings(payoff_mode="estimated", replicates=5)
    traj = _trajectory(COUNTS, 10, Fixation(4, "ALLD"))
    _write(results, "evo", settings, traj)
    run, back = read_evolution(results, "evo")
    assert run.status == RunStatus.COMPLETE and run.settings == settings and run.generations == 5
    assert back.players == PLAYERS and back.size == 10 and back.fixation == Fixation(4, "ALLD")
    assert back.population.dtype == np.int64 and np.array_equal(back.population, COUNTS)
    assert np.array_equal(back.payoffs.values, VALUES) and np.array_equal(back.payoffs.matches, MATCHES)
    assert back.payoffs.source == PayoffSource.estimated and back.payoffs.replicates == 5
    assert back.final_shares() == {"TFT": 0.0, "ALLD": 1.0, "GTFT(generous_prob=0.3)": 0.0}


def test_replicator_shares_are_stored_exactly(results: Path) -> None:
    settings = _settings(dynamics="replicator", counts=None, shares=[0.5, 0.25, 0.25], population=None)
    rng = np.random.default_rng(3)
    raw = rng.random((7, 3))
    shares = raw / raw.sum(axis=1, keepdims=True)  # floats with every bit used
    _write(results, "rep", settings, _trajectory(shares, None, None))
    run, back = read_evolution(results, "rep")
    assert back.size is None and back.fixation is None and run.fixation is None
    assert back.population.dtype == np.float64 and np.array_equal(back.population, shares)
    with Catalog(results) as cat:
        _, rows = cat.query("SELECT count(*), count(count), count(share) FROM population")
        assert rows == [(21, 0, 21)]


def test_population_shares_and_time_to_fixation_views(results: Path) -> None:
    _write(results, "fixes", _settings(), _trajectory(COUNTS, 10, Fixation(4, "ALLD")))
    never = COUNTS[:3]
    _write(results, "open", _settings(seed=8), _trajectory(never, 10, None))
    with Catalog(results) as cat:
        rows = cat.query(
            "SELECT generation, player, count, share FROM population_shares WHERE run_id = 'fixes' "
            "AND generation = 2 ORDER BY player"
        )[1]
        # generation 2 holds 1, 8, 1 of 10 individuals
        assert rows == [(2, "ALLD", 8, 0.8), (2, "GTFT(generous_prob=0.3)", 1, 0.1), (2, "TFT", 1, 0.1)]
        assert cat.query("SELECT run_id, player, generation FROM time_to_fixation ORDER BY run_id")[1] == [
            ("fixes", "ALLD", 4)
        ]
        sums = cat.query("SELECT DISTINCT round(sum(share), 12) FROM population_shares GROUP BY run_id, generation")
        assert sums[1] == [(1.0,)]


def test_every_fixation_event_is_kept_and_the_view_gives_the_first(results: Path) -> None:
    """With mutation a fixed population can be left and fixed again: each arrival is an event."""
    counts = np.array([[5, 5], [0, 10], [0, 10], [1, 9], [0, 10], [2, 8], [10, 0]], dtype=np.int64)
    settings = EvolutionSettings(players=["TFT", "ALLD"], counts=[5, 5], generations=6, mutation=0.1)
    table = PayoffTable(("TFT", "ALLD"), np.ones((2, 2)), np.ones((2, 2), dtype=np.int64), PayoffSource.played_once)
    traj = Trajectory(("TFT", "ALLD"), counts, 10, Fixation(1, "ALLD"), table)
    with EvolutionWriter.create(results, "mut", settings) as writer:
        for g, row in enumerate(counts):
            writer.on_generation(g, row)
        writer.finish(RunStatus.COMPLETE, trajectory=traj)
    with Catalog(results) as cat:
        assert cat.query("SELECT generation, player FROM fixation ORDER BY generation")[1] == [
            (1, "ALLD"), (4, "ALLD"), (6, "TFT")
        ]  # fmt: skip
        assert cat.query("SELECT player, generation FROM time_to_fixation")[1] == [("ALLD", 1)]
    assert read_evolution(results, "mut")[1].fixation == Fixation(1, "ALLD")


def test_an_interrupted_run_keeps_the_generations_it_played(results: Path) -> None:
    """A run that stops (Ctrl-C) ends interrupted with the generations it played, its table unknown."""
    settings = _settings()
    writer = EvolutionWriter.create(results, "cut", settings)
    for g in range(3):
        writer.on_generation(g, COUNTS[g])
    writer.finish(RunStatus.INTERRUPTED, "stopped by Ctrl-C")
    writer.close()
    run, back = read_evolution(results, "cut")
    assert run.status == RunStatus.INTERRUPTED and run.error == "stopped by Ctrl-C" and run.generations == 2
    assert np.array_equal(back.population, COUNTS[:3]) and back.fixation is None
    assert back.payoffs.source == PayoffSource.per_generation and np.isnan(back.payoffs.values).all()
    assert not back.payoffs.matches.any()


@pytest.mark.slow
def test_generations_are_committed_as_they_come(results: Path) -> None:
    """A process killed mid-run (no finish, no close) leaves the generations flushed before the kill."""
    script = textwrap.dedent(f"""
        import os, numpy as np
        from pathlib import Path
        import harness.store.evolution_writer as store
        from harness.evolution import EvolutionSettings
        store.FLUSH_SECONDS = 0.0
        settings = EvolutionSettings(players=["TFT", "ALLD"], counts=[3, 2], generations=50, seed=1)
        writer = store.EvolutionWriter.create(Path({str(results)!r}), "killed", settings)
        for g, row in enumerate([[3, 2], [2, 3], [1, 4], [2, 3]]):
            writer.on_generation(g, np.array(row))
        os._exit(9)
    """)
    assert subprocess.run([sys.executable, "-c", script], check=False).returncode == 9
    run, back = read_evolution(results, "killed")
    assert run.status == RunStatus.CRASHED  # its file says running, but no process holds it (issue 19, point 10)
    assert back.population.tolist() == [[3, 2], [2, 3], [1, 4], [2, 3]]


@pytest.mark.slow
def test_the_run_row_holds_the_resolved_settings_and_its_tags(results: Path) -> None:
    settings = _settings(players=["TFT", "ALLD", "mock/tft"])
    table = PayoffTable.supplied_by_caller(tuple(settings.players), VALUES)
    traj = Trajectory(tuple(settings.players), COUNTS, 10, Fixation(4, "ALLD"), table)
    with EvolutionWriter.create(results, "sw_a_s0", settings, sweep_id="sw", sweep_cell={"noise": 0.05},
                                payoff_run="sw_payoffs") as writer:  # fmt: skip
        writer.write_payoffs(table, source_run="sw_payoffs")
        for g, row in enumerate(COUNTS):
            writer.on_generation(g, row)
        writer.finish(RunStatus.COMPLETE, trajectory=traj)  # the table is written once
    _write(results, "other", _settings(seed=9), _trajectory(COUNTS, 10, Fixation(4, "ALLD")))
    with Catalog(results) as cat:
        kind, config = cat.query("SELECT kind, config_json FROM runs WHERE run_id = 'sw_a_s0'")[1][0]
        assert kind == "evolution"
        stored = json.loads(config)
        assert stored["sweep_id"] == "sw" and stored["sweep_cell"] == {"noise": 0.05}
        assert stored["payoff_run"] == "sw_payoffs" and stored["players"] == ["TFT", "ALLD", "mock/tft"]
        assert stored["noise"] == 0.05 and stored["fitness"] == "linear" and stored["k"] == 1  # defaults filled
        assert cat.query("SELECT DISTINCT source, source_run FROM payoff_table WHERE run_id = 'sw_a_s0'")[1] == [
            ("supplied", "sw_payoffs")
        ]
        assert cat.query("SELECT count(*) FROM payoff_table WHERE run_id = 'sw_a_s0'")[1] == [(9,)]
    assert EvolutionSettings.model_validate(settings_config(settings)) == settings
    assert [r.run_id for r in list_evolution_runs(results, sweep_id="sw")] == ["sw_a_s0"]
    both = {r.run_id: r for r in list_evolution_runs(results)}
    assert set(both) == {"sw_a_s0", "other"} and both["other"].sweep_id is None
    assert both["sw_a_s0"].payoff_run == "sw_payoffs" and both["sw_a_s0"].fixation == Fixation(4, "ALLD")


def test_reading_a_run_that_is_not_an_evolution_run_says_so(results: Path) -> None:
    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment
    from harness.errors import RunNotFoundError

    run_experiment(tournament_config(["TFT", "ALLD"], rounds=3, replicates=1, seed=1), results_dir=results, run_id="t")
    with pytest.raises(RunNotFoundError, match="'t' is a tournament run, not an evolution run"):
        read_evolution(results, "t")
    assert list_evolution_runs(results) == []


def _unzip(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with gzip.open(FIXTURES / f"{name}.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def test_a_schema_2_file_gets_exactly_the_tables_a_new_file_has(tmp_path: Path) -> None:
    """A file written at schema 2 (tests/fixtures/schema_v2) reopened for resume is migrated by the written-out
    CREATE TABLE statements of schema 3: every data table has the columns, types, defaults, nullability and keys
    of a file created by this version (compared with DESCRIBE, not with the DDL)."""
    old = _unzip("schema_v2_eval.duckdb", tmp_path / "old")
    before = duckdb.connect(str(old), read_only=True)
    assert before.execute("SELECT value FROM pdbench_meta WHERE key = 'schema_version'").fetchone() == ("2",)
    counts = {t: before.execute(f"SELECT count(*) FROM {t}").fetchone() for t in ("games", "rounds", "calls",
                                                                                   "comprehension")}  # fmt: skip
    before.close()
    fresh = RunWriter.create(tmp_path / "new", "fresh")
    migrated = RunWriter.reopen(old, "schema_v2_eval")
    try:
        for table in data_tables():
            assert (
                migrated.con.execute(f"DESCRIBE {table}").fetchall()
                == fresh.con.execute(f"DESCRIBE {table}").fetchall()
            ), table
        keys = "SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints() ORDER BY ALL"
        assert migrated.con.execute(keys).fetchall() == fresh.con.execute(keys).fetchall()
        meta = dict(migrated.con.execute("SELECT key, value FROM pdbench_meta").fetchall())
        assert meta == {"schema_version": str(SCHEMA_VERSION), "migrated_from": "2"}
        for table, n in counts.items():
            assert migrated.con.execute(f"SELECT count(*) FROM {table}").fetchone() == n, table
    finally:
        fresh.close()
        migrated.close()


@pytest.mark.slow
def test_a_folder_of_schema_2_files_is_migrated_when_read_and_sits_beside_evolution_runs(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    _unzip("schema_v2_eval.duckdb", folder)
    _unzip("schema_v2_tournament.duckdb", folder)
    _write(folder, "evo", _settings(), _trajectory(COUNTS, 10, Fixation(4, "ALLD")))
    with Catalog(folder) as cat:
        assert cat.skipped == []
        assert cat.query("SELECT run_id, kind FROM runs ORDER BY run_id")[1] == [
            ("evo", "evolution"), ("schema_v2_eval", "eval"), ("schema_v2_tournament", "tournament")
        ]  # fmt: skip
        assert cat.query("SELECT count(*) FROM population_shares")[1] == [(18,)]
        assert cat.query("SELECT count(*) FROM comprehension WHERE run_id = 'schema_v2_eval'")[1][0][0] > 0
        assert cat.query("SELECT count(*) FROM tournament WHERE run_id = 'schema_v2_tournament'")[1] == [(3,)]
    assert [r.run_id for r in list_evolution_runs(folder)] == ["evo"]


@pytest.mark.parametrize(
    "over",
    [
        {"dynamics": "generational", "noise": 0.05, "mutation": 0.01},
        {"dynamics": "moran", "generations": 400},
        {"dynamics": "trust", "k": 2, "payoff_mode": "estimated", "replicates": 4},
        {"dynamics": "replicator", "counts": None, "shares": [0.5, 0.25, 0.25], "generations": 20},
        {"dynamics": "squared_share", "counts": [2, 2, 2], "generations": 4, "horizon": GEOMETRIC},
    ],
    ids=["generational", "moran", "trust", "replicator", "squared_share"],
)
def test_every_dynamics_reads_back_as_evolve_played_it(results: Path, over: dict[str, object]) -> None:
    from harness.engine.evolution.run import run_evolution
    from harness.evolution import evolve

    settings = _settings(**{"generations": 60, **over})
    outcome = run_evolution(settings, results_dir=results, run_id="rt")
    direct = evolve(settings)
    run, back = read_evolution(results, "rt")
    assert outcome.trajectory is not None and run.status == RunStatus.COMPLETE
    assert back.population.dtype == direct.population.dtype
    assert np.array_equal(back.population, direct.population) and back.size == direct.size
    assert back.fixation == direct.fixation and run.fixation == direct.fixation
    assert np.array_equal(back.payoffs.values, direct.payoffs.values, equal_nan=True)
    assert np.array_equal(back.payoffs.matches, direct.payoffs.matches)
    assert (back.payoffs.source, back.payoffs.replicates) == (direct.payoffs.source, direct.payoffs.replicates)
    assert len(back.phases) == len(direct.phases)
    for stored, played in zip(back.phases, direct.phases, strict=True):
        assert stored.generation == played.generation
        for part in ("points", "rounds", "matches"):
            assert getattr(stored, part).tolist() == getattr(played, part).tolist(), part


def test_a_squared_share_run_stores_what_recomputes_every_update(results: Path) -> None:
    """From the stored rows alone (phase_scores and population, read with SQL), the squared-share rule gives every
    population row after the first; and the last population's phase (no update after it) is stored too."""
    from harness.engine.evolution.run import run_evolution
    from harness.evolution.squared_share import next_counts

    settings = _settings(dynamics="squared_share", counts=[3, 3, 3], generations=4, horizon=GEOMETRIC)
    run_evolution(settings, results_dir=results, run_id="ss")
    with Catalog(results) as cat:
        _, phases = cat.query(
            "SELECT generation, player, points, rounds, matches FROM phase_scores WHERE run_id = 'ss' ORDER BY ALL"
        )
        _, population = cat.query("SELECT generation, player, count FROM population WHERE run_id = 'ss'")
    counts = {(g, p): c for g, p, c in population}
    assert sorted({g for g, *_ in phases}) == [0, 1, 2, 3, 4]  # 5 phases = 4 updates
    for generation in range(4):
        present = {p: counts[(generation, p)] for p in settings.players if counts[(generation, p)] > 0}
        fitness = {p: points / rounds for g, p, points, rounds, _ in phases if g == generation}
        assert set(fitness) == set(present)
        size = sum(present.values())
        assert all(m == n * (size - 1) for g, p, *_, m in phases if g == generation for n in [present[p]])
        after = next_counts(present, fitness)
        assert {p: counts[(generation + 1, p)] for p in settings.players} == {
            p: after.get(p, 0) for p in settings.players
        }


def test_a_run_stored_before_the_score_setting_keeps_its_match_total_meaning(results: Path) -> None:
    # runs stored before the per-round score have no "score" in config_json: they selected on match totals
    settings = _settings(score="match_total", selection=0.001)
    _write(results, "old", settings, _trajectory(COUNTS, 10, Fixation(4, "ALLD")))
    _write(results, "new", _settings(seed=9), _trajectory(COUNTS, 10, Fixation(4, "ALLD")))
    (path,) = results.glob("old*.duckdb")
    with duckdb.connect(str(path)) as con:
        (config,) = con.execute("SELECT config_json FROM runs WHERE run_id = 'old'").fetchone()  # type: ignore[misc]
        stored = json.loads(config)
        del stored["score"]
        con.execute("UPDATE runs SET config_json = ? WHERE run_id = 'old'", [json.dumps(stored)])
    runs = {r.run_id: r for r in list_evolution_runs(results)}
    assert runs["old"].settings.score == Score.match_total and runs["old"].settings == settings
    assert runs["new"].settings.score == Score.per_round  # the default, stored with the run
    run, _ = read_evolution(results, "old")
    assert run.settings.score == Score.match_total
