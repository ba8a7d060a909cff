"""Payne & Alloui-Cros (2025)'s population update (harness/evolution/squared_share.py).

Hand-worked phases pin each step (the unweighted mean, the square, halves to even, the -1 and +1 nudges and their
ties, extinction, the shared budget); the released runs pin the whole: from each phase's released tallies the
update gives the next released population, 16 times over four runs (tests/fixtures/payne2025/README.md).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.evolution.squared_share import NUDGE_BUDGET, next_counts, pooled_fitness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "payne2025"

# [R] main()'s population order, which decides the ties in the nudges.
ORDER = [
    "TitForTat",
    "GrimTrigger",
    "WinStayLoseShift",
    "Random",
    "GenerousTFT",
    "SuspiciousTFT",
    "Gradual",
    "Prober",
    "Alternator",
    "Bayesian",
    "OpenAI",
    "Gemini",
]


def test_equal_fitness_leaves_the_population_as_it_is() -> None:
    # Every relative fitness is 1, so every count is its own.
    assert next_counts({"A": 2, "B": 5, "C": 1}, {"A": 2.5, "B": 2.5, "C": 2.5}) == {"A": 2, "B": 5, "C": 1}


def test_the_mean_is_unweighted_and_halves_round_to_even() -> None:
    # Mean (1 + 3) / 2 = 2 whatever the counts (weighted by 10 and 2 it would be 4/3).
    # A: (1/2)^2 * 10 = 2.5 -> 2; B: (3/2)^2 * 2 = 4.5 -> 4 (half-up would give 3 and 5).
    # Total 6 < 12: the 6 missing agents all go to the fittest, B: 4 + 6 = 10.
    assert next_counts({"A": 10, "B": 2}, {"A": 1.0, "B": 3.0}) == {"A": 2, "B": 10}
    # A: 0.25 * 14 = 3.5 -> 4; B: 2.25 * 1 -> 2; total 6 < 15, B gets 9 more.
    assert next_counts({"A": 14, "B": 1}, {"A": 1.0, "B": 3.0}) == {"A": 4, "B": 11}


def test_a_strategy_rounded_to_zero_is_gone() -> None:
    # A: 0.25 * 1 = 0.25 -> 0; B: 2.25 * 1 = 2.25 -> 2; the total is already 2.
    assert next_counts({"A": 1, "B": 1}, {"A": 1.0, "B": 3.0}) == {"B": 2}


def test_the_surplus_is_taken_from_the_weakest_still_present() -> None:
    # Mean 2; raw counts 0.25 * 4 = 1, 1 * 4 = 4, 2.25 * 4 = 9: total 14 > 12.
    # First -1 from A (1 -> 0, extinct), then A is at 0, so the next -1 is from B (4 -> 3).
    assert next_counts({"A": 4, "B": 4, "C": 4}, {"A": 1.0, "B": 2.0, "C": 3.0}) == {"B": 3, "C": 9}


def test_nudge_ties_go_to_the_first_in_population_order() -> None:
    # Mean 2; A and B: 2.25 -> 2 each, C: 0 -> 0; total 4 > 3, and A and B tie as the weakest present.
    assert next_counts({"A": 1, "B": 1, "C": 1}, {"A": 3.0, "B": 3.0, "C": 0.0}) == {"A": 1, "B": 2}
    assert next_counts({"B": 1, "A": 1, "C": 1}, {"A": 3.0, "B": 3.0, "C": 0.0}) == {"B": 1, "A": 2}
    # Mean 2.5; A, B: 1.44 -> 1; C: 0.36 * 2 = 0.72 -> 1; total 3 < 4, and A and B tie as the fittest.
    assert next_counts({"A": 1, "B": 1, "C": 2}, {"A": 3.0, "B": 3.0, "C": 1.5}) == {"A": 2, "B": 1, "C": 1}
    assert next_counts({"B": 1, "A": 1, "C": 2}, {"A": 3.0, "B": 3.0, "C": 1.5}) == {"B": 2, "A": 1, "C": 1}


def test_the_nudge_budget_can_run_out() -> None:
    # 12 strategies of 2 (N = 24); only A scores: mean 12 / 12 = 1, A's raw count 12^2 * 2 = 288, the rest 0.
    # Bringing 288 back to 24 takes 264 single steps; the budget of 100 stops at 188, as [R] would.
    counts = {"A": 2} | {f"S{i}": 2 for i in range(11)}
    fitness = {"A": 12.0} | {f"S{i}": 0.0 for i in range(11)}
    assert NUDGE_BUDGET == 100
    assert next_counts(counts, fitness) == {"A": 288 - 100}
    assert next_counts(counts, fitness, budget=264) == {"A": 24}


def test_all_fitness_zero_empties_the_population() -> None:
    assert next_counts({"A": 2, "B": 2}, {"A": 0.0, "B": 0.0}) == {}


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="exactly the strategies present"):
        next_counts({"A": 2, "B": 2}, {"A": 1.0})
    with pytest.raises(ConfigError, match="exactly the strategies present"):
        next_counts({"A": 2, "B": 0}, {"A": 1.0, "B": 1.0})
    with pytest.raises(ConfigError, match="finite"):
        next_counts({"A": 2}, {"A": float("nan")})
    with pytest.raises(ConfigError, match=">= 0"):
        next_counts({"A": -1, "B": 2}, {"B": 1.0})
    with pytest.raises(ConfigError, match="at least one round"):
        pooled_fitness(10, 0)


def test_pooled_fitness_is_a_ratio_of_sums() -> None:
    # 75 % run, phase 4, Gemini: 561 points over 530 rounds (the released ScorePerMove is 1.058).
    assert pooled_fitness(561, 530) == pytest.approx(1.0585, abs=5e-5)


def _released() -> tuple[dict[str, dict[int, dict[str, float]]], dict[str, dict[int, dict[str, int]]]]:
    fitness: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    with (FIXTURES / "tallies.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            phase = fitness[row["run"]].setdefault(int(row["phase"]), {})
            phase[row["strategy"]] = pooled_fitness(int(row["total_score"]), int(row["total_rounds"]))
    populations: dict[str, dict[int, dict[str, int]]] = defaultdict(dict)
    with (FIXTURES / "populations.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            populations[row["run"]][int(row["phase"])] = {name: int(row[name]) for name in ORDER}
    return fitness, populations


FITNESS, POPULATIONS = _released()
UPDATES = [(run, phase) for run in sorted(POPULATIONS) for phase in (1, 2, 3, 4)]


def test_the_fixture_holds_four_runs_from_two_of_each() -> None:
    assert len(UPDATES) == 16
    assert all(POPULATIONS[run][1] == dict.fromkeys(ORDER, 2) for run in POPULATIONS)


@pytest.mark.parametrize(("run", "phase"), UPDATES)
def test_the_update_reproduces_the_released_population(run: str, phase: int) -> None:
    before = {name: count for name, count in POPULATIONS[run][phase].items() if count > 0}
    after = {name: count for name, count in POPULATIONS[run][phase + 1].items() if count > 0}
    assert next_counts(before, FITNESS[run][phase]) == after
    assert sum(after.values()) == 24
