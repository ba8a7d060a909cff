"""📊 View Results, driven headless with Streamlit's AppTest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from harness.config.presets.duel import duel_config
from harness.config.presets.tournament import tournament_config
from harness.config.run_settings import engine_options
from harness.engine.interrupts import StopFlag
from harness.engine.runner import run_experiment
from harness.ui import cached
from harness.ui.views import RESULTS
from tests.support.running_run import running_copy
from tests.ui.conftest import picker

Fragments = list[tuple[str, float | None]]
FOLLOW = "harness.ui.follow.follow.<locals>.watch"

App = Callable[..., AppTest]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_an_empty_folder_says_how_to_make_a_first_run(app: App, tmp_path: Path) -> None:
    at = app(tmp_path, RESULTS)
    assert "No runs yet" in at.info[0].value
    assert "pdbench eval --model mock/tft" in at.code[0].value and str(tmp_path) in at.code[0].value


@pytest.mark.slow
def test_a_game_shows_its_timeline_metrics_charts_and_summary(app: App, tournament_results: Path) -> None:
    at = app(tournament_results, RESULTS)
    assert at.selectbox(key="results_run").value == "tour"
    picker(at, "results_condition_").select("TFT_vs_ALLD").run()
    text = markdown(at)
    assert "🟢" + "🔴" * 9 in text  # TFT: C, then retaliates for good
    assert "🔴" * 10 in text  # ALLD
    assert "🟢 cooperate (C) · 🔴 defect (D)" in "\n".join(c.value for c in at.caption)
    assert "Tit for Tat" in text and "Always Defect" in text  # the agent cards
    shown = metrics(at)
    assert shown["Rounds"] == "10"
    assert shown["A cooperation"] == "10.0%" and shown["B cooperation"] == "0.0%"
    assert shown["A payoff"] == "9" and shown["B payoff"] == "14"
    assert shown["A retaliation"] == "100.0%" and shown["A forgiveness"] == "0.0%"
    assert shown["Time to collapse"] == "round 1"
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2
    summary = at.table[0].value
    row = summary.loc["payoff per round"]
    # Both replicates are one game (strategies, no noise): the mean without an interval, not "± 0.000".
    assert row["A · TFT"] == "0.900" and row["B · ALLD"] == "1.400"
    assert row["n (A, B)"] == "2, 2"


@pytest.mark.slow
def test_picking_a_replicate_shows_that_game(app: App, tmp_path: Path) -> None:
    config = tournament_config(["TFT", "RAND"], rounds=20, replicates=3, self_play=False, seed=5)
    run_experiment(config, results_dir=tmp_path, run_id="r")
    at = app(tmp_path, RESULTS)
    games = picker(at, "results_game_")
    assert len(games.options) == 3
    first = metrics(at)["B cooperation"]
    seen = {first}
    for game in games.options[1:]:
        picker(at, "results_game_").select(game).run()
        seen.add(metrics(at)["B cooperation"])
    assert len(seen) > 1  # RAND plays differently in each replicate


@pytest.mark.slow
def test_model_prompts_and_answers_can_be_opened(app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    config = duel_config({"model": "mock/tft?unparseable=0.5&seed=3"}, {"policy": "ALLD"}, rounds=3)
    run_experiment(config, results_dir=tmp_path, run_id="m", engine=engine_options(tmp_path))
    at = app(tmp_path, RESULTS)
    text = markdown(at)
    assert "player A" in text and "`mock/tft?unparseable=0.5&seed=3`" in text
    texts = [t.value for t in at.text]
    assert any(t.startswith("[system]") for t in texts) and any(t.startswith("[user]") for t in texts)
    assert any(t.startswith("[answer]") for t in texts)
    seen_ok = seen_failed = False
    for r in at.select_slider(key="results_calls_round").options:  # some round has a failed parse and its re-ask
        at.select_slider(key="results_calls_round").set_value(r).run()
        shown = markdown(at)
        seen_ok = seen_ok or "outcome `ok`" in shown
        if "❌" in shown:
            assert "attempt 2" in shown
            seen_failed = True
    assert seen_ok, "no readable answer shown"
    assert seen_failed, "no failed parse shown although half the answers are unreadable"


@pytest.mark.slow
def test_an_interrupted_run_says_so_and_how_to_finish_it(app: App, tmp_path: Path) -> None:
    stop = StopFlag()

    def progress(done: int, total: int) -> None:
        if done == 2:
            stop.set("test stop")

    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=5), results_dir=tmp_path, run_id="cut",
                   progress=progress, stop=stop)  # fmt: skip
    at = app(tmp_path, RESULTS)
    info = "\n".join(i.value for i in at.info)
    assert "**interrupted**" in info and "2 of 6 games" in info and "pdbench resume cut" in info


@pytest.mark.slow
def test_a_run_being_written_and_an_old_file_are_explained(
    app: App, tmp_path: Path, fragments: Fragments, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cached, "REFRESH_S", 0.2)  # the page looks again this often while a file is locked
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=3), results_dir=tmp_path, run_id="ok")
    shutil.copy(tmp_path / "ok.duckdb", tmp_path / "old.duckdb")
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute("update pdbench_meta set value = '0' where key = 'schema_version'")
    con.execute("update runs set run_id = 'old'")
    con.close()
    shutil.copy(tmp_path / "ok.duckdb", tmp_path / "busy.duckdb")
    holder = subprocess.Popen(  # another process writing a run holds its file's lock
        [sys.executable, "-c", "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('locked', "
         "flush=True); sys.stdin.read()", str(tmp_path / "busy.duckdb")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        at = app(tmp_path, RESULTS)
        info = "\n".join(i.value for i in at.info)
        assert "In progress: `busy`" in info and "looks again every 0.2 s on its own" in info
        assert not at.button  # no Refresh button to press
        assert (FOLLOW, 0.2) in fragments  # the page asked to look again on its own
        assert any("older PDBench (schema 0" in w.value for w in at.warning)
        assert at.selectbox(key="results_run").value == "ok" and len(at.selectbox(key="results_run").options) == 1
    finally:
        holder.communicate("", timeout=30)
    # The file is released unchanged (its signature is the same): the next look, a timer's rerun, still sees it.
    time.sleep(0.25)
    fragments.clear()
    at.run()
    assert not any("In progress" in i.value for i in at.info), ([i.value for i in at.info], at.session_state)
    assert (FOLLOW, 0.2) not in fragments  # nothing left to follow: no timer
    picker = at.selectbox(key="results_run")  # the copy holds run 'ok' too: counted once
    assert picker.value == "ok" and len(picker.options) == 1
    assert any("counted once" in w.value for w in at.warning)


@pytest.mark.slow
def test_a_running_run_shows_its_progress_and_is_followed_until_it_ends(
    app: App, tmp_path: Path, fragments: Fragments
) -> None:
    """A run whose status is running: a progress bar of its finished games, and a timer that looks again every
    REFRESH_S; each look shows the games finished since; once the run is complete, no timer and no bar."""
    finished = tmp_path / "finished"
    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=5), results_dir=finished, run_id="live")
    folder = tmp_path / "results"
    folder.mkdir()
    held = running_copy(finished / "live.duckdb", folder, keep=2)
    at = app(folder, RESULTS)
    bar = at.get("progress")
    assert len(bar) == 1 and "`live` is **running**: 2 of 6 games finished" in bar[0].proto.text
    assert bar[0].proto.value == 33  # percent: 2 of 6
    assert (FOLLOW, cached.REFRESH_S) in fragments
    assert "live · TFT, ALLD, GRIM · running 2/6" in at.selectbox(key="results_run").options[0]

    held.write_games(finished / "live.duckdb", upto=5)
    fragments.clear()
    at.run()  # what the timer's rerun does
    assert "5 of 6 games finished" in at.get("progress")[0].proto.text
    assert len(picker(at, "results_condition_").options) == 5  # the games recorded so far: GRIM_vs_GRIM is next
    assert (FOLLOW, cached.REFRESH_S) in fragments

    held.write_games(finished / "live.duckdb", upto=6, status="complete")  # and its writer closes the file
    fragments.clear()
    at.run()
    assert not at.get("progress")
    assert not [f for f in fragments if f[0] == FOLLOW]
    assert "live · TFT, ALLD, GRIM · complete 6/6" in at.selectbox(key="results_run").options[0]


@pytest.mark.slow
def test_a_run_that_moves_on_while_the_page_is_drawn_is_seen_at_the_next_look(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer records games (then ends the run) while the page is being drawn, after the progress bar: the
    page shows what it read first, so the timer's next look must find news and rerun the page. (It used to
    compare with a listing read at the end of the same page, which already held the news: the page stayed on
    "2 of 6", or on "running" with no timer, for good; the e2e test saw it on a busy machine.)"""
    import streamlit as st

    from harness.ui import results_view

    finished = tmp_path / "finished"
    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=5), results_dir=finished, run_id="live")
    folder = tmp_path / "results"
    folder.mkdir()
    held = running_copy(finished / "live.duckdb", folder, keep=2)
    steps = [lambda: held.write_games(finished / "live.duckdb", upto=5)]
    draw = results_view._render

    def draw_while_the_writer_moves_on(folder: Path, source: cached.RunSource) -> None:
        draw(folder, source)
        if steps:
            steps.pop(0)()

    monkeypatch.setattr(results_view, "_render", draw_while_the_writer_moves_on)
    looks: list[Callable[[], None]] = []  # the follow timer's body, as each full run declares it
    fragment = st.fragment

    def keep_look(func: Any = None, *, run_every: float | None = None) -> Any:
        def declare(f: Any) -> Any:
            if f.__qualname__.endswith("follow.<locals>.watch"):
                looks.append(f)
            return fragment(f, run_every=run_every)

        return declare if func is None else declare(func)

    monkeypatch.setattr(st, "fragment", keep_look)
    try:
        at = app(folder, RESULTS)
        assert "2 of 6 games finished" in at.get("progress")[0].proto.text
        assert _next_look_reruns(looks, monkeypatch)  # 5 of 6 now

        steps.append(lambda: held.write_games(finished / "live.duckdb", upto=6, status="complete"))
        looks.clear()
        at.run()  # the rerun the look asked for; the writer ends the run meanwhile
        assert "5 of 6 games finished" in at.get("progress")[0].proto.text
        assert _next_look_reruns(looks, monkeypatch)  # complete now

        looks.clear()
        at.run()
        assert not at.get("progress") and not looks
        assert "live · TFT, ALLD, GRIM · complete 6/6" in at.selectbox(key="results_run").options[0]
    finally:
        held.close()


