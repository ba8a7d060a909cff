"""The CLI's summaries of a run (harness.store.run_summary), checked against hand-written rows whose
sums and means are worked out in the test."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from harness.store.catalog import Catalog
from harness.store.run_summary import FailureCount, call_totals, common_failures, seat_a_overall
from tests.conftest import write_games

CALL = (
    "INSERT INTO {table} (run_id, game_id, round, player, attempt, provider, model, request_json, outcome, "
    "cached, cost_usd, input_tokens, output_tokens) VALUES (?, 0, 1, 'a', ?, 'm', 'x', '{{}}', ?, ?, ?, ?, ?)"
)


@pytest.fixture
def run(results: Path) -> Path:
    """Five games of TFT (seat A) against ALLD's seat, the last three marked failed; three calls of the run
    (one of them superseded by a resume) and one call of another run id in the same file."""
    write_games(results, "r", [("CDD", "DDD"), ("CC", "CC"), ("DD", "CC"), ("C", "C"), ("D", "D")]).close()
    with duckdb.connect(str(results / "r.duckdb")) as con:
        for game_id, error in ((2, "HTTP 400: bad request"), (3, "HTTP 400: bad request"), (4, "no readable move")):
            con.execute("UPDATE games SET status = 'failed', error = ? WHERE game_id = ?", [error, game_id])
        con.execute(CALL.format(table="calls"), ["r", 1, "ok", True, 0.01, 10, 2])
        con.execute(CALL.format(table="calls"), ["r", 2, "unparseable", False, 0.02, 20, 3])
        con.execute(CALL.format(table="superseded_calls"), ["r", 1, "unparseable", False, 0.05, 30, 4])
        con.execute(CALL.format(table="calls"), ["other", 1, "ok", False, 9.0, 900, 90])
    return results


def test_common_failures_counts_reasons_most_frequent_first(run: Path) -> None:
    with Catalog(run) as cat:
        assert common_failures(cat, "r") == [
            FailureCount("HTTP 400: bad request", 2),
            FailureCount("no readable move", 1),
        ]
        assert common_failures(cat, "r", limit=1) == [FailureCount("HTTP 400: bad request", 2)]
        assert common_failures(cat, "other") == []


def test_call_totals_include_superseded_calls_and_only_this_run(run: Path) -> None:
    with Catalog(run) as cat:
        totals = call_totals(cat, "r")
        none = call_totals(cat, "nothing")
    # 0.01 + 0.02 + 0.05; tokens 10 + 20 + 30 in, 2 + 3 + 4 out; the superseded call was unreadable too.
    assert totals["cost"] == pytest.approx(0.08)
    assert {k: v for k, v in totals.items() if k != "cost"} == {
        "calls": 3,
        "cached": 1,
        "input_tokens": 60,
        "output_tokens": 9,
        "unparseable": 2,
    }
    assert none == {"calls": 0, "cached": 0, "cost": None, "input_tokens": None, "output_tokens": None,
                    "unparseable": 0}  # fmt: skip


def test_seat_a_overall_averages_complete_games_only(run: Path) -> None:
    with Catalog(run) as cat:
        overall = seat_a_overall(cat, "r")
    # Game 0: C/D, D/D, D/D pays A 0 + 1 + 1 over 3 rounds, cooperating in 1 of 3; game 1: C/C twice pays
    # 3 a round, cooperating always. The failed games 2 to 4 are left out.
    assert overall["games"] == 2
    assert overall["payoff"] == pytest.approx((2 / 3 + 3.0) / 2)
    assert overall["coop"] == pytest.approx((1 / 3 + 1.0) / 2)
