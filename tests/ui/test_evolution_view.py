"""The 🧬 Evolution view, driven headless with AppTest: run, play, step, reopen, presets and their lessons.

What a frame shows is checked against the run's file read with DuckDB directly (the ``population`` table),
not through the store's own reader.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from harness.engine.evolution.run import run_evolution
from harness.evolution.scenarios import SCENARIOS, SCENARIOS_BY_KEY
from harness.store.evolution_writer import list_evolution_runs, read_evolution
from harness.ui import evolution_view
from harness.ui.evolution_frame import FRAME_CLASS
from harness.ui.evolution_setup import Form
from harness.ui.evolution_view import LESSON_ICON, PICKER, PLAYBACK
from harness.ui.views import EVOLUTION, REPLAY, RESULTS, VIEWS
from tests.ui.conftest import Clock

App = Callable[..., AppTest]
GENERATION, PLAYING = PLAYBACK.position, PLAYBACK.playing


def open_view(app: App, folder: Path) -> AppTest:
    return app(folder, view=EVOLUTION)


def click(at: AppTest, key: str, times: int = 1) -> AppTest:
    for _ in range(times):
        at.button(key=key).click().run()
        assert not at.exception, at.exception
    return at


def frame(at: AppTest) -> str:
    frames = [m.value for m in at.markdown if FRAME_CLASS in m.value]
    assert len(frames) == 1, f"{len(frames)} frames drawn"
    return frames[0]


def shown(at: AppTest) -> tuple[int, list[int]]:
    """The generation a frame shows (its label) and the counts its bars show."""
    page = frame(at)
    label = re.search(r"Generation (\d+) of \d+", page)
    assert label is not None
    g = int(label.group(1))
    assert f"data-generation='{g}'" in page
    counts = [int(c) for c in re.findall(r"class='pdb-evo-bar' data-player='[^']*' data-count='(\d+)'", page)]
    cells = re.findall(r"class='pdb-evo-cell' data-player='(\d+)'", page)
    assert [cells.count(str(i)) for i in range(len(counts))] == counts  # the grid agrees with the bars
    return g, counts


def stored(folder: Path, run_id: str) -> tuple[list[str], list[list[int]]]:
    """The run's population per generation, read from its file with DuckDB: players in settings order."""
    con = duckdb.connect(str(folder / f"{run_id}.duckdb"), read_only=True)
    try:
        config = con.execute("select config_json from runs where run_id = ?", [run_id]).fetchone()
        assert config is not None
        players = list(duckdb.sql(f"select unnest(json_extract_string('{config[0]}', '$.players[*]'))").fetchall())
        names = [p[0] for p in players]
        rows = con.execute("select generation, player, count from population where run_id = ?", [run_id]).fetchall()
    finally:
        con.close()
    last = max(g for g, _, _ in rows)
    table = [[0] * len(names) for _ in range(last + 1)]
    for g, player, count in rows:
        table[g][names.index(player)] = count
    return names, table


def set_form(at: AppTest, players: list[str], counts: list[int], **sliders: float) -> AppTest:
    at.multiselect(key="evo_players").set_value(players).run()
    for player, count in zip(players, counts, strict=True):
        at.slider(key=f"evo_count_{player}").set_value(count).run()
    for name, value in sliders.items():
        at.slider(key=f"evo_{name}").set_value(value).run()
    assert not at.exception, at.exception
    return at


def successes(at: AppTest) -> list[str]:
    return [s.value for s in at.success]


def lessons(at: AppTest) -> list[str]:
    return [s.value for s in at.success if s.icon == LESSON_ICON]


# --- tests -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_empty_folder_offers_the_form_presets_and_says_how_to_start(app: App, tmp_path: Path) -> None:
    at = open_view(app, tmp_path)
    assert any("No evolution runs yet" in i.value for i in at.info)
    assert [b.key for b in at.button if b.key and b.key.startswith("evo_preset_")] == [
        f"evo_preset_{p.key}" for p in SCENARIOS
    ]
    assert at.multiselect(key="evo_players").value == ["ALLC", "ALLD", "TFT", "GRIM", "GTFT"]
    assert [at.slider(key=f"evo_count_{p}").value for p in ["ALLC", "ALLD", "TFT", "GRIM", "GTFT"]] == [5] * 5
    assert any("Population: **25** individuals" in c.value for c in at.caption)
    assert not at.button(key="evo_go").disabled
    assert not [m for m in at.markdown if FRAME_CLASS in m.value]


