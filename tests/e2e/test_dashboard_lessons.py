"""End to end, the teaching views: an Evolution preset run, played and reopened; custom payoffs and the grid in view
at phone width; a match played by hand in the Play view (at phone width too). A module of its own so that the
serial run's two workers share the dashboard's end-to-end tests (each module starts its own server and Chromium).
Deselect with ``-m "not e2e"``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.evolution.scenarios import SCENARIOS_BY_KEY, same_settings
from harness.store.evolution_writer import list_evolution_runs, read_evolution
from harness.ui.play_board import BOARD_CLASS
from harness.ui.views import EVOLUTION, PLAY
from tests.e2e.conftest import Server
from tests.e2e.test_dashboard import (
    PHONE,
    RUN_TIMEOUT_MS,
    _expect,
    open_view,
    screenshot,
    set_slider,
    settle,
)

pytestmark = [pytest.mark.serial, pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("e2e-lessons")]


EvolutionSample = tuple[int, int, list[int], list[int]]


def evolution_frames_while_playing(page: Any, last: int, every_ms: int = 40) -> list[EvolutionSample]:
    """(label's generation, data-generation, bar counts, grid counts per player) of the evolution frame as the page
    shows it, read every ``every_ms`` while it plays, until generation ``last`` shows."""
    read = """() => { const f = document.querySelector('.pdb-evo-frame'); if (!f) return null;
        const g = Number(f.querySelector('.pdb-generation').innerText.match(/Generation (\\d+) of/)[1]);
        const bars = [...f.querySelectorAll('.pdb-evo-bar')].map(b => Number(b.dataset.count));
        const cells = [...f.querySelectorAll('.pdb-evo-cell')].map(c => Number(c.dataset.player));
        return [g, Number(f.dataset.generation), bars, bars.map((_, i) => cells.filter(c => c === i).length)]; }"""
    samples: list[EvolutionSample] = []
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        shown = page.evaluate(read)
        if shown is not None:
            samples.append((shown[0], shown[1], shown[2], shown[3]))
            if shown[0] == last:
                break
        page.wait_for_timeout(every_ms)
    return samples


def test_evolution_view_runs_plays_and_reopens(page: Any, server: Server, screenshots: Path) -> None:
    """A preset runs in the browser and shows its lesson; Play animates it, every frame's label, bars and grid
    from the same generation, each the population stored in the run's file; the run is listed to reopen."""
    started = time.monotonic()
    expect = _expect()
    page.goto(server.url)
    expect(page.get_by_role("radiogroup", name="View")).to_be_visible()
    settle(page)
    open_view(page, EVOLUTION)
    preset = SCENARIOS_BY_KEY["exploited"]
    page.get_by_role("button", name=re.compile(r"Exploited$")).click()
    expect(page.get_by_text(preset.lesson)).to_be_visible(timeout=RUN_TIMEOUT_MS)
    settle(page)
    run = next(r for r in list_evolution_runs(server.results) if same_settings(r.settings, preset.settings()))
    _, trajectory = read_evolution(server.results, run.run_id)
    population = np.asarray(trajectory.population).tolist()
    last = len(population) - 1
    expect(page.get_by_role("combobox", name="Evolution run", exact=True)).to_have_value(re.compile(run.run_id))
    expect(page.get_by_text(f"Generation 0 of {last}", exact=True)).to_be_visible()

    page.get_by_role("button", name=re.compile(r"Play$")).click()
    samples = evolution_frames_while_playing(page, last)
    wrong = [s for s in samples if not (s[0] == s[1] and s[2] == s[3] == population[s[0]])]
    assert len({s[0] for s in samples}) > last // 2 and not wrong, (len(samples), wrong)
    expect(page.get_by_text(re.compile(r"TFT has taken over"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
    settle(page)
    set_slider(page, "Jump to generation", 2)  # mid-run: ALLD at its peak, ALLC nearly gone
    expect(page.get_by_text("Generation 2 of 7", exact=True)).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible()  # the shares over generations
    settle(page)
    screenshot(page, screenshots / "evolution.png", started)


def test_evolution_custom_payoffs_and_the_grid_in_view_at_phone_width(
    page: Any, server: Server, screenshots: Path
) -> None:
    """A teacher's own payoffs: a game that is not a prisoner's dilemma is warned of, and the run plays and stores
    exactly the matrix typed. At 390 × 844, Play brings the whole grid into view, unclipped."""
    started = time.monotonic()
    expect = _expect()
    page.goto(server.url)
    settle(page)
    open_view(page, EVOLUTION)
    page.get_by_text("Your own T, R, P, S").click()
    settle(page)

    def enter(name: str, value: str) -> None:
        box = page.get_by_role("spinbutton", name=name)
        box.fill(value)
        box.press("Enter")
        expect(box).to_have_value(value)
        settle(page)

    enter("R · reward", "4")  # above T = 3: no temptation left
    expect(page.get_by_text(re.compile(r"not a prisoner's dilemma: T > R > P > S does not hold"))).to_be_visible()
    for name, value in (("T · temptation", "7"), ("P · punishment", "1"), ("S · sucker's payoff", "-2")):
        enter(name, value)
    expect(page.get_by_text(re.compile("not a prisoner's dilemma"))).to_have_count(0)
    before = {r.run_id for r in list_evolution_runs(server.results)}
    page.get_by_role("button", name=re.compile(r"Run evolution$")).click()
    expect(page.get_by_text(re.compile(r"ran \d+ generations? in"))).to_be_visible(timeout=RUN_TIMEOUT_MS)
    settle(page)
    (run,) = [r for r in list_evolution_runs(server.results) if r.run_id not in before]
    matrix = run.settings.payoff_matrix
    assert (matrix.T, matrix.R, matrix.P, matrix.S) == (7.0, 4.0, 1.0, -2.0)

    page.set_viewport_size({"width": 390, "height": 844})
    settle(page)
    play = page.get_by_role("button", name=re.compile(r"Play$"))
    play.scroll_into_view_if_needed()  # where a user has scrolled to press it
    play.click()
    page.wait_for_timeout(1_500)  # the page scrolls the controls' row to the top once play has started
    box = page.locator(".pdb-evo-grid-card").bounding_box()
    assert box is not None
    assert box["y"] >= 0 and box["y"] + box["height"] <= 844, box  # the whole grid on the screen
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    clipped = page.evaluate(
        "() => [...document.querySelectorAll('.pdb-evo-grid-card, .pdb-evo-grid')]"
        ".some(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)"
    )
    assert not clipped
    screenshot(page, screenshots / "evolution_390.png", started)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_play_view_plays_by_hand_with_the_board_in_view(page: Any, server: Server, screenshots: Path) -> None:
    """Three rounds against Copycat (typed: TFT's other name) at 1280 px, the scores as the trust payoffs make
    them; then at phone width a move pressed leaves the whole board in the viewport."""
    started = time.monotonic()
    expect = _expect()
    page.goto(server.url)
    expect(page.get_by_role("radiogroup", name="View")).to_be_visible()
    settle(page)
    open_view(page, PLAY)
    box = page.get_by_role("combobox", name="Opponent", exact=True)
    box.click()
    box.fill("Copycat")
    box.press("Enter")
    expect(box).to_have_value(re.compile(r"TFT · Tit for Tat"))
    settle(page)
    board = page.locator(f".{BOARD_CLASS}")
    for move in ("Cooperate", "Cheat", "Cooperate"):
        page.get_by_role("button", name=re.compile(rf"{move}$")).click()
        settle(page)
    # The Evolution of Trust's coins (R 2, S -1, T 3, P 0): you C, D, C; TFT C, C, D: 2 + 3 - 1 and 2 - 1 + 3
    expect(board).to_have_attribute("data-round", "3")
    expect(board.locator(".pdb-score-you")).to_have_text("4")
    expect(board.locator(".pdb-score-them")).to_have_text("4")
    expect(board.get_by_text("Round 4 of 10: your move")).to_be_visible()
    expect(page.locator(".pdb-payoff-last")).to_contain_text("you -1 · TFT +3")
    screenshot(page, screenshots / "play.png", started)

    page.set_viewport_size(PHONE)
    page.get_by_role("button", name=re.compile(r"New match$")).click()
    settle(page)
    cheat = page.get_by_role("button", name=re.compile(r"Cheat$"))
    cheat.click()
    settle(page)
    expect(board).to_have_attribute("data-round", "1")
    shown, button = board.bounding_box(), cheat.bounding_box()
    assert shown["y"] >= 0 and shown["y"] + shown["height"] <= PHONE["height"], shown
    assert button["y"] >= 0 and button["y"] + button["height"] <= shown["y"], (button, shown)