def _next_look_reruns(looks: list[Callable[[], None]], monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the follow timer's next tick asks for a rerun of the page (AppTest never runs a timer: the body is
    called here, outside a script run, with st.rerun recorded)."""
    import streamlit as st

    asked: list[object] = []
    with monkeypatch.context() as m:
        m.setattr(st, "rerun", lambda *a, **k: asked.append(a))
        looks[-1]()
    return bool(asked)


@pytest.mark.slow
def test_a_running_run_whose_writer_was_killed_is_shown_as_crashed_with_how_to_resume_it(
    app: App, tmp_path: Path, fragments: Fragments
) -> None:
    """Issue 19, point 10: a file that says running, which no process holds (its writer was killed, so it never
    wrote how the run ended), is a crashed run: the way to resume it, no progress bar, and not followed."""
    finished = tmp_path / "finished"
    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=5), results_dir=finished, run_id="live")
    folder = tmp_path / "results"
    folder.mkdir()
    running_copy(finished / "live.duckdb", folder, keep=2).close()  # released, status still running
    at = app(folder, RESULTS)
    assert "live · TFT, ALLD, GRIM · crashed 2/6" in at.selectbox(key="results_run").options[0]
    (note,) = [w.value for w in at.warning if "crashed" in w.value]
    assert "2 of 6 games complete" in note and f"`pdbench resume live --results {folder}`" in note
    assert not at.get("progress") and not [f for f in fragments if f[0] == FOLLOW]


def test_what_a_followed_page_shows_changes_with_status_games_and_files_in_progress() -> None:
    from datetime import datetime

    from harness.states import RunStatus
    from harness.store.browse import Folder, RunRow
    from harness.ui.follow import shown

    def listing(status: RunStatus, done: int, busy: frozenset[str] = frozenset()) -> Folder:
        return Folder([RunRow("r", "eval", status, datetime(2026, 1, 1), 9, done, [])], [], busy)

    running = shown(listing(RunStatus.RUNNING, 2), "r")
    assert running.live and running != shown(listing(RunStatus.RUNNING, 3), "r")
    assert running == shown(listing(RunStatus.RUNNING, 2), "r")  # nothing new: no rerun
    assert not shown(listing(RunStatus.COMPLETE, 9), "r").live
    assert not shown(listing(RunStatus.INTERRUPTED, 2), "r").live
    assert shown(listing(RunStatus.COMPLETE, 9, frozenset({"x.duckdb"})), "r").live  # another run in progress
    assert not shown(listing(RunStatus.RUNNING, 2), "other").live  # the page shows another run


def test_a_followed_page_compares_its_next_look_with_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fast, with the folder's listing scripted: a run moves on between the page's first read of the folder (what
    it shows) and :func:`follow` at its end; the timer's next look must rerun the page, not take the news for
    what is shown. Failed before the page was drawn from one listing per full run."""
    from datetime import datetime

    import streamlit as st

    from harness.states import RunStatus
    from harness.store import browse

    reads = iter([2, 5, 5, 5])  # finished games at each read of the folder: the writer moves on after the first

    def listed(folder: Path, kind: str | None = None) -> browse.Folder:
        done = next(reads)
        return browse.Folder([browse.RunRow("r", "eval", RunStatus.RUNNING, datetime(2026, 1, 1), 6, done, [])], [])

    stamps = iter(range(100))  # the folder's signature changes with each write
    monkeypatch.setattr(browse, "list_runs", listed)
    monkeypatch.setattr(browse, "folder_signature", lambda folder: (("r.duckdb", next(stamps), 0),))
    looks: list[Callable[[], None]] = []
    fragment = st.fragment

    def keep_look(func: Any = None, *, run_every: float | None = None) -> Any:
        def declare(f: Any) -> Any:
            looks.append(f)
            return fragment(f, run_every=run_every)

        return declare if func is None else declare(func)

    monkeypatch.setattr(st, "fragment", keep_look)

    def page(folder: str) -> None:  # run as a script of its own: names from outside are not defined there
        from pathlib import Path

        import streamlit as st

        from harness.ui import cached
        from harness.ui.follow import follow

        run = cached.listing(Path(folder)).runs[0]
        st.write(f"{run.games_done} of {run.games_planned}")
        follow(Path(folder), "r")

    at = AppTest.from_function(page, args=(str(tmp_path),)).run()
    assert not at.exception and at.markdown[0].value == "2 of 6"
    assert _next_look_reruns(looks, monkeypatch)


