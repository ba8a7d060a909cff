"""The pairwise-comparison (Fermi) figures against EGTtools on the same tables: the fixation matrix (its Python
StochDynamics and its C++ PairwiseComparison), the small-mutation-limit stationary distribution and the gradient
of selection, from the committed fixture ``tests/fixtures/egttools_analysis.json`` (made by
tests/reference/generate_egttools_fixture.py in a separate virtualenv: PDBench never imports EGTtools)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.analysis.evolutionary import Population, Process, figures

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "egttools_analysis.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["cases"]


def _id(case: dict[str, Any]) -> str:
    return f"{case['table']}-Z{case['population']}-beta{case['beta']}"


def test_the_fixture_covers_measured_and_textbook_tables() -> None:
    assert {c["table"] for c in CASES} >= {"allc_alld_tft_10_rounds", "tournament_with_mock_model"}
    assert len(CASES) >= 8


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fixation_stationary_and_gradient_equal_egttools(case: dict[str, Any]) -> None:
    table = np.array(case["payoffs"], dtype=np.float64)
    f = figures(table, Population(Process.fermi, case["beta"], case["population"]), replicator=False)
    off = ~np.eye(len(table), dtype=bool)
    for key in ("rho", "rho_cpp"):
        expected = np.array(case[key], dtype=np.float64)
        assert np.abs(f.rho[off] - expected[off]).max() < 1e-9, key
    assert np.abs(f.stationary - np.array(case["stationary"])).max() < 1e-9
    for pair, values in case["gradients"].items():
        i, j = (int(x) for x in pair.split(","))
        assert np.abs(f.gradients[(i, j)] - np.array(values)).max() < 1e-9, pair
