"""The ordered list of migrations is the schema's one source: a new results file is every migration applied in
order, and a file written by an older PDBench, once migrated, is the same file in every respect users see:
its tables and views (DESCRIBE: columns, types, nullability, defaults), its constraints, its types and the
views' definitions."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import duckdb
import pytest

from harness.store.schema import MIGRATIONS, SCHEMA_VERSION, data_tables, migrate
from harness.store.writer import RunWriter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OLD_FILES = [
    ("schema_v1", "schema_v1_eval"),
    ("schema_v1", "schema_v1_tournament"),
    ("schema_v2", "schema_v2_eval"),
    ("schema_v2", "schema_v2_tournament"),
    ("schema_v3", "schema_v3_eval"),
    ("schema_v3", "schema_v3_noisy"),
    ("schema_v3", "schema_v3_tournament"),
    ("schema_v4", "schema_v4_eval"),
    ("schema_v4", "schema_v4_tournament"),
    ("schema_v5", "schema_v5_evolution"),
    ("schema_v6", "schema_v6_eval"),
    ("schema_v7", "schema_v7_eval"),
    ("schema_v7", "schema_v7_tournament"),
]


def shape(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Everything about a file's schema that a user's SQL can see."""
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()]
    views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                                       "ORDER BY view_name").fetchall()]  # fmt: skip
    return {
        "tables": tables,
        "views": views,
        "describe": {name: con.execute(f"DESCRIBE {name}").fetchall() for name in tables + views},
        "constraints": con.execute(
            "SELECT table_name, constraint_type, constraint_column_names, expression "
            "FROM duckdb_constraints() ORDER BY ALL"
        ).fetchall(),
        "types": con.execute(
            "SELECT type_name, logical_type, labels FROM duckdb_types() WHERE NOT internal ORDER BY ALL"
        ).fetchall(),
        "view_sql": con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
        ).fetchall(),
    }


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    writer = RunWriter.create(tmp_path_factory.mktemp("fresh"), "fresh")
    try:
        return shape(writer.con)
    finally:
        writer.close()


