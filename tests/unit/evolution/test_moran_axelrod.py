"""PDBench's Moran process against the Axelrod library's MoranProcess.

``tests/fixtures/axelrod_moran.json`` was written by ``tests/axelrod_reference/generate_moran_fixture.py`` with
axelrod 4.14: one mutant among 9 residents (TFT among ALLD, ALLD among TFT), 200 turns, default game, birth-death,
no mutation, no fitness transformation, once per seed over thousands of seeds. axelrod cannot be installed here
(it needs PyTorch), so its runs are read from the fixture. PDBench runs the same process over its own seeds;
the two fixation frequencies must agree by a two-proportion z-test (|z| < 3), the mean steps to absorption by
a two-sample z-test, and each frequency must agree with the exact formula.

axelrod scores a match per turn rather than in total; with a fixed number of turns that scales every fitness
by the same factor, which proportional selection ignores, so the two processes are the same process.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.unit.evolution.two_types import MUTANT_RUNS, RHO_ALLD, RHO_TFT, N, mutant_runs, within_3_se

FIXTURE = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "axelrod_moran.json").read_text())
SCENARIOS = {"TFT_among_ALLD": ("TFT", 3000, RHO_TFT), "ALLD_among_TFT": ("ALLD", 6000, RHO_ALLD)}


def test_the_fixture_is_the_process_we_run() -> None:
    assert FIXTURE["axelrod_version"] == "4.14.0"
    assert (FIXTURE["population"], FIXTURE["turns"], FIXTURE["noise"]) == (N, 200, 0)
    assert FIXTURE["game"] == {"R": 3, "S": 0, "T": 5, "P": 1}
    assert set(FIXTURE["scenarios"]) == set(SCENARIOS)
    for name, scenario in FIXTURE["scenarios"].items():
        assert scenario["mutant"] == SCENARIOS[name][0]
        assert scenario["fixations"] == len(scenario["fixed_seeds"])
        assert all(
            scenario["first_seed"] <= s < scenario["first_seed"] + scenario["runs"] for s in scenario["fixed_seeds"]
        )


@pytest.mark.slow
@pytest.mark.xdist_group(MUTANT_RUNS)
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_fixation_frequency_agrees_with_axelrod(name: str) -> None:
    mutant, runs, rho = SCENARIOS[name]
    theirs = FIXTURE["scenarios"][name]
    ours = mutant_runs(mutant, runs)
    n1, n2 = ours.runs, theirs["runs"]
    p1, p2 = ours.frequency, theirs["fixations"] / n2
    pooled = (ours.fixations + theirs["fixations"]) / (n1 + n2)
    z = (p1 - p2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert abs(z) < 3, (name, p1, p2, z)
    # and axelrod's own frequency agrees with the closed form, as ours does (test_moran_exact)
    assert within_3_se(p2, rho, n2), (name, p2, rho)


@pytest.mark.slow
@pytest.mark.xdist_group(MUTANT_RUNS)
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_mean_steps_to_absorption_agree_with_axelrod(name: str) -> None:
    mutant, runs, _ = SCENARIOS[name]
    theirs = FIXTURE["scenarios"][name]
    ours = mutant_runs(mutant, runs)
    n2 = theirs["runs"]
    their_mean = theirs["steps_sum"] / n2
    their_var = (theirs["steps_sum_squares"] - n2 * their_mean**2) / (n2 - 1)
    z = (ours.mean_steps - their_mean) / math.sqrt(ours.var_steps / ours.runs + their_var / n2)
    assert abs(z) < 3, (name, ours.mean_steps, their_mean, z)
