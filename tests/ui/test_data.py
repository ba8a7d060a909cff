"""The dashboard's data layer: what it reads must be what `pdbench sql` reads."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import resume_run, run_experiment
from harness.errors import StoreError
from harness.states import RunStatus
from harness.store import browse
from harness.store.catalog import Catalog
from harness.ui import data


def _cat(folder: Path, run_id: str) -> Catalog:
    """A one-run catalog that lives as long as the test (closed when collected)."""
    return Catalog(folder, [run_id])


@pytest.mark.slow
def test_runs_are_listed_newest_first_with_players_and_progress(tmp_path: Path) -> None:
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5), results_dir=tmp_path, run_id="older")
    run_experiment(
        tournament_config(["GRIM", "ALLC", "WSLS"], rounds=5, replicates=2), results_dir=tmp_path, run_id="newer"
    )
    folder = browse.list_runs(tmp_path)
    assert [r.run_id for r in folder.runs] == ["newer", "older"]
    newer = folder.runs[0]
    assert newer.players == ["ALLC", "GRIM", "WSLS"]
    assert (newer.games_planned, newer.games_done, newer.status, newer.kind) == (12, 12, "complete", "tournament")
    assert "newer" in newer.label and "ALLC, GRIM, WSLS" in newer.label
    assert browse.list_runs(tmp_path, kind="experiment").runs == []
    assert folder.unreadable == []


def test_an_empty_or_missing_folder_has_no_runs(tmp_path: Path) -> None:
    assert browse.list_runs(tmp_path).runs == []
    assert browse.list_runs(tmp_path / "nope").runs == []
    assert browse.folder_signature(tmp_path / "nope") == ()


@pytest.mark.slow
def test_game_detail_matches_the_sql_views(tmp_path: Path) -> None:
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=6, replicates=2), results_dir=tmp_path, run_id="t")
    conds = browse.conditions(_cat(tmp_path, "t"), "t")
    assert [(c.condition, c.games) for c in conds] == [("TFT_vs_TFT", 2), ("TFT_vs_ALLD", 2), ("ALLD_vs_ALLD", 2)]
    games = browse.games(_cat(tmp_path, "t"), "t", "TFT_vs_ALLD")
    assert [g.replicate for g in games] == [0, 1]
    detail = browse.game_detail(_cat(tmp_path, "t"), "t", games[0].game_id)
    assert [r["action_a"] for r in detail.rounds] == ["C", "D", "D", "D", "D", "D"]
    assert [r["action_b"] for r in detail.rounds] == ["D"] * 6
    assert detail.metrics["a"]["payoff_total"] == 5.0 and detail.metrics["b"]["payoff_total"] == 10.0
    assert not detail.has_calls
    curves = browse.game_curves(_cat(tmp_path, "t"), "t", games[0].game_id)
    a = [c for c in curves if c["player"] == "a"]
    assert [c["cumulative_payoff"] for c in a] == [0, 1, 2, 3, 4, 5]
    assert a[1]["cumulative_cooperation"] == 0.5
    with Catalog(tmp_path) as cat:
        sql = cat.records("select cooperation_rate from cooperation_over_time where run_id='t' and game_id=? "
                          "and player='a' order by round", [games[0].game_id])  # fmt: skip
    assert [c["cumulative_cooperation"] for c in a] == [r["cooperation_rate"] for r in sql]
    with pytest.raises(LookupError):
        browse.game_detail(_cat(tmp_path, "t"), "t", 999)


def test_leaderboard_and_matchups_are_the_tournament_views(tmp_path: Path) -> None:
    run_experiment(tournament_config(["TFT", "ALLD", "ALLC"], rounds=10), results_dir=tmp_path, run_id="t")
    board = browse.leaderboard(_cat(tmp_path, "t"), "t")
    assert [(r["rank"], r["player"]) for r in board] == [(1, "ALLD"), (2, "TFT"), (3, "ALLC")]
    assert board[0]["mean_total"] == pytest.approx((50 + 14) / 2)  # ALLD vs ALLC and TFT; self-play left out
    rows = browse.matchups(_cat(tmp_path, "t"), "t")
    cells = {(m["player"], m["opponent"]): m["mean_payoff_per_round"] for m in rows}
    assert cells[("ALLD", "ALLC")] == 5.0 and cells[("ALLC", "ALLD")] == 0.0 and cells[("TFT", "TFT")] == 3.0


def test_model_calls_are_read_with_their_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.config.presets.duel import duel_config
    from harness.config.run_settings import engine_options

    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    config = duel_config({"model": "mock/tft?unparseable=0.5&seed=3"}, {"policy": "ALLD"}, rounds=4)
    run_experiment(config, results_dir=tmp_path, run_id="m", engine=engine_options(tmp_path))
    detail = browse.game_detail(_cat(tmp_path, "m"), "m", 0)
    assert detail.has_calls
    calls = browse.game_calls(_cat(tmp_path, "m"), "m", 0)
    assert {c["round"] for c in calls} == {1, 2, 3, 4}
    assert all(
        c["messages"][0]["role"] == "system" and c["messages"][-1]["role"] == "user" for c in calls if c["attempt"] == 1
    )
    retried = [c for c in calls if c["attempt"] > 1]
    assert retried, "an unparseable answer is re-asked"
    assert retried[0]["messages"][-2]["role"] == "assistant"  # the unreadable answer, then the correction
    with Catalog(tmp_path) as cat:
        assert len(calls) == cat.query("select count(*) from calls where run_id = 'm'")[1][0][0]


def test_agent_info_for_strategies_models_and_unknown_names() -> None:
    tft = data.agent_info("tft")
    assert (tft.name, tft.emoji, tft.is_model) == ("TFT", "🪞", False) and tft.description
    model = data.agent_info("openai/gpt-4o-mini")
    assert model.is_model and model.emoji == data.MODEL_EMOJI and "openai" in model.description
    assert data.agent_info("someone").emoji == "❔"


def _old_copy(tmp_path: Path, source: Path, version: str) -> Path:
    old = tmp_path / "old.duckdb"
    shutil.copy(source, old)
    con = duckdb.connect(str(old))
    con.execute("update pdbench_meta set value = ? where key = 'schema_version'", [version])
    con.execute("update runs set run_id = 'old'")
    con.close()
    return old


@pytest.mark.slow
def test_files_from_older_and_newer_schemas_are_skipped_with_a_clear_reason(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=3), results_dir=results, run_id="ok")
    old = _old_copy(tmp_path, results / "ok.duckdb", "0")
    shutil.move(old, results / "old.duckdb")
    new = _old_copy(tmp_path, results / "ok.duckdb", "99")
    shutil.move(new, results / "future.duckdb")
    folder = browse.list_runs(results)
    assert [r.run_id for r in folder.runs] == ["ok"]
    reasons = dict(folder.unreadable)
    assert "older PDBench (schema 0" in reasons["old.duckdb"] and "re-run" in reasons["old.duckdb"]
    assert "newer PDBench (schema 99)" in reasons["future.duckdb"]
    assert folder.being_written == frozenset()  # unreadable, but nobody is writing them


def test_resuming_a_file_from_an_older_schema_is_a_clear_error(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=3), results_dir=results, run_id="ok")
    con = duckdb.connect(str(results / "ok.duckdb"))
    con.execute("update pdbench_meta set value = '0' where key = 'schema_version'")
    con.execute("update runs set status = 'interrupted'")
    con.close()
    with pytest.raises(StoreError, match=r"older PDBench.*no upgrade exists"):
        resume_run(results, "ok")


def test_agent_info_reads_a_model_players_stored_spec() -> None:
    """games.params_a/b as stored: the persona sits in prompts.persona; a named player keeps its name."""
    stored = '{"model": "openai/gpt-4o-mini", "name": "bob", "temperature": 0.7, "prompts": {"persona": "cautious"}}'
    bob = data.agent_info("bob", stored)
    assert (bob.name, bob.is_model, bob.model, bob.persona, bob.temperature) == (
        "bob", True, "openai/gpt-4o-mini", "cautious", 0.7)  # fmt: skip
    assert bob.title == "gpt-4o-mini" and "openai" in bob.description
    plain = data.agent_info("mock/tft", {"model": "mock/tft"})
    assert (plain.persona, plain.temperature) == (None, None)
    assert data.agent_info("mock/tft", None).model == "mock/tft"
    assert data.agent_info("TFT", None).model is None and not data.agent_info("TFT", "not json").is_model
    assert data.agent_info("TFT", {"model": "mock/tft", "name": "TFT"}).is_model  # a model may be named like one


def test_round_events_name_each_flipped_or_fallback_move() -> None:
    def row(r: int, a: tuple[str, str, bool], b: tuple[str, str, bool]) -> dict[str, object]:
        return {"round": r, "action_a": a[0], "intended_a": a[1], "flagged_a": a[2],
                "action_b": b[0], "intended_b": b[1], "flagged_b": b[2]}  # fmt: skip

    rounds = [
        row(1, ("C", "C", False), ("D", "D", False)),  # nothing to mark
        row(2, ("D", "C", False), ("D", "D", True)),  # A: noise flipped C to D; B: fallback D
        row(3, ("C", "D", True), ("C", "C", False)),  # A: fallback D, then flipped to C
    ]
    events = data.round_events(rounds, ("mock/tft", "ALLD"))
    assert [(e["round"], e["seat"], e["kind"], e["action"], e["cooperated"]) for e in events] == [
        (2, "A", "noise flip", "D", 0),
        (2, "B", "fallback move", "D", 0),
        (3, "A", "fallback + noise", "C", 1),
    ]
    assert events[0]["what"] == "noise flipped the intended C to D" and events[0]["who"] == "A: mock/tft"
    assert events[2]["what"] == (
        "fallback move D: the model's answer could not be used; noise flipped the intended D to C"
    )
    assert data.rounds_text([4]) == "round 4" and data.rounds_text([4, 9, 12]) == "rounds 4, 9 and 12"
    assert data.rounds_text(list(range(1, 16)), most=3) == "rounds 1, 2, 3 and 12 more"


def test_planned_players_come_from_the_stored_config_before_any_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The players a config plans, with their model and persona, known from the run's start; for a finished run
    they are the players its games name (read here from the games table)."""
    from harness.config.presets.duel import duel_config
    from harness.engine.interrupts import StopFlag

    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    alice = {"model": "mock/tft", "name": "alice", "persona": "cautious"}
    run_experiment(duel_config(alice, {"model": "mock/grim"}, rounds=2), results_dir=tmp_path, run_id="duel")
    stop = StopFlag()
    stop.set("stopped before the first game")
    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=3), results_dir=tmp_path, run_id="cut", stop=stop)
    with Catalog(tmp_path) as cat:
        planned = browse.planned_players(cat)
        labels = {r[0] for r in cat.query("select player_a from games where run_id = 'duel' union "
                                          "select player_b from games where run_id = 'duel'")[1]}  # fmt: skip
        assert cat.query("select count(*) from games where run_id = 'cut'")[1][0][0] == 0
        assert browse.planned_players(cat, ["cut"]) == {"cut": planned["cut"]}
    assert planned["duel"] == [browse.PlannedPlayer("alice", "mock/tft", "cautious"),
                               browse.PlannedPlayer("mock/grim", "mock/grim", None)]  # fmt: skip
    assert {p.label for p in planned["duel"]} == labels
    assert [p.label for p in planned["cut"]] == ["TFT", "ALLD", "GRIM"]  # plan order, no game played
    assert all(p.model is None and p.persona is None for p in planned["cut"])


