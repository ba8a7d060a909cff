"""End to end: `pdbench ui` on a free port, driven in headless Chromium like a user would.

Opens every view, plays TFT against ALLD from the Run view, checks the Results timeline and the
Replay move cards (and, at 390 x 844, the board in view after Play), runs a small tournament on custom payoffs
and checks its leaderboard and stored matrix, runs and plays an evolution preset, plays a match by hand in the
Play view (at phone width too), and saves a full-page screenshot of each view (folder printed;
$PDBENCH_SCREENSHOTS chooses it). Deselect with ``-m "not e2e"``.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import struct
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harness.config.presets.evaluation import eval_config
from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.store.catalog import Catalog
from harness.ui.choices import OTHER_MODEL
from harness.ui.components import COOPERATE_CARD, COOPERATE_DOT, DEFECT_CARD, DEFECT_DOT, LEGEND, MEDALS
from harness.ui.views import COMPARE, REPLAY, RESULTS, RUN, TOURNAMENT, VIEWS
from tests.e2e.conftest import Server, ui_command, ui_env
from tests.support.running_run import running_copy

# One worker runs the module: its dashboard server and Chromium are costly to start on a second one.
pytestmark = [pytest.mark.serial, pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("e2e-dashboard")]

ROUNDS = 12
RUN_TIMEOUT_MS = 120_000  # a game or a small tournament of strategies takes seconds; leave room on slow CI


# --- the server ----------------------------------------------------------------------------------


def _interface_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (Linux; empty elsewhere)."""
    try:
        import fcntl
    except ImportError:
        return []
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(sock.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
            except OSError:
                continue
            address = socket.inet_ntoa(packed[20:24])
            if not address.startswith("127."):
                found.append(address)
    return found


def test_serves_on_loopback_only(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5):
        pass
    others = _interface_addresses()
    if not others:
        pytest.skip("this machine has no non-loopback IPv4 address to try")
    for address in others:
        with pytest.raises(OSError), socket.create_connection((address, server.port), timeout=5):
            pass


def test_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            ui_command(tmp_path / "results", port), cwd=tmp_path, env=ui_env(tmp_path),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert f"127.0.0.1:{port}" in done.stderr and "--port" in done.stderr, output
    assert "Traceback" not in output, output


# --- the browser ---------------------------------------------------------------------------------


def _expect() -> Any:
    from playwright.sync_api import expect

    return expect


def open_view(page: Any, view: str) -> None:
    """Click a view in the navigation (a segmented control: radios named without their emoji)."""
    label = view.split(" ", 1)[1]
    radio = page.get_by_role("radiogroup", name="View").get_by_role("radio", name=label, exact=True)
    radio.click()
    _expect()(radio).to_have_attribute("aria-checked", "true")
    settle(page)


def settle(page: Any, timeout_ms: int = 15_000) -> None:
    """Wait until the script run ends (no stale elements, no running indicator) and no exception shows."""
    deadline = time.monotonic() + timeout_ms / 1000
    idle = 0
    while idle < 3 and time.monotonic() < deadline:  # idle three checks in a row: the run has really ended
        page.wait_for_timeout(200)
        busy = page.evaluate("() => !!document.querySelector('[data-stale=true], [data-testid=stStatusWidget]')")
        idle = 0 if busy else idle + 1
    _expect()(page.get_by_test_id("stException")).to_have_count(0)


def select_option(page: Any, label: str, option: str) -> None:
    """Pick ``option`` (its name, or its name followed by more text) in the selectbox ``label``."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    # Typed first: the list is virtual, so an option far down it (a long strategy list) is not in the page yet.
    page.keyboard.type(re.sub(r"[^\w .()=,-]", "", option).strip())
    page.get_by_role("option", name=re.compile(rf"(^|\W){re.escape(option)}(\W|$)")).first.click()
    _expect()(box).to_have_value(re.compile(rf"(^|\W){re.escape(option)}(\W|$)"))


def set_slider(page: Any, label: str, value: int) -> None:
    """Move the integer slider ``label`` to ``value`` with the keyboard (Home, then one step per arrow press,
    each waited for: a press that lands while Streamlit re-renders the slider after the last one is lost,
    and is made again)."""
    thumb = page.get_by_test_id("stSlider").filter(has=page.get_by_text(label, exact=True)).get_by_role("slider")
    thumb.focus()
    thumb.press("Home")
    deadline = time.monotonic() + 30.0
    while (current := int(thumb.input_value())) != value and time.monotonic() < deadline:
        thumb.focus()
        thumb.press("ArrowRight" if current < value else "ArrowLeft")
        with contextlib.suppress(AssertionError):
            _expect()(thumb).not_to_have_value(str(current), timeout=2_000)
    _expect()(thumb).to_have_value(str(value))
    settle(page)


def screenshot(page: Any, path: Path, started: float) -> None:
    """A full-page screenshot. Streamlit scrolls inside stMain, not the document, so grow the viewport first."""
    viewport = page.viewport_size
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": viewport["width"], "height": max(height, viewport["height"])})
    page.wait_for_timeout(500)  # charts re-layout to the new size
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(viewport)
    print(f"saved {path} ({time.monotonic() - started:.1f} s into the test)")


def frames_while_playing(page: Any, last: int, every_ms: int = 40) -> list[tuple[int, float, float]]:
    """(round, score A, score B) as the page shows them, read from the replay frame's text every ``every_ms``
    while it plays, until round ``last`` shows."""
    read = """() => { const f = document.querySelector('.pdb-replay-frame'); if (!f) return null;
        const r = f.querySelector('.pdb-round').innerText.match(/Round (\\d+) of/);
        return [Number(r[1]), ...[...f.querySelectorAll('.pdb-score-value')].map(e => Number(e.innerText))]; }"""
    samples: list[tuple[int, float, float]] = []
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        shown = page.evaluate(read)
        if shown is not None:
            samples.append((shown[0], shown[1], shown[2]))
            if shown[0] == last:
                break
        page.wait_for_timeout(every_ms)
    return samples


PHONE = {"width": 390, "height": 844}


def replay_at_phone_width(page: Any, screenshots: Path) -> None:
    """At 390 x 844, Play brings the whole board into view (below the controls' row, which stays on screen), and
    nothing in the board is cut at its right edge, even with ten moves of history in each narrow column."""
    expect = _expect()
    wide = page.viewport_size
    page.set_viewport_size(PHONE)
    settle(page)
    page.get_by_role("button", name=re.compile(r"Play$")).click()  # at the end: plays again from the start
    pause = page.get_by_role("button", name=re.compile(r"Pause$"))
    expect(pause).to_be_enabled()
    page.wait_for_timeout(500)  # the scroll settles (harness.ui.phone: placed until it stays)
    board = page.locator(".pdb-replay-frame").bounding_box()
    controls = pause.bounding_box()
    assert controls["y"] >= 0 and board["y"] >= controls["y"] + controls["height"], (controls, board)
    assert board["x"] >= 0 and board["x"] + board["width"] <= PHONE["width"], board
    assert board["y"] >= 0 and board["y"] + board["height"] <= PHONE["height"], board
    page.screenshot(path=str(screenshots / "replay-390.png"))
    expect(page.get_by_text("Game over")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    cut = page.evaluate(
        """() => { const f = document.querySelector('.pdb-replay-frame').getBoundingClientRect();
        return [...document.querySelectorAll('.pdb-replay-frame *')].map(e => [e.className, e.getBoundingClientRect()])
          .filter(([, r]) => r.width > 0 && (r.left < f.left - 1 || r.right > Math.min(f.right, innerWidth) + 1))
          .map(([c, r]) => `${c}: ${Math.round(r.left)}-${Math.round(r.right)}`); }"""
    )
    assert not cut, cut
    assert "(last 10 rounds)" in page.locator(".pdb-history").first.inner_text()
    page.set_viewport_size(wide)
    settle(page)


def test_dashboard_end_to_end(page: Any, server: Server, screenshots: Path) -> None:
    started = time.monotonic()
    expect = _expect()
    page.goto(server.url)
    expect(page.get_by_role("radiogroup", name="View")).to_be_visible()
    settle(page)
    for view in [*VIEWS, RUN]:  # every view opens on an empty results folder
        open_view(page, view)

    # 🧪 Run Experiment: TFT against ALLD, a few rounds
    run_button = page.get_by_role("button", name=re.compile(r"Run experiment$"))
    expect(run_button).to_be_visible()
    # "other model…" asks for a name and a base URL on one side only: the two cards stay level all the same
    select_option(page, "Player A", OTHER_MODEL)
    model = page.get_by_role("textbox", name="Model (provider/name)")
    model.fill("mock/tft")
    model.press("Enter")
    cards = page.locator(".pdb-agent-card")
    expect(cards.first).to_contain_text("mock/tft")
    settle(page)
    tops = [cards.nth(i).bounding_box()["y"] for i in range(2)]
    assert abs(tops[0] - tops[1]) < 1, tops
    select_option(page, "Player A", "TFT")
    select_option(page, "Player B", "ALLD")
    set_slider(page, "Rounds", ROUNDS)
    screenshot(page, screenshots / "run-experiment.png", started)
    run_button.click()

    # 📊 View Results: the run lands here, with its timeline and charts
    expect(page.get_by_role("radio", name=RESULTS.split(" ", 1)[1], exact=True)).to_have_attribute(
        "aria-checked", "true", timeout=RUN_TIMEOUT_MS
    )
    timeline = page.locator(".pdb-timeline")
    expect(timeline.first).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text(LEGEND)).to_be_visible()
    dots = "".join(timeline.all_inner_texts())
    assert COOPERATE_DOT in dots and DEFECT_DOT in dots, dots  # TFT opens with C, then copies ALLD's D
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    settle(page)
    screenshot(page, screenshots / "results.png", started)

    # 🎬 Animated Replay: a step shows both players' move cards; Play animates to the end in the browser
    open_view(page, REPLAY)
    page.get_by_role("button", name=re.compile(r"Step$")).click()
    cards = page.locator(".pdb-move-card")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text(COOPERATE_CARD)  # TFT opens with C
    expect(cards.last).to_contain_text(DEFECT_CARD)  # ALLD never cooperates
    settle(page)
    screenshot(page, screenshots / "replay.png", started)
    page.get_by_role("button", name=re.compile(r"Play$")).click()
    samples = frames_while_playing(page, ROUNDS)
    # TFT against ALLD after r >= 1 rounds: TFT r - 1, ALLD r + 4 (T=5, P=1, S=0). The issue saw a third of the
    # frames sampled in a browser show a round beside the scores of another; here every one must match.
    wrong = [s for s in samples if s[1:] != ((0.0, 0.0) if s[0] == 0 else (s[0] - 1.0, s[0] + 4.0))]
    assert len({s[0] for s in samples}) > ROUNDS // 2 and not wrong, (len(samples), wrong)
    expect(page.get_by_text(f"Round {ROUNDS} of {ROUNDS}", exact=True)).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text("Game over")).to_be_visible()
    settle(page)
    replay_at_phone_width(page, screenshots)

    # 🏆 Tournament: the default players on custom payoffs, then the leaderboard with its medals
    open_view(page, TOURNAMENT)
    medal = page.get_by_text(MEDALS[0])
    expect(medal).to_have_count(0)  # no tournament yet
    page.get_by_test_id("stRadio").get_by_text("✏️ custom").click()
    settle(page)
    for name, value in (("T: temptation", "4"), ("S: sucker's payoff", "-1")):  # from axelrod's 5, 3, 1, 0
        box = page.get_by_label(name, exact=True)
        box.fill(value)
        box.press("Enter")
        settle(page)
    expect(page.get_by_text("one defects → 4 for the defector, -1 for the cooperator", exact=False)).to_be_visible()
    expect(page.get_by_text("does not hold")).to_have_count(0)  # 4 > 3 > 1 > -1 and 2R > T + S: no warning
    page.get_by_role("button", name=re.compile(r"Run tournament$")).click()
    expect(medal.first).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(page.get_by_text("🎲 Payoffs: T = 4, R = 3, P = 1, S = -1", exact=True)).to_be_visible()
    with Catalog(server.results) as cat:
        [stored] = cat.records("SELECT config_json->'$.game.payoff_matrix' AS m FROM runs WHERE kind = 'tournament'")
    assert json.loads(stored["m"]) == {"C": {"C": [3, 3], "D": [-1, 4]}, "D": {"C": [4, -1], "D": [1, 1]}}
    expect(page.get_by_role("heading", name=re.compile(r"Leaderboard"))).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()  # the matchups heatmap
    settle(page)
    screenshot(page, screenshots / "tournament.png", started)


def test_results_follow_a_running_run_on_their_own(page: Any, server: Server, tmp_path: Path) -> None:
    """A run still being written: the Results view shows its progress and, with no click, its games as they
    finish, until it ends. (Last in this module: it leaves a run in the server's folder.)"""
    expect = _expect()
    finished = tmp_path / "finished"
    run_experiment(tournament_config(["TFT", "ALLD", "GRIM"], rounds=5), results_dir=finished, run_id="live")
    held = running_copy(finished / "live.duckdb", server.results, keep=2)  # held open by its writer, in this process
    page.goto(server.url)
    open_view(page, RESULTS)
    select_option(page, "Run", "live")
    expect(page.get_by_text(re.compile(r"is running: 2 of 6 games finished"))).to_be_visible()
    held.write_games(finished / "live.duckdb", upto=5)
    # The page looks every 2.5 s (harness.ui.cached.REFRESH_S), may wait for a fresh live copy (up to 5 s,
    # harness.store.snapshot.WAIT_S), then reruns: room for a loaded machine.
    follow_s = 15
    expect(page.get_by_text(re.compile(r"is running: 5 of 6 games finished"))).to_be_visible(timeout=follow_s * 1000)
    held.write_games(finished / "live.duckdb", upto=6, status="complete")  # and its writer closes the file
    expect(page.get_by_text(re.compile(r"is running"))).to_have_count(0, timeout=follow_s * 1000)
    expect(page.get_by_role("combobox", name="Run", exact=True)).to_have_value(re.compile(r"complete 6/6"))


def test_compare_view_sets_two_models_side_by_side(page: Any, server: Server, screenshots: Path) -> None:
    started = time.monotonic()
    expect = _expect()
    for model, run_id in (("mock/tft", "compare_tft"), ("mock/defector", "compare_alld")):
        config = eval_config(model, opponents=["ALLC", "ALLD", "TFT"], rounds=6, replicates=2)
        # Model runs start an event loop of their own: off Playwright's thread, whose loop is running.
        with ThreadPoolExecutor(1) as pool:
            pool.submit(run_experiment, config, results_dir=server.results, run_id=run_id).result()
    page.goto(server.url)
    settle(page)
    open_view(page, COMPARE)
    expect(page.get_by_text("compare_alld", exact=False).first).to_be_visible()  # the newest two runs, chosen
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()
    expect(page.get_by_text(re.compile("paired by opponent and replicate")).first).to_be_visible()
    settle(page)
    screenshot(page, screenshots / "compare.png", started)
