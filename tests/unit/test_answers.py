"""Parse failures and fallback moves per model (``player_parsing``, ``model_parsing``), and the
chosen-move rates of a model that was sometimes unreadable: counted from the raw rows in Python
and compared with the views."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import pytest

from harness.config.presets.duel import duel_config
from harness.config.run_settings import engine_options
from harness.engine.runner import run_experiment
from harness.store.catalog import Catalog
from tests.conftest import write_games
from tests.support.round_rows import unfold_rounds

MODEL = "mock/random?p=0.5&unparseable=0.3&seed=4"


@pytest.fixture
def model_run(results: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model that answers unreadably about 30% of the time, never re-asked (max_retries 0), so each
    unreadable answer is a fallback D, against TFT, two replicates of 40 rounds."""
    monkeypatch.setenv("PDBENCH_CACHE", str(results / "cache.sqlite"))
    agent = {"model": MODEL, "parse": {"max_retries": 0, "on_failure": "defect"}}
    config = duel_config(agent, {"policy": "TFT"}, rounds=40, replicates=2, seed=3)
    run_experiment(config, results_dir=results, run_id="m", engine=engine_options(results))
    return results


@pytest.mark.slow
def test_model_parsing_counts_answers_unreadable_ones_and_fallbacks(model_run: Path) -> None:
    with Catalog(model_run) as cat:
        rows = cat.records("SELECT * FROM model_parsing")
        calls = cat.records("SELECT outcome, round, game_id FROM calls WHERE purpose = 'move'")
        rounds = cat.records("SELECT flagged_a, flagged_b FROM rounds")
    assert len(rows) == 1, "TFT, a strategy, has no row"
    row = rows[0]
    unreadable = sum(c["outcome"] == "unparseable" for c in calls)
    flagged = sum(r["flagged_a"] for r in rounds)
    assert 10 < unreadable < 40  # about 30% of 80 answers
    assert not any(r["flagged_b"] for r in rounds)
    # With no re-ask, every unreadable answer is one fallback round.
    assert flagged == unreadable
    assert (row["player_name"], row["games"], row["requests"], row["answers"]) == (MODEL, 2, 80, 80)
    assert (row["unreadable"], row["fallback_rounds"], row["rounds"]) == (unreadable, flagged, 80)
    assert row["parse_failure_rate"] == pytest.approx(unreadable / 80)
    assert row["fallback_rate"] == pytest.approx(flagged / 80)


def test_the_models_rates_leave_its_fallback_rounds_out(model_run: Path) -> None:
    with Catalog(model_run) as cat:
        metrics = cat.records("SELECT * FROM player_metrics WHERE player = 'a' ORDER BY game_id")
        rounds = cat.records(
            "SELECT game_id, round, intended_a::VARCHAR AS mine, flagged_a, action_b::VARCHAR AS theirs "
            "FROM rounds ORDER BY game_id, round"
        )
    for m in metrics:
        game = [r for r in rounds if r["game_id"] == m["game_id"]]
        mine = [r for r in game if not r["flagged_a"]]
        assert m["rounds_chosen"] == len(mine) and m["fallback_rounds"] == len(game) - len(mine)
        assert m["cooperation_rate"] == pytest.approx(sum(r["mine"] == "C" for r in mine) / len(mine))
        after_d = [cur for prev, cur in itertools.pairwise(game) if prev["theirs"] == "D" and not cur["flagged_a"]]
        assert m["provocations"] == len(after_d)
        assert m["retaliation_rate"] == pytest.approx(sum(r["mine"] == "D" for r in after_d) / len(after_d))


def test_each_seat_and_game_has_its_own_row_and_strategies_none(results: Path) -> None:
    write_games(results, "w", [("CCC", "CCC"), ("CC", "DD")], players=("ALLC", "TFT")).close()
    # Calls written by hand: game 0 has two answers (one unreadable) and a timeout in round 1, game 1 a
    # comprehension question (not a move: not counted) and one answer.
    path = results / "w.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE games SET player_a = 'm/x'")  # seat A stands for a model
        con.executemany(
            "INSERT INTO calls (run_id, game_id, round, player, attempt, provider, model, request_json, outcome, "
            "purpose) VALUES ('w', ?, ?, 'a', ?, 'm', 'x', '{}', ?, ?)",
            [
                (0, 1, 1, "timeout", "move"),
                (0, 1, 2, "unparseable", "move"),
                (0, 1, 3, "ok", "move"),
                (0, 2, 1, "ok", "move"),
                (1, 1, 1, "ok", "comprehension"),
                (1, 1, 2, "ok", "move"),
            ],
        )
        unfold_rounds(con)
        con.execute("UPDATE round_rows SET flagged_a = TRUE WHERE game_id = 1 AND round = 2")
    with Catalog(results) as cat:
        seats = cat.records("SELECT * FROM player_parsing ORDER BY game_id")
        model = cat.records("SELECT * FROM model_parsing")
    assert [(s["game_id"], s["player"], s["requests"], s["answers"], s["unreadable"]) for s in seats] == [
        (0, "a", 4, 3, 1),
        (1, "a", 1, 1, 0),
    ]
    assert [(s["rounds"], s["fallback_rounds"], s["fallback_rate"]) for s in seats] == [(3, 0, 0.0), (2, 1, 0.5)]
    assert len(model) == 1
    m = model[0]
    assert (m["player_name"], m["games"], m["answers"], m["unreadable"]) == ("m/x", 2, 4, 1)
    assert m["parse_failure_rate"] == 0.25 and m["fallback_rate"] == pytest.approx(1 / 5)


def test_a_schema_1_file_gets_the_new_views_when_migrated(tmp_path: Path) -> None:
    import gzip
    import shutil

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "schema_v1" / "schema_v1_eval.duckdb.gz"
    with gzip.open(fixture) as src, open(tmp_path / "old.duckdb", "wb") as dst:
        shutil.copyfileobj(src, dst)
    with Catalog(tmp_path) as cat:
        assert cat.skipped == []
        calls = cat.records("SELECT count(*) FILTER (WHERE outcome IN ('ok', 'unparseable')) AS answers, "
                            "count(*) FILTER (WHERE outcome = 'unparseable') AS unreadable FROM calls")[0]  # fmt: skip
        model = cat.records("SELECT * FROM model_parsing")
        profile = cat.records("SELECT count(*) AS n, count(nice) AS nice FROM behaviour_profile")[0]
    assert (
        sum(m["answers"] for m in model) == calls["answers"]
        and sum(m["unreadable"] for m in model) == calls["unreadable"]
    )
    assert profile["n"] == 8 and profile["nice"] == 8
    # The file itself holds the same views (opened on its own with duckdb, it answers the same queries).
    with duckdb.connect(str(tmp_path / "old.duckdb"), read_only=True) as con:
        names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert {"behaviour_profile", "per_game_strategy_fit", "per_game_best_fit_shares", "model_parsing"} <= names
        assert con.execute("SELECT count(*) FROM per_game_strategy_fit").fetchone() == (8,)
