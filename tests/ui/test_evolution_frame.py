"""The Evolution view's frame: one element per generation, its bars and its agent grid drawn from that generation."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from harness.evolution import Fixation, PayoffSource, PayoffTable, Trajectory, evolve
from harness.ui import charts
from harness.ui.evolution_frame import FRAME_CLASS, Film, apportion, colours, emoji_of, frame_html, layout
from harness.ui.evolution_setup import Form


def trajectory(rows: list[list[int]], fixation: Fixation | None = None, players: tuple[str, ...] = ("ALLC", "ALLD")):
    k = len(players)
    table = PayoffTable(players, np.zeros((k, k)), np.ones((k, k), dtype=np.int64), PayoffSource.played_once)
    population = np.array(rows, dtype=np.int64)
    return Trajectory(players, population, int(population[0].sum()), fixation, table)


def bars(page: str) -> list[tuple[str, int]]:
    return [(p, int(c)) for p, c in re.findall(r"class='pdb-evo-bar' data-player='([^']*)' data-count='(\d+)'", page)]


def cells(page: str) -> list[int]:
    return [int(t) for t in re.findall(r"class='pdb-evo-cell' data-player='(\d+)'", page)]


def test_layout_keeps_individuals_in_place() -> None:
    """Hand-worked: ALLC loses its last cell to ALLD, then its first; ALLD's cells never move."""
    grid = layout(np.array([[2, 1], [1, 2], [0, 3]]))
    assert grid.tolist() == [[0, 0, 1], [0, 1, 1], [1, 1, 1]]
    grid = layout(np.array([[1, 1, 2], [2, 0, 2], [0, 2, 2]]))
    assert grid.tolist() == [[0, 1, 2, 2], [0, 0, 2, 2], [1, 1, 2, 2]]


def test_layout_matches_counts_and_changes_only_what_was_replaced() -> None:
    settings = Form(
        players=("ALLC", "ALLD", "TFT", "GRIM"), counts=(9, 8, 8, 8), mutation=0.1, generations=60, k=3, noise=0.05
    ).settings()
    t = evolve(settings)
    counts = np.asarray(t.population)
    grid = layout(counts)
    assert grid.shape == (counts.shape[0], 33)
    for g in range(counts.shape[0]):
        assert np.bincount(grid[g], minlength=4).tolist() == counts[g].tolist()
    for g in range(1, counts.shape[0]):
        gained = int(np.clip(counts[g] - counts[g - 1], 0, None).sum())
        assert int((grid[g] != grid[g - 1]).sum()) == gained  # as few changes as the counts allow
    assert any((grid[g] != grid[g - 1]).any() for g in range(1, counts.shape[0]))


def test_a_frame_is_one_element_built_from_one_generation() -> None:
    t = trajectory([[3, 1], [2, 2], [1, 3], [0, 4]], Fixation(3, "ALLD"))
    film = Film.of(t, planned=10)
    assert film.length == 3
    for g, (allc, alld) in enumerate([(3, 1), (2, 2), (1, 3), (0, 4)]):
        page = frame_html(film, g)
        assert page.count(f"class='{FRAME_CLASS}'") == 1
        assert f"data-generation='{g}'" in page and f"data-counts='{allc},{alld}'" in page
        assert f"Generation {g} of 3" in page
        assert bars(page) == [("ALLC", allc), ("ALLD", alld)]
        assert f"{allc} · {allc / 4:.0%}" in page
        grid = cells(page)
        assert len(grid) == 4 and grid.count(0) == allc and grid.count(1) == alld
        tiles = re.findall(r"class='pdb-evo-cell'[^>]*>([^<]*)</span>", page)
        assert tiles.count(emoji_of("ALLD")) == alld and tiles.count(emoji_of("ALLC")) == allc
    assert "The initial population" in frame_html(film, 0)
    last = frame_html(film, 3)
    assert "ALLD has taken over" in last and "the run stopped (10 were asked for)" in last
    assert "taken over" not in frame_html(film, 2)


def test_replicator_shares_are_drawn_as_individuals() -> None:
    assert apportion(np.array([0.5, 0.25, 0.25]), 10).tolist() == [5, 3, 2]  # 5, 2.5, 2.5: the tie goes first
    settings = Form(players=("TFT", "ALLD"), counts=(6, 4), dynamics="replicator", generations=5).settings()
    t = evolve(settings)
    assert t.size is None
    film = Film.of(t, planned=5, drawn=10)
    page = frame_html(film, film.length)
    shares = t.shares()[-1]
    assert len(cells(page)) == 10 and cells(page).count(0) == round(shares[0] * 10)
    assert f"{shares[0]:.1%}" in page and "shares drawn as 10 individuals" in page


def test_emoji_and_colours_are_the_strategies_own() -> None:
    assert emoji_of("GTFT(generous_prob=0.3)") == emoji_of("GTFT") == "😇"
    assert emoji_of("mock/tft") == "🤖" and emoji_of("TFT") == "🪞"
    players = ("TFT", "GTFT", "GTFT(generous_prob=0.3)", "HMAJ", "SMAJ")
    assigned = colours(players)
    assert len(set(assigned)) == len(players)
    assert assigned[1] == colours(("GTFT",))[0]  # the first GTFT keeps its colour


def test_player_names_are_escaped() -> None:
    t = trajectory([[1, 1], [0, 2]], players=("TFT", "mock/<b>x</b>"))
    page = frame_html(Film.of(t, planned=1), 0)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_shares_over_time_stacks_every_generation() -> None:
    t = trajectory([[3, 1], [2, 2], [0, 4]])
    chart = charts.shares_over_time(t.players, t.shares(), ["#111111", "#222222"], ["🕊️ ALLC", "😈 ALLD"])
    spec = chart.to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [(r["generation"], r["player"], r["share"]) for r in rows] == [
        (0, "🕊️ ALLC", 0.75), (0, "😈 ALLD", 0.25), (1, "🕊️ ALLC", 0.5), (1, "😈 ALLD", 0.5),
        (2, "🕊️ ALLC", 0.0), (2, "😈 ALLD", 1.0),
    ]  # fmt: skip
    assert spec["encoding"]["y"]["stack"] == "normalize"
    assert spec["encoding"]["color"]["scale"] == {"domain": ["🕊️ ALLC", "😈 ALLD"], "range": ["#111111", "#222222"]}
    assert json.dumps(["🕊️ ALLC", "😈 ALLD"]) in spec["transform"][0]["calculate"]


@pytest.mark.parametrize("size", [2, 25, 200])
def test_grid_is_square(size: int) -> None:
    t = trajectory([[size - 1, 1]])
    page = frame_html(Film.of(t, planned=1), 0)
    columns = int(re.search(r"grid-template-columns:repeat\((\d+),", page).group(1))  # type: ignore[union-attr]
    assert columns * columns >= size > (columns - 1) * (columns - 1) or size == 2
