"""The live view and the eval scorecard fit the terminal: at 80×24 every line fits, no cell takes three lines or
more, the counters are never cut, and wider terminals get more columns.

Each layout is rendered by Rich at a fixed size and compared line by line with a capture in ``golden/``
(``live_80x24.txt``, ``live_120x40.txt``, ``scorecard_80.txt``, ``scorecard_120.txt``, ``scorecard_160.txt``),
and checked for the properties above, so a change of layout shows as a diff and a broken one fails even after
the captures are regenerated. The same is checked in a real terminal (tmux) by
``tests/integration/test_terminal_tmux.py``. A deliberate change of layout: regenerate the captures with

    python -m tests.unit.test_terminal_fit

and look at them.
"""

from __future__ import annotations

import io
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from harness.analysis.report import condition_summaries
from harness.calls.limits import LimiterRegistry, LimitSettings
from harness.calls.path import CallStats
from harness.cli.progress import _View, counters
from harness.cli.render import label
from harness.cli.scorecard import Scorecard
from harness.config.engine_options import EngineOptions
from harness.config.presets.evaluation import eval_config
from harness.engine.model_games import Monitor
from harness.engine.progress import Progress
from harness.engine.runner import run_experiment
from harness.providers.ratelimit_headers import RateLimitHeaders
from harness.store.catalog import open_run

GOLDEN = Path(__file__).parent / "golden"
SIZES = [(80, 24), (120, 40)]
SCORECARD_WIDTHS = [80, 120, 160]
NOW = 1_000.0