@pytest.mark.slow
def test_bad_input_is_one_paragraph_and_nothing_runs(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["ALLC", "ALLD"], [4, 0])
    assert any("at least two players" in e.value for e in at.error)
    assert at.button(key="evo_go").disabled
    at = set_form(at, ["ALLC", "ALLD"], [2, 3])
    assert any("k = 5 replaces more than half of a population of 5" in e.value for e in at.error)
    assert not list(tmp_path.glob("*.duckdb"))


@pytest.mark.slow
def test_run_saves_a_run_and_the_frames_show_its_file(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["ALLC", "ALLD", "TFT"], [10, 6, 4], generations=30, k=2)
    click(at, "evo_go")
    runs = list_evolution_runs(tmp_path)
    assert len(runs) == 1 and runs[0].status == "complete"
    run_id = runs[0].run_id
    assert at.selectbox(key=PICKER).value == run_id
    assert any(run_id in s and "ran" in s for s in successes(at))
    names, table = stored(tmp_path, run_id)
    assert names == ["ALLC", "ALLD", "TFT"] and table[0] == [10, 6, 4]
    assert shown(at) == (0, table[0])
    assert f"Generation 0 of {len(table) - 1}" in frame(at)
    for g in range(1, len(table)):
        click(at, "evo_step")
        assert shown(at) == (g, table[g])
    assert at.button(key="evo_step").disabled
    assert len(at.get("vega_lite_chart")) == 1  # the stacked shares
    # `pdbench sql` sees it: an ordinary run of kind evolution
    con = duckdb.connect(str(tmp_path / f"{run_id}.duckdb"), read_only=True)
    try:
        assert con.execute("select kind, status from runs").fetchall() == [("evolution", "complete")]
    finally:
        con.close()


@pytest.mark.slow
def test_play_ticks_one_generation_per_run_and_pause_stops(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["ALLC", "ALLD", "TFT"], [10, 6, 4], generations=30, k=2)
    click(at, "evo_go")
    _, table = stored(tmp_path, at.selectbox(key=PICKER).value)
    click(at, "evo_play")
    assert at.session_state[PLAYING] is True and shown(at)[0] == 0  # the click itself is no tick
    at.run()  # what a fragment tick does in the browser
    assert shown(at) == (1, table[1])
    at.run()
    assert shown(at) == (2, table[2])
    click(at, "evo_pause")
    at.run()
    assert shown(at) == (2, table[2]) and at.session_state[PLAYING] is False
    at.slider(key=PLAYBACK.jump).set_value(1).run()
    assert shown(at) == (1, table[1])
    click(at, "evo_back")
    assert shown(at) == (0, table[0])


@pytest.mark.slow
def test_play_runs_to_the_end_with_every_frame_its_own_generation(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["ALLC", "ALLD", "TFT"], [10, 6, 4], generations=30, k=2)
    click(at, "evo_go")
    _, table = stored(tmp_path, at.selectbox(key=PICKER).value)
    # The animations' clock is held still (tests/ui/conftest.py): a tick is one generation however long a run
    # takes here, so no frame is skipped.
    click(at, "evo_play")
    seen = [shown(at)]
    while at.session_state[PLAYING]:
        at.run()
        assert not at.exception, at.exception
        seen.append(shown(at))
    assert [g for g, _ in seen] == list(range(len(table)))
    assert all(counts == table[g] for g, counts in seen)
    assert "has taken over" in frame(at)