@pytest.mark.parametrize(("folder", "name"), OLD_FILES)
def test_an_older_file_migrated_is_a_new_file(tmp_path: Path, fresh: dict[str, object], folder: str, name: str) -> None:
    path = tmp_path / f"{name}.duckdb"
    with gzip.open(FIXTURES / folder / f"{name}.duckdb.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with duckdb.connect(str(path)) as con:
        version = int(con.execute("SELECT value FROM pdbench_meta WHERE key = 'schema_version'").fetchone()[0])
        assert version == int(folder[-1]) < SCHEMA_VERSION
        assert migrate(con, str(path)) is True
        migrated = shape(con)
    for part, value in fresh.items():
        assert migrated[part] == value, part


def test_a_new_file_is_every_migration_applied_and_nothing_else(fresh: dict[str, object]) -> None:
    assert len(MIGRATIONS) == SCHEMA_VERSION
    assert fresh["tables"] == sorted(["pdbench_meta", *data_tables()])
    assert "rounds" in fresh["views"] and "rounds" not in fresh["tables"]
    assert {"round_rows", "game_moves"} <= set(fresh["tables"])  # type: ignore[operator]


def test_the_tables_of_each_version_are_read_from_its_migrations() -> None:
    assert data_tables(1) == ("runs", "games", "rounds", "calls", "superseded_calls")
    assert data_tables(3)[-4:] == ("comprehension", "population", "fixation", "payoff_table")
    assert "rounds" not in data_tables() and {"round_rows", "game_moves"} <= set(data_tables())
    assert data_tables(6)[-1] == "phase_scores" and "phase_scores" not in data_tables(5)


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_the_tables_read_from_the_migrations_are_those_applying_them_makes(version: int) -> None:
    con = duckdb.connect(":memory:")
    for step in MIGRATIONS[:version]:
        for statement in step.statements:
            con.execute(statement)
    made = {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()
    assert sorted(data_tables(version)) == sorted(made - {"pdbench_meta"})


def test_the_rounds_view_has_the_columns_and_types_of_the_rounds_table_it_replaced(
    fresh: dict[str, object],
) -> None:
    describe = fresh["describe"]
    assert isinstance(describe, dict)
    as_view = [(c, t) for c, t, *_ in describe["rounds"]]
    as_table = [(c, t) for c, t, *_ in describe["round_rows"]]  # the table of schema 1 to 3, renamed
    assert as_view == as_table


def _migrated_copy(tmp_path: Path, folder: str, name: str) -> Path:
    path = tmp_path / f"{name}.duckdb"
    with gzip.open(FIXTURES / folder / f"{name}.duckdb.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def test_a_v4_model_run_keeps_its_meaning_and_every_round_names_its_reader(tmp_path: Path) -> None:
    """Schema 5 adds what read each call's move and how the reply was asked for. A file written before it
    holds only free-text moves read by the parser: its move calls that gave a move read as 'parser', the
    format is unknown (NULL), every other row is unchanged, and each model round's reader, derived here in
    Python from the raw rows, is what ``move_readers`` says: fallback when flagged, re-ask when an earlier
    answer of the round was unreadable, else parser."""
    path = _migrated_copy(tmp_path, "schema_v4", "schema_v4_eval")
    with duckdb.connect(str(path)) as con:
        before = con.execute("SELECT * FROM calls ORDER BY ALL").fetchall()
        rounds_before = con.execute("SELECT * FROM rounds ORDER BY ALL").fetchall()
        assert migrate(con, str(path)) is True
        old_columns = len(before[0])
        after = con.execute("SELECT * FROM calls ORDER BY ALL").fetchall()
        assert [row[:old_columns] for row in after] == before  # the old columns keep their values
        rounds_after = con.execute("SELECT * FROM rounds ORDER BY ALL").fetchall()
        assert [row[: len(rounds_before[0])] for row in rounds_after] == rounds_before  # (schema 8 adds observed_*)
        calls = con.execute(
            "SELECT game_id, round, player, attempt, purpose, outcome, action, answer_format, reader FROM calls"
        ).fetchall()
        assert all(fmt is None for *_, fmt, _ in calls)
        assert all(
            (reader == "parser") == (purpose == "move" and action is not None)
            for *_, purpose, _, action, _, reader in calls
        )
        expected = {}
        flags = con.execute("SELECT game_id, round, flagged_a, flagged_b FROM round_rows").fetchall()
        seats = {(g, p) for g, _, p, _, purpose, *_ in calls if purpose == "move"}
        for game, rnd, flagged_a, flagged_b in flags:
            for seat, flagged in (("a", flagged_a), ("b", flagged_b)):
                if (game, seat) not in seats:
                    continue
                mine = [c for c in calls if c[:3] == (game, rnd, seat) and c[4] == "move"]
                reasked = any(c[5] == "unparseable" for c in mine)
                expected[(game, rnd, seat)] = "fallback" if flagged else "re-ask" if reasked else "parser"
        got = {
            (g, r, p): reader
            for g, r, p, reader in con.execute("SELECT game_id, round, player, reader FROM move_readers").fetchall()
        }
        assert got == expected
        assert {"parser", "re-ask"} <= set(got.values())  # the fixture has both kinds of rounds
        totals = con.execute(
            "SELECT SUM(rounds), SUM(parser_rounds + structured_rounds + judge_rounds + reask_rounds + fallback_rounds)"
            " FROM model_parsing"
        ).fetchone()
        assert totals is not None and totals[0] == totals[1] == len(expected)


def test_a_v5_evolution_run_keeps_its_meaning_and_has_no_phase_scores(tmp_path: Path) -> None:
    """Schema 6 adds the squared_share dynamics' phase tallies. A file written before it holds no such run: its
    evolution run keeps every population row, fixation and payoff cell, and reads back with no phases."""
    from harness.store.evolution_writer import read_evolution

    path = _migrated_copy(tmp_path, "schema_v5", "schema_v5_evolution")
    tables = ("runs", "population", "fixation", "payoff_table")
    with duckdb.connect(str(path)) as con:
        before = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
        assert migrate(con, str(path)) is True
        after = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
        assert con.execute("SELECT count(*) FROM phase_scores").fetchone() == (0,)
    assert before == after and len(before["population"]) == 7 * 4
    run, trajectory = read_evolution(tmp_path, "schema_v5_evolution")
    assert trajectory.phases == () and run.generations == 6
    assert trajectory.population[0].tolist() == [3, 3, 3, 3]


def test_a_v6_model_run_keeps_its_meaning_and_its_calls_say_nothing_of_a_prompt_cache(tmp_path: Path) -> None:
    """Schema 7 adds the provider's prompt-cache tokens, the prompt layout and the service tier to every call. A
    file written before it recorded none of them: every old column keeps its values, and the four new ones are
    NULL (unknown), never 0 (which would claim the provider read nothing from its cache)."""
    path = _migrated_copy(tmp_path, "schema_v6", "schema_v6_eval")
    new = ("cached_input_tokens", "cache_write_tokens", "prompt_layout", "service_tier")
    with duckdb.connect(str(path)) as con:
        before = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("calls", "superseded_calls")}
        assert migrate(con, str(path)) is True
        for table, rows in before.items():
            columns = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()]
            assert columns[-4:] == list(new)
            after = con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
            assert [row[:-4] for row in after] == rows
            assert all(row[-4:] == (None, None, None, None) for row in after)
        assert len(before["calls"]) > 0


@pytest.mark.parametrize("name", ["schema_v7_eval", "schema_v7_tournament"])
def test_a_v7_run_keeps_its_meaning_and_every_player_saw_the_moves_as_played(tmp_path: Path, name: str) -> None:
    """Schema 8 records observation noise: per game its probability, per round what each player saw of the other's
    move. A file written before it had none: its games get observation noise 0, each round's observations are the
    moves as played, and every metric (retaliation, forgiveness, the memory-one counts) is what it was."""
    path = _migrated_copy(tmp_path, "schema_v7", name)
    metrics = "SELECT * EXCLUDE (player_label, opponent_label) FROM player_metrics ORDER BY run_id, game_id, player"
    memory_one = "SELECT * FROM memory_one ORDER BY run_id, game_id, player"
    with duckdb.connect(str(path)) as con:
        before = {q: con.execute(q).fetchall() for q in (metrics, memory_one)}
        rounds = con.execute("SELECT * FROM rounds ORDER BY run_id, game_id, round").fetchall()
        assert migrate(con, str(path)) is True
        assert {q: con.execute(q).fetchall() for q in (metrics, memory_one)} == before
        assert con.execute("SELECT DISTINCT observation_noise FROM games").fetchall() == [(0.0,)]
        after = con.execute("SELECT * FROM rounds ORDER BY run_id, game_id, round").fetchall()
        assert [row[:-2] for row in after] == rounds
        assert all(row[-2:] == (row[4], row[3]) for row in after)  # observed_a = action_b, observed_b = action_a
        assert any(row[3] != row[5] for row in after)  # execution noise flipped some moves
