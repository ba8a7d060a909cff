"""The 🎬 Animated Replay view, driven headless with AppTest.

AppTest never ticks a fragment on its own: every ``run()`` is a full run, and the view treats
every run while playing as one tick. So stepping is tested through the buttons, and playing
by running the app again after ▶️ Play. The animation's clock is held still (``clock`` in tests/ui/conftest.py),
so each run while playing is exactly one round however long it took; a test that wants wall time to pass moves
the clock by hand.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Slider

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.store import browse
from harness.ui import replay_frame, replay_view
from harness.ui.pickers import FIRST_RUN_COMMAND
from harness.ui.replay_frame import FRAME_CLASS, Replay
from harness.ui.replay_view import JUMP, PLAYING, ROUND, SPEED, SPEED_MS
from harness.ui.views import REPLAY
from tests.ui.conftest import Clock, picker

App = Callable[..., AppTest]


# --- fixtures and helpers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def odd_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Games with noise flips and fallback moves (a mock model that mostly answers unreadably), and a long game."""
    folder = tmp_path_factory.mktemp("replay_results")
    with pytest.MonkeyPatch.context() as mp:  # the model's answers are cached beside the runs, not in ~
        mp.setenv("PDBENCH_CACHE", str(folder / ".cache" / "responses.sqlite"))
        noisy = tournament_config(["mock/tft?unparseable=0.8", "ALLD"], rounds=30, noise=0.2, self_play=False)
        run_experiment(noisy, results_dir=folder, run_id="odd")
        run_experiment(
            tournament_config(["TFT", "ALLD"], rounds=1500, self_play=False), results_dir=folder, run_id="long"
        )
    return folder


def open_game(app: App, folder: Path, condition: str, run: str | None = None, replicate: int = 0) -> AppTest:
    """The Replay view on ``condition`` (and replicate index ``replicate``) of ``run``."""
    at = app(folder, view=REPLAY)
    if run is not None:
        at.selectbox(key="replay_run").select(run).run()
    picker(at, "replay_condition_").select(condition).run()
    if replicate:
        picker(at, "replay_game_").select_index(replicate).run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, key: str, times: int = 1) -> AppTest:
    for _ in range(times):
        at.button(key=key).click().run()
        assert not at.exception, at.exception
    return at


def jump(at: AppTest) -> Slider[int]:
    """The round slider (drawn while paused)."""
    return at.slider(key=JUMP)


def frame(at: AppTest) -> str:
    """The frame: one element holding the round, progress, cards, scores and trails (see replay_frame)."""
    frames = [m.value for m in at.markdown if FRAME_CLASS in m.value]
    assert len(frames) == 1, f"{len(frames)} frames drawn"
    return frames[0]


def _texts(html_text: str, css_class: str) -> list[str]:
    """The text of each leaf ``<div class='css_class'>`` (no nested div)."""
    found = re.findall(rf"<div class='{css_class}'[^>]*>(.*?)</div>", html_text)
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in found]


def seats(at: AppTest) -> list[str]:
    return frame(at).split("class='pdb-seat'")[1:]


def header(at: AppTest) -> str:
    found = re.search(r"Round \d+ of \d+", frame(at))
    assert found is not None
    return found.group()


def move_cards(at: AppTest) -> list[str]:
    return [seat[seat.index("pdb-move-card") : seat.index("pdb-score")] for seat in seats(at)]


def agent_cards(at: AppTest) -> list[str]:
    return [seat[: seat.index("pdb-move-card")] for seat in seats(at)]


def scores(at: AppTest) -> list[tuple[str, str, str]]:
    """(label, value, delta) of each score box, A first; the delta is the last round's payoff ("" at round 0)."""
    out = []
    for seat in seats(at):
        box = seat[seat.index("pdb-score") :]
        label = re.search(r"Score · player [AB]", box)
        delta = re.search(r"([+-][\d.]+) last round", box)
        assert label is not None
        out.append((label.group(), _texts(box, "pdb-score-value")[0], f"{float(delta.group(1)):g}" if delta else ""))
    return out


def histories(at: AppTest) -> list[str]:
    return _texts(frame(at), "pdb-history")


def notes(at: AppTest) -> list[str]:
    found = re.findall(r"<div class='pdb-note'>(.*?)</div></div>", frame(at))
    return [html.unescape(re.sub(r"<[^>]+>", "", n)) for n in found]


def progress(at: AppTest) -> float:
    found = re.search(r"class='pdb-progress'[^>]*><div style='height:100%;width:([\d.]+)%", frame(at))
    assert found is not None
    return float(found.group(1))