@pytest.mark.slow
def test_past_runs_can_be_reopened(app: App, tmp_path: Path) -> None:
    first = Form(players=("ALLC", "ALLD"), counts=(3, 3), generations=5, k=1).settings()
    second = Form(players=("TFT", "ALLD", "GRIM"), counts=(4, 4, 4), generations=8, k=2, noise=0.1).settings()
    run_evolution(first, results_dir=tmp_path, run_id="evolution_first")
    run_evolution(second, results_dir=tmp_path, run_id="evolution_second", sweep_id="sweep_1")
    at = open_view(app, tmp_path)
    picker = at.selectbox(key=PICKER)
    assert [o.split(" · ")[0] for o in picker.options] == ["evolution_second", "evolution_first"]  # newest first
    assert picker.value == "evolution_second"
    assert "🪞TFT 😈ALLD 💀GRIM · trust" in picker.options[0] and " · sweep sweep_1 · " in picker.options[0]
    assert "🕊️ALLC 😈ALLD · trust · ALLD took over · " in picker.options[1]
    picker.select("evolution_first").run()
    _, table = stored(tmp_path, "evolution_first")
    assert shown(at) == (0, table[0]) == (0, [3, 3])
    click(at, "evo_step")
    assert shown(at) == (1, table[1])
    at.selectbox(key=PICKER).select("evolution_second").run()
    _, table = stored(tmp_path, "evolution_second")
    assert shown(at) == (0, table[0]) == (0, [4, 4, 4])  # another run starts over
    click(at, "evo_step", times=2)
    # the choice and the position survive a visit to another view
    at.session_state["view_pending"] = REPLAY
    at.run()
    at.session_state["view_pending"] = EVOLUTION
    at.run()
    assert at.selectbox(key=PICKER).value == "evolution_second" and shown(at) == (2, table[2])


@pytest.mark.slow
@pytest.mark.parametrize("preset", SCENARIOS, ids=lambda p: p.key)
def test_each_preset_runs_and_shows_its_lesson(app: App, tmp_path: Path, preset: object) -> None:
    key, lesson = preset.key, preset.lesson  # type: ignore[attr-defined]
    at = click(open_view(app, tmp_path), f"evo_preset_{key}")
    runs = list_evolution_runs(tmp_path)
    assert len(runs) == 1
    shown_lessons = lessons(at)
    assert len(shown_lessons) == 1 and shown_lessons[0].startswith(f"**{lesson}** "), successes(at)
    assert at.multiselect(key="evo_players").value == preset.data["players"]  # type: ignore[attr-defined]
    # a second click reopens the same run: the same settings and seed give the same trajectory
    click(at, f"evo_preset_{key}")
    assert len(list_evolution_runs(tmp_path)) == 1
    assert any("Reopened" in i.value for i in at.info)
    assert lessons(at) == shown_lessons


@pytest.mark.slow
def test_a_changed_preset_shows_no_lesson(app: App, tmp_path: Path) -> None:
    at = click(open_view(app, tmp_path), "evo_preset_few_rounds")
    at.slider(key="evo_rounds").set_value(10).run()
    click(at, "evo_go")
    runs = list_evolution_runs(tmp_path)
    assert len(runs) == 2 and at.selectbox(key=PICKER).value == runs[0].run_id
    assert runs[0].settings.horizon.n_rounds == 10
    assert lessons(at) == []
    at.selectbox(key=PICKER).select(runs[1].run_id).run()  # the preset's own run keeps its lesson
    assert [m.split("**")[1] for m in lessons(at)] == [SCENARIOS_BY_KEY["few_rounds"].lesson]


def test_a_run_that_fails_says_why(app: App, tmp_path: Path) -> None:
    """A linear fitness that turns negative (The Evolution of Trust's payoffs go below 0) is found while running."""
    at = open_view(app, tmp_path)
    at.selectbox(key="evo_dynamics").select("generational").run()
    at.radio(key="evo_fitness").set_value("linear").run()
    set_form(at, ["ALLC", "ALLD"], [5, 5])
    click(at, "evo_go")
    assert any("could not run" in e.value and "linear fitness" in e.value for e in at.error)
    assert not at.exception


def test_the_view_is_in_the_navigation(app: App, tmp_path: Path) -> None:
    assert VIEWS[EVOLUTION] == evolution_view.__name__
    at = open_view(app, tmp_path)
    assert at.session_state["view"] == EVOLUTION
    assert any(m.value == "### 🧬 Evolution" for m in at.markdown)


