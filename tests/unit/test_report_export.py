"""``--format csv`` and ``--format json`` of ``pdbench report``: a run_id column in both; CSV numbers rounded
(measures to 4 places, dollars to 6, never ``0.10000000000000002``), JSON at full precision. The figures are
worked by hand from the moves (R=3, T=5, S=0, P=1)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from harness.cli.render import rounded, rows_csv
from tests.conftest import write_games
from tests.support.cli import pdbench


@pytest.mark.parametrize(
    ("value", "decimals", "shown"),
    [
        (0.1 + 0.2 - 0.2, 4, "0.1"),  # 0.10000000000000003 as computed
        (2 / 3, 4, "0.6667"),
        (3.0, 4, "3"),
        (-0.00001, 4, "0"),
        (0.000123456789, 6, "0.000123"),
        (1234.5, 6, "1234.5"),
        (math.nan, 4, ""),
        (math.inf, 4, ""),
    ],
)
def test_a_number_is_rounded_without_trailing_zeros(value: float, decimals: int, shown: str) -> None:
    assert rounded(value, decimals) == shown


def test_dollars_keep_six_places_and_other_measures_four() -> None:
    text = rows_csv(["run_id", "cost_usd", "rate", "games"], [["r", 0.1234567891, 0.1234567891, 7]])
    assert text.splitlines() == ["run_id,cost_usd,rate,games", "r,0.123457,0.1235,7"]
    raw = rows_csv(["x"], [[0.1 + 0.2 - 0.2]], round_floats=False)
    assert raw.splitlines()[1] == repr(0.1 + 0.2 - 0.2)  # `pdbench sql` keeps the query's own numbers


def test_report_csv_has_the_run_id_and_rounded_numbers_json_full_precision(results: Path) -> None:
    # Player A plays C, D, D against D, C, C: it cooperates in 1 round of 3 and scores 0 + 5 + 5 = 10 in 3 rounds.
    write_games(results, "hand", [("CDD", "DCC")]).close()
    code, out, err = pdbench("report", "hand", "--results", results, "--format", "csv")
    assert code == 0, err
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0].startswith("run_id,condition,")
    assert row["run_id"] == "hand"
    assert row["a_cooperation_rate"] == "0.3333"
    assert row["a_payoff_per_round"] == "3.3333"
    assert row["b_cooperation_rate"] == "0.6667"
    assert all(len(v.partition(".")[2]) <= 4 for v in row.values())
    code, out, err = pdbench("report", "hand", "--results", results, "--format", "json")
    assert code == 0, err
    (full,) = json.loads(out)
    assert full["run_id"] == "hand"
    assert full["a_cooperation_rate"] == pytest.approx(1 / 3, abs=1e-12)
    assert full["a_payoff_per_round"] == pytest.approx(10 / 3, abs=1e-12)