def game_over(at: AppTest) -> list[str]:
    return _texts(frame(at), "pdb-game-over")


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


# --- tests -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_opens_at_round_zero_with_both_agents(app: App, tournament_results: Path) -> None:
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    assert header(at) == "Round 0 of 10"
    assert "Before the first move: press ▶️ Play or ⏭️ Step." in frame(at)
    cards = agent_cards(at)
    assert len(cards) == 2
    assert "Tit for Tat" in cards[0] and "player A" in cards[0]
    assert "ALLD" in cards[1] and "player B" in cards[1]
    assert all("waiting for round 1" in c for c in move_cards(at))
    assert scores(at) == [("Score · player A", "0", ""), ("Score · player B", "0", "")]
    assert histories(at) == ["History: — (no rounds yet)"] * 2
    assert progress(at) == 0
    assert at.session_state[ROUND] == 0 and at.session_state[PLAYING] is False


@pytest.mark.slow
def test_step_shows_moves_payoffs_scores_and_deltas(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step")
    assert header(at) == "Round 1 of 10"
    tft, alld = move_cards(at)
    assert "round 1" in tft and ">C<" in tft and "cooperates" in tft and "+0 points" in tft
    assert ">D<" in alld and "defects" in alld and "+5 points" in alld
    assert scores(at) == [("Score · player A", "0", "0"), ("Score · player B", "5", "5")]
    assert histories(at) == ["History: 🟢 (last 1 round)", "History: 🔴 (last 1 round)"]

    click(at, "replay_step")  # TFT answers the defection
    assert header(at) == "Round 2 of 10"
    tft, alld = move_cards(at)
    assert "round 2" in tft and "defects" in tft and "+1 point<" in tft
    assert "defects" in alld and "+1 point<" in alld
    assert scores(at) == [("Score · player A", "1", "1"), ("Score · player B", "6", "1")]
    assert histories(at) == ["History: 🟢🔴 (last 2 rounds)", "History: 🔴🔴 (last 2 rounds)"]
    assert jump(at).value == 2
    assert progress(at) == 20  # percent


@pytest.mark.slow
def test_trail_shows_the_last_ten_rounds(app: App, odd_results: Path) -> None:
    at = open_game(app, odd_results, "TFT_vs_ALLD", run="long")
    jump(at).set_value(10).run()
    reds = "🔴" * 10
    assert histories(at) == [f"History: 🟢{reds[1:]} (last 10 rounds)", f"History: {reds} (last 10 rounds)"]
    click(at, "replay_step")  # TFT's opening 🟢 (round 1) leaves the trail
    assert histories(at)[0] == f"History: {reds} (last 10 rounds)"


def test_back_steps_back_and_stops_at_round_zero(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=3)
    click(at, "replay_back")
    assert header(at) == "Round 2 of 10"
    assert scores(at)[1] == ("Score · player B", "6", "1")
    click(at, "replay_back", times=2)
    assert header(at) == "Round 0 of 10"
    assert at.button(key="replay_back").disabled


def test_stepping_to_the_end_shows_the_final_score(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=10)
    assert header(at) == "Round 10 of 10"
    assert game_over(at) == ["🏁 Game over: final score 9 – 14"]
    assert [s[1] for s in scores(at)] == ["9", "14"]
    assert at.button(key="replay_step").disabled
    assert progress(at) == 100


def test_play_ticks_once_per_run_and_pause_stops(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_play")
    assert at.session_state[PLAYING] is True
    assert at.session_state[ROUND] == 0  # the click itself is no tick
    assert at.button(key="replay_play").disabled and not at.button(key="replay_pause").disabled
    at.run()  # what a fragment tick does in the browser
    assert header(at) == "Round 1 of 10"
    at.run()
    assert header(at) == "Round 2 of 10"
    assert scores(at)[1] == ("Score · player B", "6", "1")

    click(at, "replay_pause")
    assert at.session_state[PLAYING] is False
    at.run()
    at.run()
    assert header(at) == "Round 2 of 10"


def test_play_stops_at_the_end_and_plays_again_from_the_start(app: App, tournament_results: Path) -> None:
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    jump(at).set_value(9).run()
    click(at, "replay_play")
    at.run()
    assert header(at) == "Round 10 of 10"
    assert at.session_state[PLAYING] is False
    assert game_over(at) == ["🏁 Game over: final score 9 – 14"]
    at.run()
    assert header(at) == "Round 10 of 10"  # stays at the end

    click(at, "replay_play")  # at the end, Play starts over
    assert at.session_state[PLAYING] is True and header(at) == "Round 0 of 10"


def test_step_while_playing_pauses(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_play")
    at.run()
    click(at, "replay_step")
    assert at.session_state[PLAYING] is False
    assert header(at) == "Round 2 of 10"


def test_round_slider_is_hidden_while_playing(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_play")
    assert not [s for s in at.slider if s.label == "Jump to round"]
    assert any(c.startswith("▶️ Playing, 300 ms a round") for c in captions(at))
    at.run()
    click(at, "replay_pause")
    assert jump(at).value == 1


def test_a_button_wins_over_a_slider_value_sent_with_it(app: App, tournament_results: Path) -> None:
    """A click sent before the last frame arrived carries the slider's old position: the click counts."""
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=2)
    jump(at).set_value(1)
    at.button(key="replay_step").click().run()
    assert header(at) == "Round 3 of 10"
    assert jump(at).value == 3


def test_restart_returns_to_round_zero(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=4)
    click(at, "replay_restart")
    assert header(at) == "Round 0 of 10"
    assert [s[1] for s in scores(at)] == ["0", "0"]
    assert jump(at).value == 0


def test_round_slider_jumps(app: App, tournament_results: Path) -> None:
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    jump(at).set_value(7).run()
    assert header(at) == "Round 7 of 10"
    assert [s[1] for s in scores(at)] == ["6", "11"]
    click(at, "replay_step")
    assert header(at) == "Round 8 of 10"


@pytest.mark.slow
def test_switching_game_starts_over(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=3)
    click(at, "replay_play")
    picker(at, "replay_game_").select_index(1).run()
    assert header(at) == "Round 0 of 10"
    assert at.session_state[PLAYING] is False

    click(at, "replay_step", times=2)
    picker(at, "replay_condition_").select("TFT_vs_TFT").run()
    assert header(at) == "Round 0 of 10"
    click(at, "replay_step")
    assert all("cooperates" in c and "+3 points" in c for c in move_cards(at))


def test_speed_is_kept_and_changing_it_is_no_tick(app: App, tournament_results: Path) -> None:
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    assert at.slider(key=SPEED).value == replay_view.DEFAULT_SPEED_MS
    click(at, "replay_play")
    at.slider(key=SPEED).set_value(100).run()
    assert at.session_state[SPEED_MS] == 100
    assert at.session_state[ROUND] == 0
    at.run()
    assert at.session_state[ROUND] == 1 and at.slider(key=SPEED).value == 100


def test_empty_folder_shows_the_first_run_message(app: App, tmp_path: Path) -> None:
    at = app(tmp_path, view=REPLAY)
    assert any("No runs yet" in i.value for i in at.info)
    assert any(FIRST_RUN_COMMAND in c.value for c in at.code)
    assert not at.metric and not at.button


@pytest.mark.slow
def test_fallback_moves_and_noise_flips_are_marked(app: App, odd_results: Path) -> None:
    with browse.run_catalog(odd_results, "odd") as cat:
        rounds = browse.game_detail(cat, "odd", 0).rounds
        condition = browse.conditions(cat, "odd")[0].condition
    flagged = next(r["round"] for r in rounds if r["flagged_a"])
    flipped = next(r for r in rounds if r["intended_b"] != r["action_b"])
    at = open_game(app, odd_results, condition, run="odd")
    assert "language model via mock" in agent_cards(at)[0]

    jump(at).set_value(flagged).run()
    assert any(n.startswith("⚠️ fallback move") for n in notes(at))
    jump(at).set_value(flipped["round"]).run()
    note = f"🎲 noise flipped the intended move ({flipped['intended_b']} → {flipped['action_b']})"
    assert note in notes(at)


def test_unflagged_rounds_carry_no_marks(app: App, tournament_results: Path) -> None:
    at = click(open_game(app, tournament_results, "TFT_vs_ALLD"), "replay_step", times=2)
    assert notes(at) == []


def test_long_game_draws_only_the_current_frame(app: App, odd_results: Path) -> None:
    at = open_game(app, odd_results, "TFT_vs_ALLD", run="long")
    jump(at).set_value(1200).run()
    assert header(at) == "Round 1200 of 1500"
    assert [s[1] for s in scores(at)] == ["1199", "1204"]
    assert len(move_cards(at)) == 2
    assert all(len(h) < 80 for h in histories(at))
    click(at, "replay_step")
    assert header(at) == "Round 1201 of 1500"


def test_replay_sums_scores_once() -> None:
    rounds = [
        {"round": i, "action_a": a, "action_b": b, "payoff_a": pa, "payoff_b": pb}
        for i, (a, b, pa, pb) in enumerate([("C", "D", 0, 5), ("D", "D", 1, 1), ("C", "C", 3, 3)], start=1)
    ]
    detail = browse.GameDetail({"player_a": "TFT", "player_b": "ALLD"}, rounds, {}, False)
    replay = Replay.of(detail)
    assert replay.length == 3
    assert [replay.score(0, i) for i in range(4)] == [0, 0, 1, 4]
    assert [replay.score(1, i) for i in range(4)] == [0, 5, 6, 9]
    assert replay.trail(0, 3, last=2) == ["D", "C"] and replay.trail(1, 0) == []


def _running_totals(folder: Path, run_id: str, game_id: int) -> list[tuple[float, float]]:
    """Both players' scores after each round, summed here from the rounds as the file stores them (index 0:
    before the first round): the replay's own sums are not used."""
    con = duckdb.connect(str(folder / f"{run_id}.duckdb"), read_only=True)
    try:
        sql = "select payoff_a, payoff_b from rounds where game_id = ? order by round"
        rows = con.execute(sql, [game_id]).fetchall()
    finally:
        con.close()
    totals, a, b = [(0.0, 0.0)], 0.0, 0.0
    for pa, pb in rows:
        a, b = a + pa, b + pb
        totals.append((a, b))
    return totals


def test_a_tick_shows_one_round_per_speed_of_time_since_the_last_up_to_a_second(
    app: App, tournament_results: Path, clock: Clock
) -> None:
    """Faster speeds than a browser round trip hold: a tick steps by the time since the last one (rounded, at
    least one round), and a stalled tab catches up at most a second's worth."""
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    at.slider(key=SPEED).set_value(200).run()
    click(at, "replay_play")
    clock.advance(0.61)  # 3 speeds
    at.run()
    assert at.session_state[ROUND] == 3
    clock.advance(0.01)  # a tick sooner than the speed still shows a round
    at.run()
    assert at.session_state[ROUND] == 4
    clock.advance(30)  # a stalled tab: 1 s at 200 ms a round, not 150 rounds
    at.run()
    assert at.session_state[ROUND] == 9 and at.session_state[PLAYING] is True


def _frame_numbers(at: AppTest) -> tuple[int, float, float, list[str]]:
    """What one frame shows: its round, both scores, and the round label of each move card."""
    found = re.fullmatch(r"Round (\d+) of \d+", header(at))
    assert found is not None
    a, b = (float(value) for _, value, _ in scores(at))
    labels = [m.group(1) for card in move_cards(at) for m in [re.search(r">round (\d+)<", card)] if m]
    return int(found.group(1)), a, b, labels


def _play_through(at: AppTest) -> list[tuple[int, float, float, list[str]]]:
    """Press Play and tick until the end; every frame drawn on the way."""
    click(at, "replay_play")
    frames = [_frame_numbers(at)]
    while at.session_state[PLAYING]:
        at.run()
        assert not at.exception, at.exception
        frames.append(_frame_numbers(at))
    return frames


@pytest.mark.slow
def test_every_frame_shows_the_scores_of_its_own_round_while_playing(app: App, odd_results: Path) -> None:
    """The issue's bug: a header a round ahead of its scores. Every frame's scores must be the sums of the
    payoffs of the rounds up to the round it shows, and its move cards that round's."""
    with browse.run_catalog(odd_results, "odd") as cat:
        condition = browse.conditions(cat, "odd")[0].condition
        game_id = browse.games(cat, "odd", condition)[0].game_id
    totals = _running_totals(odd_results, "odd", game_id)
    assert len({t for t in totals}) > 3, "a game whose scores change"
    at = open_game(app, odd_results, condition, run="odd")
    frames = _play_through(at)
    assert frames[-1][0] == len(totals) - 1  # played to the last round
    assert len(frames) > 10
    for shown, a, b, labels in frames:
        assert (a, b) == totals[shown], f"round {shown} shows {a}–{b}, its rounds sum to {totals[shown]}"
        assert labels == ([] if shown == 0 else [str(shown)] * 2)


def test_tft_against_alld_plays_its_closed_form(app: App, tournament_results: Path) -> None:
    """TFT against ALLD: after r >= 1 rounds TFT has S + (r-1)P = r - 1 and ALLD T + (r-1)P = r + 4 (Axelrod's
    payoffs T=5, P=1, S=0), in every frame, stepped or played."""
    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    for shown, a, b, _ in _play_through(at):
        assert (a, b) == ((0, 0) if shown == 0 else (shown - 1, shown + 4))
    click(at, "replay_restart")
    for r in range(1, 11):
        click(at, "replay_step")
        assert _frame_numbers(at)[:3] == (r, r - 1, r + 4)


def test_a_frame_is_one_piece_built_from_one_round() -> None:
    """Three hand-worked rounds (C/D, D/D, C/C with T=5, R=3, P=1, S=0): each frame's header, data, scores,
    move cards and trail all say the same round."""
    rounds = [
        {"round": i, "action_a": a, "action_b": b, "intended_a": a, "intended_b": b, "payoff_a": pa,
         "payoff_b": pb, "flagged_a": False, "flagged_b": False}
        for i, (a, b, pa, pb) in enumerate([("C", "D", 0, 5), ("D", "D", 1, 1), ("C", "C", 3, 3)], start=1)
    ]  # fmt: skip
    replay = Replay.of(browse.GameDetail({"player_a": "TFT", "player_b": "ALLD"}, rounds, {}, False))
    expected = {0: ("0", "0"), 1: ("0", "5"), 2: ("1", "6"), 3: ("4", "9")}
    for shown, (a, b) in expected.items():
        page = replay_frame.frame_html(replay, shown)
        assert page.count(f"class='{FRAME_CLASS}'") == 1 and f"data-round='{shown}'" in page
        assert f"data-score-a='{a}' data-score-b='{b}'" in page
        assert f"Round {shown} of 3" in page and f"{shown} of 3 rounds played" in page
        values = re.findall(r"<div class='pdb-score-value'[^>]*>([^<]*)</div>", page)
        assert values == [a, b]
        assert page.count(f"round {shown}<") == (2 if shown else 0)  # both move cards
    assert "Game over: final score 4 – 9" in replay_frame.frame_html(replay, 3)
    assert "Game over" not in replay_frame.frame_html(replay, 2)


@pytest.mark.slow
def test_a_running_run_is_followed_while_paused_not_while_playing(
    app: App, tmp_path: Path, fragments: list[tuple[str, float | None]]
) -> None:
    """The replay of a game of a run still playing: the page looks again on its own while paused; while a replay
    plays it does not rerun the page under it (pausing is a full run, which looks again)."""
    from harness.ui import cached
    from tests.support.running_run import running_copy

    finished = tmp_path / "finished"
    run_experiment(tournament_config(["TFT", "ALLD"], rounds=10), results_dir=finished, run_id="live")
    folder = tmp_path / "results"
    folder.mkdir()
    held = running_copy(finished / "live.duckdb", folder, keep=2)
    try:
        follow = ("harness.ui.follow.follow.<locals>.watch", cached.REFRESH_S)
        at = open_game(app, folder, "TFT_vs_ALLD")
        assert follow in fragments
        fragments.clear()
        click(at, "replay_play")
        at.run()
        assert at.session_state[PLAYING] and follow not in fragments
        click(at, "replay_pause")
        assert follow in fragments and not at.session_state[PLAYING]
    finally:
        held.close()


def test_at_phone_width_play_brings_the_board_into_view_once_as_it_starts(app: App, tournament_results: Path) -> None:
    """The phone-width rules are one media query (1280 px untouched); the scroll is sent once, as play starts, and
    acts only where that query matches (measured in Chromium at 390 x 844 by tests/e2e/test_dashboard.py)."""

    def bodies(at: AppTest, marker: str) -> list[str]:
        return [h.proto.body for h in at.get("html") if marker in h.proto.body]

    at = open_game(app, tournament_results, "TFT_vs_ALLD")
    [style] = bodies(at, "<style>@media")
    assert style.startswith("<style>@media (max-width: 640px) {") and style.endswith("}\n}</style>")
    assert ".st-key-replay_play" in style and f".{FRAME_CLASS} .pdb-seats" in style
    assert not bodies(at, "<script>")
    click(at, "replay_play")
    [script] = bodies(at, "<script>")
    assert 'window.matchMedia("(max-width: 640px)")' in script and ".st-key-replay_play" in script
    at.run()  # a tick: playing goes on, no second scroll
    assert header(at) == "Round 1 of 10" and not bodies(at, "<script>")
    click(at, "replay_pause")
    assert not bodies(at, "<script>")
    click(at, "replay_play")
    assert len(bodies(at, "<script>")) == 1