@pytest.mark.slow
def test_games_views_leave_evolution_runs_out(app: App, tmp_path: Path, tournament_results: Path) -> None:
    """Results and Replay pick runs with games; an evolution run has none, and the Evolution view shows it."""
    settings = Form(players=("ALLC", "ALLD"), counts=(3, 3), generations=5, k=1).settings()
    run_evolution(settings, results_dir=tmp_path, run_id="evolution_only")
    for view in (RESULTS, REPLAY):
        at = app(tmp_path, view=view)
        assert any("No runs with games yet" in i.value and "🧬 Evolution" in i.value for i in at.info)
        assert not at.selectbox
    both = tmp_path / "both"
    both.mkdir()
    shutil.copy(tournament_results / "tour.duckdb", both)
    run_evolution(settings, results_dir=both, run_id="evolution_beside")
    at = app(both, view=RESULTS)
    assert [o.split(" · ")[0] for o in at.selectbox(key="results_run").options] == ["tour"]
    at = app(both, view=EVOLUTION)
    assert [o.split(" · ")[0] for o in at.selectbox(key=PICKER).options] == ["evolution_beside"]


@pytest.mark.slow
@pytest.mark.parametrize("dynamics", ["generational", "moran", "replicator"])
def test_every_dynamics_runs_from_the_view(app: App, tmp_path: Path, dynamics: str) -> None:
    at = open_view(app, tmp_path)
    at.selectbox(key="evo_dynamics").select(dynamics).run()
    set_form(at, ["ALLD", "TFT"], [6, 6], generations=20)
    click(at, "evo_go")
    (run,) = list_evolution_runs(tmp_path)
    assert run.settings.dynamics == dynamics and run.status == "complete"
    page = frame(at)
    assert "Generation 0 of" in page
    if dynamics == "replicator":  # shares, drawn as the 12 individuals of the initial mix
        con = duckdb.connect(str(tmp_path / f"{run.run_id}.duckdb"), read_only=True)
        try:
            shares = con.execute(
                "select share from population where generation = 0 order by player"  # ALLD, TFT
            ).fetchall()
        finally:
            con.close()
        assert [s for (s,) in shares] == [0.5, 0.5]
        assert shown(at) == (0, [6, 6]) and "50.0%" in page and "shares drawn as 12 individuals" in page
    else:
        _, table = stored(tmp_path, run.run_id)
        assert shown(at) == (0, table[0]) == (0, [6, 6])
        click(at, "evo_step")
        assert shown(at) == (1, table[1])