def test_a_run_written_by_this_process_is_in_progress_too(tmp_path: Path) -> None:
    from harness.store import browse
    from harness.store.writer import RunWriter

    writer = RunWriter.create(tmp_path, "mine")
    try:
        folder = browse.list_runs(tmp_path)
        assert folder.runs == [] and "being written by this process" in folder.unreadable[0][1]
        assert folder.being_written == {"mine.duckdb"}  # told by the exception's type, not its words
    finally:
        writer.close()


@pytest.mark.slow
def test_switching_runs_redraws_the_condition_and_replicate_pickers_for_that_run(app: App, tmp_path: Path) -> None:
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5, replicates=3), results_dir=tmp_path, run_id="one")
    run_experiment(duel_config({"policy": "GRIM"}, {"policy": "ALT"}, rounds=7), results_dir=tmp_path, run_id="two")
    at = app(tmp_path, RESULTS)
    at.selectbox(key="results_run").select("one").run()
    assert picker(at, "results_condition_").key == "results_condition_one"
    assert picker(at, "results_condition_").options == ["TFT_vs_TFT (3 games)", "TFT_vs_ALLD (3 games)",
                                                      "ALLD_vs_ALLD (3 games)"]  # fmt: skip
    at.selectbox(key="results_run").select("two").run()
    conditions = picker(at, "results_condition_")  # a new widget: the browser cannot keep run one's labels
    assert conditions.key == "results_condition_two" and conditions.options == ["GRIM_vs_ALT (1 game)"]
    assert picker(at, "results_game_").key == "results_game_two"
    assert metrics(at)["Rounds"] == "7"


