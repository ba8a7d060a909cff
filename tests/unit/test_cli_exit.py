"""The exit code every playing command ends with (harness.cli.play.finish, harness.cli.show): 130 for a run
that did not complete, 1 for an eval whose every game failed, 0 otherwise; and what resume prints per kind."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import typer

from harness.cli.play import finish
from harness.cli.show import show_for, show_leaderboard, show_report, show_scorecard
from harness.engine.runner import RunResult
from harness.states import RunStatus
from harness.store.catalog import open_run
from tests.conftest import write_games


def _result(results: Path, status: RunStatus) -> RunResult:
    return RunResult("r", results / "r.duckdb", status, games_planned=2, games_done=2, rounds=4, seconds=0.1)


@pytest.mark.parametrize(
    ("status", "code", "exits"),
    [
        (RunStatus.COMPLETE, 0, None),
        (RunStatus.COMPLETE, 1, 1),
        (RunStatus.INTERRUPTED, 0, 130),
        (RunStatus.INTERRUPTED, 1, 130),  # a run that can be resumed says so, whatever its games did
        (RunStatus.FAILED, 0, 130),
    ],
)
def test_finish_exits_130_unless_complete_then_with_the_shown_code(
    tmp_path: Path, status: RunStatus, code: int, exits: int | None
) -> None:
    if exits is None:
        finish(_result(tmp_path, status), code)
        return
    with pytest.raises(typer.Exit) as exited:
        finish(_result(tmp_path, status), code)
    assert exited.value.exit_code == exits


def test_a_scorecard_without_a_complete_game_ends_in_exit_code_1(results: Path) -> None:
    write_games(results, "r", [("CC", "CD"), ("DD", "DC")]).close()
    result = _result(results, RunStatus.COMPLETE)
    with open_run(results, "r") as cat:
        assert show_scorecard(cat, result) == 0
    with duckdb.connect(str(results / "r.duckdb")) as con:
        con.execute("UPDATE games SET status = 'failed', error = 'HTTP 400'")
    with open_run(results, "r") as cat:
        assert show_scorecard(cat, result) == 1


def test_resume_prints_what_the_run_kind_prints() -> None:
    assert show_for("eval") is show_scorecard
    assert show_for("tournament") is show_leaderboard
    assert show_for("experiment") is show_report