@pytest.mark.slow
def test_leaving_the_page_while_it_runs_ends_the_run_interrupted(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun asked for while a run plays (another view clicked) reaches the script as an exception from its
    next element: the run stops cleanly, its generations kept, and the page goes where it was asked."""
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    real = DeltaGenerator.progress

    def progress(self: DeltaGenerator, value: float, text: str | None = None, **kwargs: object) -> object:
        if value > 0:  # the bar's first update: what Streamlit raises when the user has moved on
            raise StopException()
        return real(self, value, text=text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(evolution_view, "PROGRESS_EVERY_S", 0.0)
    at = set_form(open_view(app, tmp_path), ["ALLD", "TFT"], [10, 10], generations=200, k=1, noise=0.05)
    monkeypatch.setattr(DeltaGenerator, "progress", progress)
    at.button(key="evo_go").click().run()
    monkeypatch.setattr(DeltaGenerator, "progress", real)
    (run,) = list_evolution_runs(tmp_path)
    assert run.status == "interrupted" and run.error == "stopped: the page was left while the run played"
    assert 0 < run.generations < 200
    _, table = stored(tmp_path, run.run_id)
    assert len(table) == run.generations + 1
    at.run()
    assert at.selectbox(key=PICKER).value == run.run_id
    assert any("interrupted" in w.value for w in at.warning)


@pytest.mark.slow
def test_a_typed_strategy_with_settings_plays_under_its_canonical_name(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["TFT", "GTFT(p=0.3)"], [4, 4], generations=5, k=1)
    assert at.slider(key="evo_count_GTFT(p=0.3)").label == "😇 GTFT(p=0.3)"
    click(at, "evo_go")
    (run,) = list_evolution_runs(tmp_path)
    assert run.settings.players == ["TFT", "GTFT(generous_prob=0.3)"]
    assert re.findall(r"data-player='([^']*)' data-count", frame(at)) == ["TFT", "GTFT(generous_prob=0.3)"]


def stored_matrix(folder: Path, run_id: str) -> dict[str, object]:
    """The payoff matrix in the run's stored settings, read from its file with DuckDB."""
    con = duckdb.connect(str(folder / f"{run_id}.duckdb"), read_only=True)
    try:
        row = con.execute("select config_json from runs where run_id = ?", [run_id]).fetchone()
    finally:
        con.close()
    assert row is not None
    config = json.loads(row[0]) if isinstance(row[0], str) else row[0]
    return config["payoff_matrix"]  # type: ignore[no-any-return]


@pytest.mark.slow
def test_custom_payoffs_reach_the_run_and_its_stored_settings(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["TFT", "ALLD"], [6, 6], generations=5, k=1)
    assert [at.number_input(key=f"evo_{n}").value for n in "TRPS"] == [3.0, 2.0, 0.0, -1.0]  # the trust preset
    assert all(at.number_input(key=f"evo_{n}").disabled for n in "TRPS")
    at.radio(key="evo_payoffs").set_value("custom").run()
    assert not at.number_input(key="evo_T").disabled
    for name, value in zip("TRPS", (7.0, 4.0, 1.0, -2.0), strict=True):
        at.number_input(key=f"evo_{name}").set_value(value).run()
    assert not at.warning  # a prisoner's dilemma: 7 > 4 > 1 > -2 and 8 > 5
    click(at, "evo_go")
    (run,) = list_evolution_runs(tmp_path)
    assert stored_matrix(tmp_path, run.run_id) == {"C": {"C": [4.0, 4.0], "D": [-2.0, 7.0]},
                                                  "D": {"C": [7.0, -2.0], "D": [1.0, 1.0]}}  # fmt: skip
    # the table the run played: TFT against ALLD for 10 rounds, S then 9 × P, by hand
    _, trajectory = read_evolution(tmp_path, run.run_id)
    i, j = trajectory.players.index("TFT"), trajectory.players.index("ALLD")
    assert trajectory.payoffs.values[i, j] == -2.0 + 9 * 1.0 and trajectory.payoffs.values[j, i] == 7.0 + 9 * 1.0


@pytest.mark.slow
def test_payoffs_that_are_not_a_dilemma_are_warned_of_as_the_config_does(app: App, tmp_path: Path) -> None:
    at = set_form(open_view(app, tmp_path), ["TFT", "ALLD"], [6, 6], generations=5, k=1)
    at.radio(key="evo_payoffs").set_value("custom").run()
    at.number_input(key="evo_R").set_value(4.0).run()  # R 4 > T 3: cooperating is no sacrifice
    (warning,) = at.warning
    assert "not a prisoner's dilemma" in warning.value and "T > R > P > S does not hold (T=3, R=4, P=0, S=-1)" in (
        warning.value
    )
    assert not at.button(key="evo_go").disabled  # warned, not refused: the config runs such a game too
    at.radio(key="evo_payoffs").set_value("axelrod").run()
    assert not at.warning and at.number_input(key="evo_R").value == 3.0


@pytest.mark.slow
def test_the_slowest_speed_leaves_seconds_to_talk_over_each_generation(app: App, tmp_path: Path, clock: Clock) -> None:
    at = click(open_view(app, tmp_path), "evo_preset_exploited")
    speed = at.slider(key=PLAYBACK.speed)
    assert speed.max == 3000 and speed.value == PLAYBACK.default_speed_ms
    speed.set_value(3000).run()
    click(at, "evo_play")
    assert at.session_state[PLAYING] is True and shown(at)[0] == 0  # neither the click nor its full rerun steps
    clock.advance(3.0)
    at.run()  # a tick, 3 s later: one generation
    assert shown(at)[0] == 1 and "Playing, 3000 ms a generation" in " ".join(c.value for c in at.caption)
    clock.advance(1.0)
    at.run()  # a tick sooner than the speed (a rerun for another reason) still shows one, never more
    assert shown(at)[0] == 2
