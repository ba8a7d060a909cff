"""Memory that does not grow with the run: DuckDB's memory is bounded while a run is written, and a
resume neither builds the plan nor keeps Python objects per finished game.

These guard the structure of the fix cheaply; ``tests/benchmarks/bench_memory.py`` measures the
peak resident memory of a 100,000-game run against the games done.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.config.plan import GamePlan, iter_games, skip_games
from harness.config.presets.tournament import tournament_config
from harness.errors import ConfigError
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.states import GameStatus
from harness.store import resume
from harness.store.run_file import MEMORY_LIMIT_ENV, memory_limit
from harness.store.writer import RunWriter
from tests.conftest import write_games

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


def test_a_resume_skips_finished_games_lazily_without_building_the_plan() -> None:
    config = tournament_config(["TFT"], rounds=3, replicates=10_000_000, seed=1)  # one self-play pairing
    pulled = 0

    def plans() -> Iterator[GamePlan]:
        nonlocal pulled
        for plan in iter_games(config):
            pulled += 1
            yield plan

    finished = np.asarray([0, 1, 3, 7, 8, 9, 12], dtype=np.int32)
    todo = skip_games(plans(), finished)
    assert [p.game_id for p in itertools.islice(todo, 5)] == [2, 4, 5, 6, 10]
    assert pulled == 11  # games 0..10, and not one more
    assert next(todo).game_id == 11
    assert next(todo).game_id == 13  # 12 was finished


def test_skipping_nothing_or_everything() -> None:
    config = tournament_config(["TFT", "ALLD"], rounds=2, replicates=2, seed=1)  # 3 pairings x 2 = 6 games
    assert [p.game_id for p in skip_games(iter_games(config), np.asarray([], dtype=np.int32))] == [0, 1, 2, 3, 4, 5]
    assert list(skip_games(iter_games(config), np.arange(6, dtype=np.int32))) == []
    assert [p.game_id for p in skip_games(iter_games(config), np.asarray([5, 6, 9], dtype=np.int32))] == [0, 1, 2, 3, 4]


def test_a_resume_reads_the_games_it_keeps_as_a_sorted_array(tmp_path: Path) -> None:
    """Complete games are kept, and failed ones unless they failed on a cause that may pass (a failure kind
    of retryable or authentication) or ``--retry-failed`` is given; running and interrupted ones are replayed."""
    config = tournament_config(["TFT", "ALLD"], rounds=2, replicates=2, seed=1)  # 3 pairings x 2 replicates
    plans = list(iter_games(config))
    statuses = {0: GameStatus.COMPLETE, 1: GameStatus.INTERRUPTED, 2: GameStatus.FAILED, 3: GameStatus.COMPLETE,
                4: GameStatus.RUNNING, 5: GameStatus.FAILED}  # fmt: skip
    writer = RunWriter.create(tmp_path, "ids")
    for plan in reversed(plans):  # written out of order: the ids come back sorted all the same
        match = Match(PayoffMatrix(), 0.0, random.Random(0))
        writer.add_game(plan, match, 2, status=statuses[plan.game_id])
    writer.flush()
    writer.con.execute("UPDATE games SET failure = 'retryable' WHERE game_id = 5")  # game 2: no kind, permanent
    ids = resume.finished_game_ids(writer)
    assert ids.dtype == np.int32
    assert ids.tolist() == [0, 2, 3]
    assert resume.finished_game_ids(writer, retry_failed=True).tolist() == [0, 3]
    # Games 0 and 3 are replicates 0 and 1 of the first pairing; game 2 is replicate 0 of the third.
    # The games are empty matches (0 rounds played, none recorded).
    first, third = plans[0].condition.name, plans[2].condition.name
    before = resume.recorded(writer)
    assert before.kept == {first: Counter({0: 2}), third: Counter({0: 1})} and before.games_kept() == 3
    assert before.replayed == {g: (plans[g].condition.name, 0, 0) for g in (1, 4, 5)}
    assert resume.recorded(writer, retry_failed=True).kept == {first: Counter({0: 2})}
    writer.close()


def test_the_report_sums_in_duckdb_and_gives_the_hand_worked_means_and_intervals(results: Path) -> None:
    """Four hand-made games of player a against player b (payoffs R=3, S=0, T=5, P=1), moves as played:

    game  a    b    a's payoff/round    a's cooperation   b's payoff/round   a retaliates?
    1     CD   DD   (0 + 1) / 2 = 0.5   1/2               (5 + 1) / 2 = 3    b D in 1, a D in 2: 1/1
    2     CC   CC   (3 + 3) / 2 = 3     1                 3                  b never defects: NULL
    3     DD   CD   (5 + 1) / 2 = 3     0                 (0 + 1) / 2 = 0.5  NULL (b's D is in the last round)
    4     CCC  CCD  (3 + 3 + 0) / 3 = 2 1                 (3 + 3 + 5) / 3    NULL (likewise)

    a's payoff: mean 8.5 / 4 = 2.125; squared deviations 2.640625 + 0.765625 + 0.765625 + 0.015625 =
    4.1875, sd = sqrt(4.1875 / 3) = 1.18145; t(0.975, 3) = 3.18245, half width 3.18245 * 1.18145 / 2 = 1.87996.
    a's cooperation: mean 0.625, squared deviations 0.6875, sd 0.47871, half width 0.76174: the interval
    [-0.137, 1.387] is clipped to [0, 1]. b's payoff: mean 30.5 / 12 = 2.54167, squared deviations
    0.210069 + 0.210069 + 4.168403 + 1.265625 = 5.854167, sd 1.39692, half width 2.22281.
    Collapse (k = 2, threshold 0.25: at most one C among the four moves of two rounds): game 1 in
    round 1, game 3 in round 1; games 2 and 4 never (rounds 2-3 of game 4 hold three Cs): 2 games.
    """
    from harness.analysis.report import condition_summaries

    cat = write_games(results, "hand", [("CD", "DD"), ("CC", "CC"), ("DD", "CD"), ("CCC", "CCD")], k=2,
                      threshold=0.25)  # fmt: skip
    fetched: list[int] = []
    records = cat.records

    def counting(sql: str, params: list | None = None) -> list[dict]:  # type: ignore[type-arg]
        rows = records(sql, params)
        fetched.append(len(rows))
        return rows

    cat.records = counting  # type: ignore[method-assign]
    [summary] = condition_summaries(cat, "hand")
    cat.close()
    assert max(fetched) <= 2  # a row per seat of the condition, never one per game
    a, b = summary.seats
    assert (summary.condition, summary.games, a.name, b.name) == ("hand", 4, "TFT", "ALLD")
    pay = a.estimates["payoff_per_round"]
    assert (pay.n, pay.mean) == (4, pytest.approx(2.125))
    assert (pay.low, pay.high) == (pytest.approx(2.125 - 1.87996, abs=1e-4), pytest.approx(2.125 + 1.87996, abs=1e-4))
    coop = a.estimates["cooperation_rate"]
    assert (coop.n, coop.mean, coop.low, coop.high) == (4, pytest.approx(0.625), 0.0, 1.0)
    retaliation = a.estimates["retaliation_rate"]
    assert (retaliation.n, retaliation.mean, retaliation.low, retaliation.high) == (1, 1.0, None, None)
    pay_b = b.estimates["payoff_per_round"]
    assert (pay_b.n, pay_b.mean) == (4, pytest.approx(30.5 / 12))
    assert pay_b.high == pytest.approx(30.5 / 12 + 2.22281, abs=1e-4)
    assert (a.collapsed, b.collapsed) == (2, 2)