def _run(run_id: str, kind: str, status: RunStatus, done: int, planned: int) -> browse.RunRow:
    return browse.RunRow(run_id, kind, status, datetime(2026, 11, 23, 10, 45), planned, done, [])


def test_run_labels_name_the_models_their_personas_and_progress() -> None:
    gpt = browse.PlannedPlayer("openai/gpt-4o-mini", "openai/gpt-4o-mini", "cautious")
    alld, tft = browse.PlannedPlayer("ALLD", None, None), browse.PlannedPlayer("TFT", None, None)
    running = _run("eval_20261123_104500", "eval", RunStatus.RUNNING, 12, 40)
    assert data.run_label(running, [gpt, alld, tft]) == (
        "eval_20261123_104500 · openai/gpt-4o-mini · persona cautious · running 12/40 · 2026-11-23 10:45"
    )
    plain = browse.PlannedPlayer("mock/tft", "mock/tft", None)
    duel = _run("mine", "experiment", RunStatus.COMPLETE, 3, 3)
    assert (
        data.run_label(duel, [plain, alld])
        == "mine · mock/tft · no persona · complete 3/3 · experiment · 2026-11-23 10:45"
    )
    assert "personas cautious, none" in data.run_label(duel, [gpt, plain])
    many = [browse.PlannedPlayer(n, None, None) for n in ("ALLC", "ALLD", "TFT", "GRIM", "WSLS")]
    stopped = _run("tournament_x", "tournament", RunStatus.INTERRUPTED, 0, 15)
    assert (
        data.run_label(stopped, many) == "tournament_x · ALLC, ALLD, TFT, GRIM +1 · interrupted 0/15 · 2026-11-23 10:45"
    )


