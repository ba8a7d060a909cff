"""Reports that fit: ``pdbench report`` (the per-condition table, the model answers, the comprehension checks),
``pdbench runs``, ``pdbench strategies`` and ``pdbench evolve``'s result, rendered by Rich at 80, 100 and 120
columns. At each width every line fits, nothing is cut with an ellipsis, and every name and number is on a line
whole; wide enough, the one-line-per-row layouts come back. Piped, the commands lay out for 100 columns, or for
``--width``."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from rich.cells import cell_len
from rich.console import Console

from harness.analysis.evolution import CellSummary
from harness.analysis.report import ConditionSummary, SeatSummary
from harness.analysis.sfem import STRATEGIES as SFEM_STRATEGIES
from harness.analysis.sfem import PlayerSfem, SfemFit
from harness.analysis.stats import Estimate
from harness.cli.evolve_view import SharesTable
from harness.cli.render import SfemTable
from harness.cli.report_view import MEASURES, Comprehension, ModelAnswers, RunReport
from harness.cli.run_list import RunList
from harness.cli.strategy_list import StrategyList
from harness.cli.sweep_report import SweepTable
from harness.players.strategies import STRATEGIES
from harness.store.browse import RunEntry
from tests.conftest import write_games
from tests.support.cli import pdbench

WIDTHS = [80, 100, 120]
LONG_A = "openai/gpt-4o-mini-2024-07-18"
LONG_B = "anthropic/claude-3-5-haiku-latest"


def render(renderable: object, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def assert_fits(lines: list[str], width: int, whole: list[str]) -> None:
    """Every line within ``width``, no ellipsis, and each of ``whole`` on some line unbroken."""
    assert max(cell_len(line) for line in lines) <= width
    assert not any("…" in line for line in lines)
    missing = [w for w in whole if not any(w in line for line in lines)]
    assert not missing, missing


def seat(player: str, name: str, shift: float) -> SeatSummary:
    estimates = {
        "payoff_per_round": Estimate(2.2222 + shift, 0.8912 + shift, 3.5532 + shift, 3),
        "cooperation_rate": Estimate(0.611, 0.0, 1.0, 3),  # an interval cut at both bounds: [0.0, 100.0]
        "retaliation_rate": Estimate(0.444, 0.0, 0.9, 3),
        "forgiveness_rate": Estimate(0.556, 0.1, 1.0, 3),
        "exploitability_gap": Estimate(-1.7 + shift, -8.9, 5.5 + 2 * shift, 3),
        "time_to_collapse": Estimate(12.5, 10.2, 14.8, 2),
    }
    return SeatSummary(player, name, estimates, collapsed=2)


SUMMARIES = [
    ConditionSummary("cooperative_vs_competitive_persona", 3, (seat("a", LONG_A, 0.0), seat("b", LONG_B, 0.25))),
    ConditionSummary("tft_vs_alld", 5, (seat("a", "TFT", 0.5), seat("b", "ALLD", 0.75))),
]
RUN = {"run_id": "experiment_20261129_164800", "status": "complete"}


def report_words() -> list[str]:
    words = [RUN["run_id"], LONG_A, LONG_B, "cooperative_vs_competitive_persona", "tft_vs_alld"]
    for s in SUMMARIES:
        for st in s.seats:
            for key, _, digits, pct in MEASURES:
                words += [p for p in st.estimates[key].parts(digits, pct) if p]
            words += [f"({st.collapsed}/{s.games})"]
    return words


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits_and_keeps_every_name_and_number_whole(width: int) -> None:
    assert_fits(render(RunReport(RUN, SUMMARIES), width), width, report_words())


def test_wide_enough_each_seat_is_one_line_with_its_intervals() -> None:
    lines = render(RunReport(RUN, SUMMARIES), 220)
    payoff = SUMMARIES[0].seats[0].estimates["payoff_per_round"].fmt(3)
    assert any(LONG_A in line and payoff in line and "[0.0, 100.0]" in line for line in lines)


def test_between_the_two_the_conditions_are_one_table_with_intervals_under_means() -> None:
    lines = render(RunReport(RUN, SUMMARIES), 140)
    assert sum("cooperation" in line for line in lines) == 1  # one heading: one table, not one per condition
    assert not any(LONG_A in line and "2.222" in line and "±" in line for line in lines)


def answers_row(name: str) -> dict[str, object]:
    return {"player_name": name, "games": 12, "answers": 1234, "unreadable": 17, "parse_failure_rate": 17 / 1234,
            "fallback_rounds": 3, "rounds": 1200, "fallback_rate": 3 / 1200,
            "parser_rounds": 1100, "reask_rounds": 97}  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
def test_the_model_answers_fit(width: int) -> None:
    rows = [answers_row(LONG_A), answers_row(LONG_B)]
    assert_fits(render(ModelAnswers(rows), width), width, [LONG_A, LONG_B, "1,234", "1.4%", "0.2%"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_comprehension_checks_fit(width: int) -> None:
    rows = [
        {"player_name": name, "kind": kind, "questions": 120, "answered": 118, "correct": 97, "accuracy": 97 / 120}
        for name in (LONG_A, LONG_B)
        for kind in ("payoff_from_outcome", "opponent_last_move")
    ]
    assert_fits(render(Comprehension(rows), width), width, [LONG_A, LONG_B, "payoff_from_outcome", "80.8%"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_strategies_fit_with_every_name_and_parameter_whole(width: int) -> None:
    from harness.cli.strategy_list import _params

    words = [w for name, cls in STRATEGIES.items() for w in (name, cls.display_name, *_params(cls))]
    assert_fits(render(StrategyList(), width), width, words)


def test_wide_enough_the_strategies_are_a_table_with_a_description_column() -> None:
    assert any("description" in line for line in render(StrategyList(), 160))
    assert not any("description" in line for line in render(StrategyList(), 80))


@pytest.mark.parametrize("width", [*WIDTHS, 50])
def test_the_evolution_result_fits(width: int) -> None:
    players = ("ALLD", "TFT", "GTFT(generous_prob=0.3333333333)", "RAND(p=0.25)")
    table = SharesTable(players, np.array([0.0, 0.37, 0.63, 0.0]), np.array([0, 37, 63, 0]), "Final shares")
    assert_fits(render(table, width), width, [*players, "63.0%", "37.0%", "63"])


@pytest.mark.parametrize("width", WIDTHS)
def test_the_runs_fit_with_every_model_whole(width: int) -> None:
    when = datetime(2026, 11, 29, 16, 48)
    runs = [
        RunEntry("experiment_20261129_164800", "complete", "experiment", when, 9, 9, 0.0, (LONG_A, LONG_B),
                 ("TFT", "ALLD", "GTFT", "RAND")),
        RunEntry("eval_20261129_164900", "complete", "eval", when, 12, 12, 0.0123, ("mock/tft",), ("TFT", "ALLD")),
    ]  # fmt: skip
    assert_fits(render(RunList(runs), width), width, [LONG_A, LONG_B, "experiment_20261129_164800", "$0.0123"])


PIPED = (((), 100), (("--width", "80"), 80), (("--width", "200"), 200))


def test_piped_report_lays_out_for_100_columns_or_for_width(results: Path) -> None:
    write_games(results, "a_run_with_a_rather_long_identifier", [("CDDC", "DCCD"), ("CCDD", "DDCC")]).close()
    reports = {}
    for args, width in PIPED:
        code, out, err = pdbench("report", "a_run_with_a_rather_long_identifier", "--results", results, *args)
        assert code == 0, err
        assert max(map(cell_len, out.splitlines())) <= width and "…" not in out
        reports[width] = out
    assert len(set(reports.values())) == 3  # a layout for each width
    assert max(map(cell_len, reports[200].splitlines())) > 100  # the wide one, one line a seat


def test_piped_runs_and_strategies_lay_out_for_100_columns_or_for_width(results: Path) -> None:
    write_games(results, "a_run_with_a_rather_long_identifier", [("CDDC", "DCCD")]).close()
    for args, width in PIPED:
        code, out, _ = pdbench("strategies", *args)
        assert code == 0 and max(map(cell_len, out.splitlines())) <= width and "…" not in out
        code, out, _ = pdbench("runs", "--results", results, *args)
        assert code == 0 and max(map(cell_len, out.splitlines())) <= width
        assert "a_run_with_a_rather_long_identifier" in out


def sfem_fits() -> list[PlayerSfem]:
    n = len(SFEM_STRATEGIES)
    shares = tuple(round((i + 1) / (n * (n + 1) / 2), 4) for i in range(n))  # distinct, summing to 1
    fit = SfemFit(3, shares, 0.8765, -12.5, tuple(0.0123 * (i + 1) for i in range(n)), 0.0456)
    return [
        PlayerSfem(name, condition, seat_, fit)
        for condition in ("cooperative_vs_competitive_persona", "tft_vs_alld")
        for seat_, name in (("a", LONG_A), ("b", LONG_B))
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_strategy_frequency_estimation_fits_split_over_tables(width: int) -> None:
    fits = sfem_fits()
    fit = fits[0].fit
    numbers = [f"{v:.2f}" for v in (*fit.shares, fit.beta)] + [f"± {v:.2f}" for v in (*(fit.share_se or ()), 0.0456)]
    lines = render(SfemTable(fits, "SFEM"), width)
    assert_fits(lines, width, [LONG_A, LONG_B, "cooperative_vs_competitive_persona", *numbers])
    headings = " ".join(lines)
    assert all(f" {name} " in f" {headings} " for name in SFEM_STRATEGIES) and "β" in headings


@pytest.mark.parametrize("width", WIDTHS)
def test_a_sweep_report_fits(width: int) -> None:
    players = ("ALLD", "TFT", "GTFT(generous_prob=0.3333333333)", "RAND(p=0.25)", "WSLS", "GRIM")
    cells = [
        CellSummary({"selection": s}, 2, 0, {p: Estimate(0.225, 0.0, 1.0, 2) for p in players}, {"TFT": 2})
        for s in (0.5, 1.0)
    ]
    words = [*players, "selection=0.5", "selection=1.0", "22.5% [0.0, 100.0]", "fixed in 2"]
    assert_fits(render(SweepTable("sw1", cells), width), width, words)
