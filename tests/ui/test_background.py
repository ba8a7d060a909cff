"""Runs played in a background thread (harness.ui.background), without Streamlit; and one driven through the
Run view with AppTest, to show it outlives the script run that started it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.config.presets.tournament import tournament_config
from harness.config.run_settings import engine_options
from harness.engine.runner import resume_run
from harness.errors import ConfigError, RunExistsError
from harness.store.catalog import Catalog
from harness.ui import background, progress_panel, run_view
from harness.ui.choices import OTHER_MODEL
from harness.ui.views import RESULTS, VIEW

App = Callable[..., AppTest]
SLOW_MODEL = "mock/tft?latency_ms=30"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    yield
    background.stop_all("test over", grace_s=30)  # never leave a run playing after a test


def finished(job: background.Job) -> background.Job:
    assert job.wait(60), "the run did not end"
    assert job.error is None, job.error
    return job


def test_a_strategy_run_completes_with_its_counters(tmp_path: Path) -> None:
    config = tournament_config(["TFT", "ALLD", "GRIM"], rounds=10, replicates=2)
    job = finished(background.start(config, tmp_path, "strategies"))
    assert job.result is not None and job.result.status == "complete"
    c = job.counters()
    assert (c.games_done, c.games_total, c.rounds, c.calls) == (12, 12, 120, None)
    assert c.fraction == 1.0 and c.text() == "12 of 12 games played · 120 rounds"
    assert job not in background.active()
    with Catalog(tmp_path) as cat:
        assert cat.records("SELECT status, games_planned FROM runs") == [{"status": "complete", "games_planned": 12}]


def test_a_mock_model_run_counts_calls_and_computes_them_again(tmp_path: Path) -> None:
    config = tournament_config(["mock/tft", "ALLD"], rounds=5, self_play=False)
    c = finished(background.start(config, tmp_path, "first")).counters()
    assert (c.games_done, c.games_total, c.rounds, c.calls, c.cached, c.cost_usd) == (1, 1, 5, 5, 0, 0.0)
    assert "5 model calls (0 from the cache)" in c.text()
    assert background.Counters(0, 3, rounds=30, calls=30, rounds_expected=120).fraction == 0.25  # games side by side
    assert background.Counters(2, 3, rounds=30, calls=30, rounds_expected=120).fraction == 2 / 3
    assert background.Counters(0, 3, rounds=300, rounds_expected=120).fraction == 1.0  # a geometric horizon ran long
    again = finished(background.start(config, tmp_path, "second")).counters()
    assert (again.calls, again.cached) == (5, 0)  # a mock's answers are computed, never cached, as in the CLI
    assert not (tmp_path / "cache.sqlite").exists()


@pytest.mark.slow
def test_stop_ends_the_run_interrupted_and_resume_finishes_it(tmp_path: Path) -> None:
    config = tournament_config([SLOW_MODEL, "TFT", "ALLD"], rounds=40)  # ~1.2 s a model game
    job = background.start(config, tmp_path, "stopped")
    deadline = time.monotonic() + 30
    while job.counters().rounds in (None, 0):  # some moves are in before the stop
        assert time.monotonic() < deadline and job.running, "no progress"
        time.sleep(0.05)
    job.request_stop()
    finished(job)
    assert job.result is not None and job.result.status == "interrupted"
    assert job.result.reason == background.STOPPED and job.result.games_done < 6
    resumed = resume_run(tmp_path, "stopped", engine=engine_options(tmp_path))
    assert (resumed.status, resumed.games_done) == ("complete", 6)


def test_stop_all_stops_every_run_still_playing(tmp_path: Path) -> None:
    config = tournament_config([SLOW_MODEL, "TFT"], rounds=200)
    jobs = [background.start(config, tmp_path, f"run{i}") for i in range(2)]
    assert set(jobs) <= set(background.active())
    background.stop_all(grace_s=30)
    for job in jobs:
        assert not job.running and job.result is not None
        assert (job.result.status, job.result.reason) == ("interrupted", background.SHUT_DOWN)
    assert not background.active()


def test_user_errors_raise_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        background.start(tournament_config(["openai/gpt-4o-mini", "TFT"], rounds=2), tmp_path, "keyless")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    unpriced = tournament_config(["openai/my-local-model", "TFT"], rounds=2)
    assert background.prepare(unpriced, tmp_path) is not None  # no budget: no price needed
    with pytest.raises(ConfigError, match="needs a price for every model"):
        background.prepare(unpriced, tmp_path, max_cost=1.0)
    (tmp_path / "taken.duckdb").touch()
    with pytest.raises(ConfigError, match="not usable as a file name"):
        background.check_new_run_id(tmp_path, "../escape")
    with pytest.raises(RunExistsError, match="a run with id 'taken' already exists"):
        background.check_new_run_id(tmp_path, "taken")
    assert [p.name for p in tmp_path.glob("*.duckdb")] == ["taken.duckdb"]  # only the one made here


def test_an_error_while_playing_is_kept_on_the_job_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "taken.duckdb").touch()  # the engine refuses to overwrite it: a user error, in the thread
    job = background.start(tournament_config(["TFT", "ALLD"], rounds=2), tmp_path, "taken")
    assert job.wait(30) and job.result is None
    assert job.error is not None and "a run with id 'taken' already exists" in job.error

    def bug(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(background, "run_experiment", bug)
    job = background.start(tournament_config(["TFT", "ALLD"], rounds=2), tmp_path, "buggy")
    assert job.wait(30) and job.result is None
    assert job.error == "the run stopped on an unexpected error (ZeroDivisionError: oops)"
    assert job not in background.active()


@pytest.mark.slow
def test_a_run_outlives_the_script_run_that_started_it(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_panel, "QUICK_S", 0.0)  # show the progress panel at once
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select(OTHER_MODEL).run()
    at.text_input(key="run_model_b").input(SLOW_MODEL)
    at.slider(key="run_rounds").set_value(60)  # ~2 s a game
    at.slider(key="run_replicates").set_value(2)
    at.text_input(key="run_id").input("slow")
    at.button(key="run_start").click().run()
    job: background.Job = at.session_state[run_view.ACTIVE]
    try:
        assert job.running, "the run ended too soon for this test"
        assert "Run `slow`" in at.get("progress")[0].proto.text
        assert at.button(key="run_start").disabled and not at.error
        at.run()  # another script run (a click, a fragment tick) leaves the run playing and its panel shown
        assert job.running and len(at.get("progress")) == 1 and at.button(key="run_stop")
        deadline = time.monotonic() + 60
        while run_view.ACTIVE in at.session_state:  # AppTest has no timer to poll it
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.2)
            at.run()
    finally:
        job.request_stop("test over")
        job.wait(60)
    assert not at.exception and not at.error
    assert at.session_state[VIEW] == RESULTS
    assert "Run `slow` is complete" in at.success[0].value
    with Catalog(tmp_path) as cat:
        assert cat.query("SELECT count(*) FROM rounds")[1][0][0] == 120


@pytest.mark.slow
def test_a_run_that_ended_while_away_offers_its_results_instead_of_pulling_the_user(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_panel, "QUICK_S", 0.0)
    monkeypatch.setattr(run_view, "LATE_S", 0.0)  # any run that is over counts as ended while away
    at = app(tmp_path)
    at.selectbox(key="run_player_b").select(OTHER_MODEL).run()
    at.text_input(key="run_model_b").input(SLOW_MODEL)
    at.slider(key="run_rounds").set_value(10)
    at.slider(key="run_replicates").set_value(1)
    at.text_input(key="run_id").input("away")
    at.button(key="run_start").click().run()
    job: background.Job = at.session_state[run_view.ACTIVE]
    at.session_state["view_pending"] = "🏆 Tournament"  # the user goes elsewhere while it plays
    at.run()
    assert finished(job).result is not None
    time.sleep(0.05)
    at.session_state["view_pending"] = "🧪 Run Experiment"  # and comes back
    at.run()
    assert at.session_state[VIEW] != RESULTS  # not pulled away
    assert "Run `away` ended **complete** while you were away" in at.success[0].value
    at.button(key="run_view_results").click().run()
    assert at.session_state[VIEW] == RESULTS
    assert at.selectbox(key="results_run").value == "away"
    assert "Run `away` is complete" in at.success[0].value