def test_a_picker_opens_on_the_newest_run_with_a_finished_game() -> None:
    runs = [
        _run("newest", "eval", RunStatus.INTERRUPTED, 0, 9),
        _run("running", "eval", RunStatus.RUNNING, 0, 9),
        _run("middle", "eval", RunStatus.INTERRUPTED, 4, 9),
        _run("oldest", "eval", RunStatus.COMPLETE, 9, 9),
    ]
    assert data.newest_with_results(runs) == "middle"
    assert data.newest_with_results(runs[:2]) == "newest"  # none has results: the newest
    assert data.newest_with_results([]) is None


def test_a_game_still_playing_shows_the_rounds_it_has_so_far(tmp_path: Path) -> None:
    """``games.rounds_played`` is written when a game ends: a game still playing is counted by its recorded rounds
    (the issue saw "This game is running after 0 rounds" above a 5-round timeline)."""
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5, replicates=1), results_dir=tmp_path, run_id="t")
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:  # as the writer leaves a game mid-play
        (game_id,) = con.execute("SELECT game_id FROM games WHERE condition = 'TFT_vs_ALLD'").fetchone()
        con.execute("UPDATE games SET status = 'running', rounds_played = 0 WHERE game_id = ?", [game_id])
    (game,) = browse.games(_cat(tmp_path, "t"), "t", "TFT_vs_ALLD")
    assert (game.status, game.rounds_played) == ("running", 5) and "5 rounds" in game.label
    detail = browse.game_detail(_cat(tmp_path, "t"), "t", game_id)
    assert detail.game["rounds_played"] == 5 == len(detail.rounds)


def test_the_payoff_matrices_a_run_played_are_read_from_its_stored_config(tmp_path: Path) -> None:
    """The run's matrix, then each condition's own, each once; the run's is left out when every condition sets
    its own (it was never played)."""
    from harness.config.loading import parse_experiment
    from harness.game.rules import PayoffMatrix

    trust = PayoffMatrix.from_rstp(R=2, S=-1, T=3, P=0)
    both = [
        {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLD"}, "game": {"payoff_matrix": trust.to_mapping()}}
    ]
    for run_id, conditions in (
        ("mixed", [*both, {"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "ALLC"}}, {**both[0], "name": "again"}]),
        ("all_own", both),
    ):
        data = {"horizon": {"type": "fixed", "n_rounds": 2}, "experiment": {"conditions": conditions}}
        run_experiment(parse_experiment(data), results_dir=tmp_path, run_id=run_id)
    with Catalog(tmp_path) as cat:
        assert browse.payoff_matrices(cat, "mixed") == [PayoffMatrix(), trust]
        assert browse.payoff_matrices(cat, "all_own") == [trust]
        assert browse.payoff_matrices(cat, "nope") == []