@pytest.mark.slow
def test_opening_the_tournament_view_keeps_the_results_choice(app: App, tmp_path: Path) -> None:
    from harness.ui.views import TOURNAMENT

    run_experiment(duel_config({"policy": "GRIM"}, {"policy": "ALT"}, rounds=7), results_dir=tmp_path, run_id="duel")
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=5), results_dir=tmp_path, run_id="tour")
    at = app(tmp_path, RESULTS)
    at.selectbox(key="results_run").select("duel").run()
    at.session_state["view_pending"] = TOURNAMENT
    at.run()
    assert at.selectbox(key="tournament_run").value == "tour"
    at.session_state["view_pending"] = RESULTS
    at.run()
    assert at.selectbox(key="results_run").value == "duel"


@pytest.mark.slow
def test_cards_show_a_model_players_model_persona_and_temperature(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model player named on its own (alice) still shows which model it is, and how it was asked."""
    from harness.ui.views import REPLAY

    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    alice = {"model": "mock/tft", "name": "alice", "persona": "cautious", "temperature": 0.3}
    config = duel_config(alice, {"model": "mock/grim"}, rounds=2)
    run_experiment(config, results_dir=tmp_path, run_id="p", engine=engine_options(tmp_path))
    for view in (RESULTS, REPLAY):
        markdowns = app(tmp_path, view).markdown
        cards = [card for m in markdowns for card in m.value.split("class='pdb-agent-card'")[1:]]  # one frame: both
        assert len(cards) == 2
        a, b = (next(c for c in cards if f"player {s}" in c) for s in "AB")
        assert "alice" in a and "<code>mock/tft</code>" in a and "persona <b>cautious</b>" in a
        assert "temperature 0.3" in a
        assert "<code>mock/grim</code>" in b and "no persona" in b and "provider's default temperature" in b


@pytest.fixture(scope="module")
def noisy_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mock model that often answers unreadably (fallback moves) against ALLD, with noise (flipped moves)."""
    folder = tmp_path_factory.mktemp("noisy")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PDBENCH_CACHE", str(folder / ".cache" / "responses.sqlite"))
        config = tournament_config(["mock/tft?unparseable=0.4", "ALLD"], rounds=40, noise=0.15, self_play=False)
        run_experiment(config, results_dir=folder, run_id="noisy")
    return folder


def _marked_rounds(folder: Path) -> dict[tuple[int, str], str]:
    """(round, seat) -> kind of every round the chart must mark, read straight from the run file."""
    con = duckdb.connect(str(folder / "noisy.duckdb"), read_only=True)
    try:
        rows = con.execute("select round, action_a::varchar, intended_a::varchar, flagged_a, action_b::varchar, "
                           "intended_b::varchar, flagged_b from rounds where game_id = 0").fetchall()  # fmt: skip
    finally:
        con.close()
    out = {}
    for r, *seats in rows:
        for seat, (played, intended, flagged) in zip("AB", (seats[:3], seats[3:]), strict=True):
            flipped = played != intended
            if flagged or flipped:
                out[(r, seat)] = (
                    "fallback + noise" if flagged and flipped else "fallback move" if flagged else "noise flip"
                )
    return out


@pytest.mark.slow
def test_noise_flips_and_fallback_moves_are_marked_on_the_chart_by_round(app: App, noisy_results: Path) -> None:
    """Each flipped or fallback move is a mark on the actions chart at its round and played move, and its tooltip
    says the round, the player and what happened; the timeline's note names the same rounds."""
    expected = _marked_rounds(noisy_results)
    kinds = set(expected.values())
    assert "noise flip" in kinds and ({"fallback move", "fallback + noise"} & kinds), "the fixture marks both kinds"
    at = app(noisy_results, RESULTS)
    chart = at.get("vega_lite_chart")[0].proto
    frames = [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.datasets]
    marks = next(f for f in frames if "what" in f.columns)
    assert {(int(r), s): k for r, s, k in zip(marks["round"], marks["seat"], marks["kind"], strict=True)} == expected
    assert {int(c) for c in marks["cooperated"]} <= {0, 1}
    for row in marks.itertuples():
        assert ("noise flipped" in row.what) == (row.kind != "fallback move")
        assert ("fallback move" in row.what) == (row.kind != "noise flip")
        assert row.cooperated == (1 if row.action == "C" else 0)
    layer = next(layer for layer in json.loads(chart.spec)["layer"] if "shape" in layer.get("encoding", {}))
    assert [t["field"] for t in layer["encoding"]["tooltip"]] == ["round", "who", "what"]
    note = next(c.value for c in at.caption if "flipped by noise" in c.value)
    flipped_a = sorted(r for (r, s), k in expected.items() if s == "A" and k != "fallback move")
    if flipped_a:
        assert f"A in round{'s' if len(flipped_a) > 1 else ''} {flipped_a[0]}" in note
    assert "marked on the actions chart" in note


def test_a_game_without_noise_or_fallbacks_has_no_marks(app: App, tournament_results: Path) -> None:
    at = app(tournament_results, RESULTS)
    chart = at.get("vega_lite_chart")[0].proto
    assert "shape" not in chart.spec and len(json.loads(chart.spec)["layer"]) == 2
    assert not any("marked on the actions chart" in c.value for c in at.caption)


@pytest.mark.slow
def test_results_open_on_the_newest_run_with_finished_games(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped before its first game ended is newer, but there is nothing in it to look at: the view opens on
    the newest run with results, and the stopped one can still be picked. Labels name model, persona, progress."""
    monkeypatch.setenv("PDBENCH_CACHE", str(tmp_path / "cache.sqlite"))
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=3), results_dir=tmp_path, run_id="done")
    stop = StopFlag()
    stop.set("stopped before the first game ended")
    cut = duel_config({"model": "mock/tft", "persona": "cautious"}, {"policy": "ALLD"}, rounds=3, replicates=2)
    run_experiment(cut, results_dir=tmp_path, run_id="cut", stop=stop)
    at = app(tmp_path, RESULTS)
    runs = at.selectbox(key="results_run")
    assert runs.value == "done"
    assert runs.options[0].startswith("cut · mock/tft · persona cautious · interrupted 0/2 · experiment · ")
    assert runs.options[1].startswith("done · TFT, ALLD · complete 3/3 · tournament · ")
    runs.select("cut").run()
    assert at.selectbox(key="results_run").value == "cut"
    assert any("has no recorded games yet" in i.value for i in at.info)


@pytest.mark.slow
def test_a_run_whose_file_a_read_finds_damaged_is_named_with_what_to_do(app: App, tmp_path: Path) -> None:
    """Issue 19, point 9, in the dashboard: a damaged block its pages meet (a game's calls) is an error that names the
    file and what to do, not a traceback (the folder's other runs: tests/integration/test_damaged_files.py)."""
    from tests.integration.test_damaged_files import damage_rows_of
    from tests.support.cli import pdbench

    folder = tmp_path / "results"
    code, _out, err = pdbench("eval", "--model", "mock/random", "--opponents", "TFT", "--rounds", "20",
                              "--replicates", "1", "--results", folder, "--run-id", "bad")  # fmt: skip
    assert code == 0, err
    damage_rows_of(folder / "bad.duckdb", "calls")
    at = app(folder, RESULTS)
    assert at.selectbox(key="results_run").options[0].startswith("bad · ")  # its runs and games can still be read
    (error,) = [e.value for e in at.error]
    assert error.startswith("Run `bad` cannot be read: it is damaged and cannot be read (Corrupt database file")
    assert "Restore it from a backup if you have one, or move it out of the folder" in error


@pytest.mark.slow
def test_a_condition_of_one_game_repeated_says_all_alike_and_a_profile_without_chances_shows_dashes(
    app: App, tmp_path: Path
) -> None:
    """A temperature-0 mock TFT: against ALLC every replicate is one game (the scorecard's "all alike"), against
    RAND the replicates differ; ALLC never defects, so nothing was there to forgive or retaliate against."""
    from harness.analysis.notes import FORGIVENESS_NOTE, REPEATED_NOTE
    from tests.support.cli import pdbench, sql_json

    code, scorecard, err = pdbench("eval", "--model", "mock/tft", "--temperature", "0", "--opponents",
                                   "ALLC,RAND", "--rounds", "6", "--replicates", "2", "--results", tmp_path,
                                   "--run-id", "t0")  # fmt: skip
    assert code == 0, err
    logs = sql_json(
        tmp_path,
        "select g.condition, r.game_id, string_agg(r.action_a || r.action_b, '' order by r.round) as log, "
        "bool_or(r.action_b = 'D') as provoked from rounds r join games g using (run_id, game_id) group by all",
    )
    alike = {c for c in {g["condition"] for g in logs} if len({g["log"] for g in logs if g["condition"] == c}) == 1}
    assert alike == {"vs_ALLC"} and not any(g["provoked"] for g in logs if g["condition"] == "vs_ALLC")
    assert "2, all alike" in scorecard  # the scorecard says it of the same condition
    at = app(tmp_path, RESULTS)
    captions = lambda: "\n".join(c.value for c in at.caption)  # noqa: E731
    picker(at, "results_condition_").select("vs_ALLC").run()
    summary, profile = at.table[0].value, at.table[1].value
    assert "complete games: 2, all alike" in captions() and REPEATED_NOTE in captions()
    assert FORGIVENESS_NOTE in captions()
    assert summary.loc["payoff per round", "A · mock/tft"] == "3.000"  # both cooperate throughout: R = 3
    assert not any("±" in str(v) for v in summary.to_numpy().ravel())
    seat_a = profile["A · mock/tft"]
    assert seat_a["forgiving"] == "—" and seat_a["retaliatory"] == "—"  # ALLC never defected: no chance, not 0
    # TFT never defects first, never defects uncalled, and copies the opponent's last move every round.
    assert (seat_a["nice"], seat_a["troublemaking"], seat_a["emulative"]) == ("1.000", "0.000", "1.000")
    picker(at, "results_condition_").select("vs_RAND").run()
    assert "all alike" not in captions() and REPEATED_NOTE not in captions()
    assert "± " in at.table[0].value.loc["payoff per round", "A · mock/tft"]


@pytest.mark.slow
def test_the_condition_shows_each_players_memory_one_profile_and_zd_verdict(app: App, tournament_results: Path) -> None:
    at = app(tournament_results, RESULTS)
    picker(at, "results_condition_").select("TFT_vs_ALLD").run()
    table = at.table[2].value  # after the condition summary and the behaviour profile
    # TFT against ALLD: C in round 1, then after (C, D) and (D, D) it chooses D; CC and DC never come up.
    assert list(table.columns) == ["TFT", "ALLD"]
    assert table.loc["P(C) round 1", "TFT"].startswith("100.0%")
    assert table.loc["P(C|CD)", "TFT"].startswith("0.0%") and table.loc["P(C|CC)", "TFT"] == "—"
    assert table.loc["ZD test", "TFT"] == "undetermined: an outcome came up in fewer than two games"
    assert "cluster-robust" in "\n".join(c.value for c in at.caption)


@pytest.mark.slow
def test_a_probed_run_shows_its_counterfactual_probes(app: App, tmp_path: Path) -> None:
    from harness.engine.probe import plan_probes, run_probes

    # mock/tft against ALLD for 3 rounds: the probes at t = 2 and 3 each flip a D to C, and TFT copies the flip.
    run_experiment(
        duel_config({"model": "mock/tft"}, {"policy": "ALLD"}, rounds=3, replicates=2),
        results_dir=tmp_path,
        run_id="src",
    )
    run_probes(plan_probes(tmp_path, "src"), results_dir=tmp_path, run_id="probe")
    at = app(tmp_path, RESULTS)
    assert at.selectbox(key="results_run").value == "src"  # the probe run plays no games: not offered here
    table = at.table[-1].value
    assert list(table.index) == ["mock/tft"] and table.iloc[0]["flip"] == "D->C (forgiveness)"
    assert (table.iloc[0]["probes"], table.iloc[0]["changed"], table.iloc[0]["games"]) == (4, 4, 2)
    assert table.iloc[0]["share [95% CI]"].startswith("100.0%")