def render(renderable: object, width: int, height: int = 24) -> list[str]:
    console = Console(file=io.StringIO(), width=width, height=height, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


# -- the live view ------------------------------------------------------------------------------------------
def monitor() -> Monitor:
    """A run 42 s in: 30 conditions of 5 games of 20 rounds (one model seat each), some with long names, the
    first 12 conditions further on than the rest; one endpoint paused by a 429."""
    names = [f"vs_RAND(p={i / 10:.1f})" for i in range(11)] + ["openai/gpt-4o-mini(temperature=0.7)_vs_ALLD"]
    names += [f"vs_{s}" for s in ("ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND")]
    names += [f"vs_{s}(noise=0.05)" for s in ("TTFT", "HTFT", "BULLY", "GRADUAL", "SMAJ", "HMAJ", "PROBER", "DONCE")]
    p = Progress(games_total=5 * len(names), per_condition_total=Counter(dict.fromkeys(names, 5)), started=NOW - 42.0)
    for i, name in enumerate(names):
        p.rounds_planned += 100  # 5 games of 20 rounds, a model move each
        p.moves_planned += 100
        p.per_condition_rounds_planned[name] += 100
        done = 3 if i < 12 else 2
        p.per_condition_done[name] = done
        p.games_done += done
        rounds = done * 20 + (7 if i % 3 else 0)
        p.per_condition_rounds[name] = rounds
        p.rounds += rounds
        p.moves += rounds
    p.games_failed = 1
    stats = CallStats(calls=1_898, cached=120, retries=3, rate_limited=2, parse_failures=4, input_tokens=812_345,
                      output_tokens=10_234, cost_usd=0.1234)  # fmt: skip
    registry = LimiterRegistry(clock=lambda: NOW)
    registry.get("openai", "https://api.openai.com/v1", "sk-a", LimitSettings()).on_rate_limited(
        12.0, limits=RateLimitHeaders(requests_remaining=0)
    )
    return Monitor(run_id="eval_20261123_101500", progress=p, stats=stats, limiters=registry)


def test_the_progress_counts_of_the_fixture_are_what_the_view_shows() -> None:
    p = monitor().progress
    # 12 conditions x (60 rounds, +7 in 8 of them) + 18 x (40, +7 in 12 of them): 720 + 56 + 720 + 84 = 1,580.
    assert p.rounds == p.moves == 1_580 and p.moves_planned == 30 * 5 * 20
    # 42 s for 1,580 moves: 1,420 left at the same rate take 42 / 1,580 * 1,420 = 37.75 s.
    assert p.seconds_left(NOW) == pytest.approx(37.7468, abs=1e-4)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_live_view_fits_the_terminal(width: int, height: int) -> None:
    m = monitor()
    lines = render(_View(m, clock=lambda: NOW), width, height)
    assert lines == golden(f"live_{width}x{height}.txt", lines)
    assert all(cell_len(line) <= width for line in lines), "a line is wider than the terminal"
    assert len(lines) <= height - 1, "the view is taller than the terminal (the counters would scroll away)"
    assert lines[0].startswith("eval_20261123_101500") and lines[0].rstrip().endswith("53%  ETA 38s")
    text = "\n".join(lines)
    for counter in counters(m, NOW):  # every counter is shown, none split across lines
        assert any(counter in line for line in lines), counter
    assert "⏸ openai paused 12 s (limit reached, Retry-After)" in text
    rows = [line for line in lines if line.startswith(" vs_") or line.startswith(" openai/")]
    if height == 24:  # 30 conditions do not fit: the rest are summed on one line
        assert len(rows) == 16 and "+ 14 more conditions" in text
    else:
        assert len(rows) == 30 and "more conditions" not in text
    assert all(line.rstrip().endswith(("3/5", "2/5")) for line in rows)  # each row one line, its games last
    # The unfinished conditions come first when not all fit, in plan order.
    assert rows[0].startswith(" vs_RAND(p=0.0)")
    if width >= 100:  # room for each condition's share and rounds
        assert "rounds" in lines[1] and any("67/100" in row and "67%" in row for row in rows)
    else:
        assert not any("67/100" in row for row in rows)


def test_a_long_condition_name_is_cut_not_wrapped() -> None:
    lines = render(_View(monitor(), clock=lambda: NOW), 80, 40)
    long = [line for line in lines if line.startswith(" openai/")]
    assert len(long) == 1 and "…" in long[0] and long[0].rstrip().endswith("3/5")


def test_conditions_stay_in_plan_order_while_they_all_fit() -> None:
    m = monitor()
    lines = render(_View(m, clock=lambda: NOW), 120, 60)
    rows = [line.split()[0] for line in lines if line.startswith(" vs_") or line.startswith(" openai/")]
    assert len(rows) == 30 and "more conditions" not in "\n".join(lines)
    assert rows[0] == "vs_RAND(p=0.0)" and rows[12] == "vs_ALLC" and rows[-1] == "vs_DONCE(noise=0.05)"


# -- the scorecard ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scorecard() -> Scorecard:
    return make_scorecard()


def make_scorecard() -> Scorecard:
    """The scorecard of a real eval of the mock model (seeded, so the same numbers every time)."""
    config = eval_config("mock/tft", opponents=["ALLC", "ALLD", "TFT", "RAND", "STFT"], rounds=12, replicates=3)
    with tempfile.TemporaryDirectory() as folder:
        run_experiment(config, results_dir=Path(folder), run_id="card", engine=EngineOptions(cache_path=None))
        with open_run(Path(folder), "card") as cat:
            return Scorecard(cat.require_run("card"), condition_summaries(cat, "card"))


def row_heights(lines: list[str], opponents: list[str]) -> list[int]:
    """The lines each row of a scorecard table takes, row by row, in every table printed: a row starts at the
    line that begins with its opponent, and ends before the next row, a blank line or a caption."""
    heights: list[int] = []
    current: int | None = None
    for line in lines:
        starts = any(line.startswith(f"  {o}") for o in opponents)
        if starts:
            if current is not None:
                heights.append(current)
            current = 1
        elif current is not None and line.strip() and line.startswith("   ") and not line.strip()[0].isalpha():
            current += 1
        elif current is not None:
            heights.append(current)
            current = None
    if current is not None:
        heights.append(current)
    return heights


@pytest.mark.parametrize("width", SCORECARD_WIDTHS)
def test_the_scorecard_fits_and_no_cell_takes_three_lines(scorecard: Scorecard, width: int) -> None:
    lines = render(scorecard, width)
    assert lines == golden(f"scorecard_{width}.txt", lines)
    assert all(cell_len(line) <= width for line in lines), "a line is wider than the terminal"
    opponents = [label(s.seats[1].name) for s in scorecard.summaries]
    heights = row_heights(lines, opponents)
    tables = sum("Scorecard card" in line for line in lines)
    assert len(heights) == tables * len(opponents)
    assert max(heights) <= 2, f"a row takes {max(heights)} lines"
    text = "\n".join(lines)
    for column in ("cooperation", "retaliation", "forgiveness", "failures"):
        assert column in text  # every column is somewhere, whatever the width
    if width == 80:
        assert tables == 2 and "Scorecard card, continued" in text
    elif width == 120:  # one table, each interval under its mean
        assert tables == 1 and max(heights) == 2
    else:  # room for every interval beside its mean
        assert tables == 1 and max(heights) == 1 and "parse failures" in text


def golden(name: str, lines: list[str]) -> list[str]:
    """The stored capture ``name``, or, when regenerating, ``lines`` written there."""
    path = GOLDEN / name
    if REGENERATE:
        path.write_text("\n".join(lines) + "\n")
    return path.read_text().splitlines()


REGENERATE = False

if __name__ == "__main__":
    REGENERATE = True
    for width, height in SIZES:
        test_the_live_view_fits_the_terminal(width, height)
    card = make_scorecard()
    for width in SCORECARD_WIDTHS:
        test_the_scorecard_fits_and_no_cell_takes_three_lines(card, width)
    print(f"captures written to {GOLDEN}")
