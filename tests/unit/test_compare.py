"""``pdbench compare`` and its analysis: players found by run (id, prefix, latest) or by model, their metrics per
opponent and overall with intervals, differences tested as the design allows (paired against scipy's ttest_rel,
Welch against ttest_ind), Holm's adjustment hand-worked, labels that tell two personas of one model apart in every
view, tables that fit 80 columns, CSV with run ids, and the errors a comparison can meet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import scipy.stats

from harness.analysis.compare import compare, resolve_players
from harness.analysis.stats import holm, paired_difference, welch_difference
from harness.store.catalog import Catalog
from tests.support.cli import pdbench, sql_json


def eval_run(results: Path, model: str, run_id: str, opponents: str = "ALLC,ALLD") -> None:
    code, _out, err = pdbench("eval", "--model", model, "--opponents", opponents, "--rounds", "4",
                              "--replicates", "2", "--results", results, "--run-id", run_id)  # fmt: skip
    assert code == 0, err


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two evals, read (never written) by the tests that share them."""
    results = tmp_path_factory.mktemp("compare") / "results"
    eval_run(results, "mock/tft", "eval_tft")
    eval_run(results, "mock/defector", "eval_alld")
    return results


def test_paired_and_welch_differences_equal_scipys() -> None:
    x = [1.0, 2.5, 0.5, 3.0, 2.0, 1.5]
    y = [1.5, 2.0, 1.5, 4.0, 3.5, 1.0]
    paired = paired_difference(zip(x, y, strict=True))
    ref = scipy.stats.ttest_rel(y, x)
    ci = ref.confidence_interval()
    assert (paired.p, paired.low, paired.high) == pytest.approx((ref.pvalue, ci.low, ci.high), rel=1e-12)
    z = [2.0, 4.5, 3.0, 5.5]
    welch = welch_difference(x, z)
    ref = scipy.stats.ttest_ind(z, x, equal_var=False)
    ci = ref.confidence_interval()
    assert (welch.p, welch.low, welch.high) == pytest.approx((ref.pvalue, ci.low, ci.high), rel=1e-12)
    assert welch_difference([1.0], [2.0, 3.0]).p is None and paired_difference([(1.0, 2.0)]).low is None


def test_holm_by_hand() -> None:
    # Sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04, raised to the 0.06 before it.
    assert holm([0.01, 0.04, 0.03, 0.005, None]) == pytest.approx([0.03, 0.06, 0.06, 0.02, None])


def test_two_deterministic_models_compared_by_hand(two_runs: Path) -> None:
    with Catalog(two_runs) as cat:
        runs = {"eval_tft": ["eval_tft"], "eval_alld": ["eval_alld"]}
        players = resolve_players(cat, ["eval_tft", "eval_alld"], runs)
        c = compare(cat, players)
    assert [p.label for p in players] == ["mock/tft", "mock/defector"]
    assert c.opponents == ["ALLC", "ALLD"] and c.paired and c.games == [4, 4]
    # Payoffs 3/5/1/0. TFT: 3 a round against ALLC; against ALLD 0, 1, 1, 1 = 0.75. ALLD: 5 and 1.
    tft, alld = c.overall["payoff_per_round"]
    assert tft.estimate.mean == pytest.approx((3 + 3 + 0.75 + 0.75) / 4)
    assert alld.estimate.mean == pytest.approx(3.0)
    diffs = [2.0, 2.0, 0.25, 0.25]  # per matched game (opponent, replicate): ALLD's payoff minus TFT's
    ref = scipy.stats.ttest_1samp(diffs, 0.0)
    assert alld.difference is not None and alld.difference.test == "paired"
    assert alld.difference.mean == pytest.approx(1.125)
    assert (alld.difference.low, alld.difference.high) == pytest.approx(tuple(ref.confidence_interval()))
    assert alld.difference.p == pytest.approx(ref.pvalue)
    # Cooperation: TFT 100% against ALLC, 1 of 4 against ALLD; the defector never.
    assert c.by_opponent["ALLD"]["cooperation_rate"][0].estimate.mean == pytest.approx(0.25)
    assert c.overall["cooperation_rate"][1].estimate.mean == 0.0
    tested = [d.p for cells in c.overall.values() if (d := cells[1].difference) is not None and d.p is not None]
    assert c.tests == len(tested) and "Holm" in c.note
    adjusted = [cells[1].p_holm for cells in c.overall.values() if cells[1].p_holm is not None]
    assert adjusted == pytest.approx([p for p in holm(tested) if p is not None])


def test_compare_by_prefix_latest_and_model_name_prints_80_columns_and_csv(two_runs: Path) -> None:
    code, out, err = pdbench("compare", "eval_t", "latest", "--results", two_runs)
    assert code == 0, err
    assert "A = mock/tft" in out and "B = mock/defector" in out and "paired by opponent and replicate" in out
    table_lines = [line for line in out.splitlines() if "±" in line or "[" in line]
    assert table_lines and max(len(line.rstrip()) for line in table_lines) <= 80
    code, out, err = pdbench("compare", "mock/tft", "mock/defector", "--results", two_runs, "--format", "csv")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.startswith("opponent,metric,player,run_id,model,games,mean")
    assert any(r.startswith("overall,payoff_per_round,mock/defector,eval_alld,") for r in rows)
    code, out, err = pdbench("compare", "eval_tft", "eval_alld", "--results", two_runs, "--format", "json")
    rows = json.loads(out)
    assert {r["run_id"] for r in rows} == {"eval_tft", "eval_alld"} and all(
        not isinstance(r["mean"], str) for r in rows
    )


def test_a_narrow_terminal_puts_each_interval_under_its_mean_and_cuts_nothing(tmp_path: Path) -> None:
    results = tmp_path / "results"
    eval_run(results, "mock/random?p=0.7&seed=1", "eval_r1", opponents="ALLC,TFT,RAND")
    eval_run(results, "mock/random?p=0.4&seed=2", "eval_r2", opponents="ALLC,TFT,RAND")
    code, wide, err = pdbench("compare", "eval_r1", "eval_r2", "--results", results, "--width", "120")
    assert code == 0, err
    row = next(line for line in wide.splitlines() if line.lstrip().startswith("cooperation"))
    assert "±" in row or "[" in row  # one line a row when it fits
    assert max(len(line.rstrip()) for line in wide.splitlines()) > 80  # so 80 columns is narrow for it
    code, narrow, err = pdbench("compare", "eval_r1", "eval_r2", "--results", results, "--width", "80")
    assert code == 0, err
    lines = narrow.splitlines()
    assert "…" not in narrow and max(len(line.rstrip()) for line in lines) <= 80
    row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("cooperation"))
    mean, interval = lines[row], lines[row + 1]
    assert "%" in mean and "[" in mean.split("%", 2)[-1]  # the difference's interval stays on the row
    assert interval.split()[0].startswith(("±", "["))  # A's interval on the line below its mean


def test_two_personas_of_one_model_are_two_players_in_every_view(tmp_path: Path) -> None:
    results = tmp_path / "results"
    config = tmp_path / "personas.yaml"
    config.write_text(
        "experiment:\n  replicates: 3\n  conditions:\n"
        "    - name: nice_vs_mean\n"
        "      agent_a: {model: 'mock/random?p=0.8', persona: cooperative}\n"
        "      agent_b: {model: 'mock/random?p=0.8', persona: competitive}\n"
        "horizon: {type: fixed, n_rounds: 6}\n"
    )
    code, _out, err = pdbench("run", config, "--results", results, "--run-id", "personas")
    assert code == 0, err
    labels = sql_json(results, "select player, player_label from player_metrics where game_id = 1 order by player")
    assert [r["player_label"] for r in labels] == [
        "mock/random?p=0.8 (cooperative)",
        "mock/random?p=0.8 (competitive)",
    ]
    parsing = sql_json(results, "select player_label from model_parsing order by player_label")
    assert len(parsing) == 2  # the parse view no longer merges the two seats
    code, out, err = pdbench("compare", "personas", "--results", results)
    assert code == 0, err
    assert "A = mock/random?p=0.8 (cooperative)" in out and "B = mock/random?p=0.8 (competitive)" in out
    code, out, err = pdbench("report", "personas", "--results", results)
    assert code == 0, err
    assert "(cooperative)" in out and "(competitive)" in out


def test_a_temperature_that_differs_within_a_run_is_in_the_label(tmp_path: Path) -> None:
    results = tmp_path / "results"
    config = tmp_path / "temps.yaml"
    config.write_text(
        "experiment:\n  replicates: 1\n  conditions:\n"
        "    - name: cold\n      agent_a: {model: mock/tft, temperature: 0.0}\n      agent_b: {policy: TFT}\n"
        "    - name: hot\n      agent_a: {model: mock/tft, temperature: 1.0}\n      agent_b: {policy: TFT}\n"
        "horizon: {type: fixed, n_rounds: 2}\n"
    )
    code, _out, err = pdbench("run", config, "--results", results, "--run-id", "temps")
    assert code == 0, err
    rows = sql_json(results, "select distinct player_label from player_metrics where player = 'a' order by 1")
    assert [r["player_label"] for r in rows] == ["mock/tft (temperature 0.0)", "mock/tft (temperature 1.0)"]


def test_what_cannot_be_compared_is_one_paragraph(two_runs: Path, tmp_path: Path) -> None:
    code, _out, err = pdbench("compare", "eval_tft", "--results", two_runs)
    assert code != 0 and "two players or more" in err and "Traceback" not in err
    code, _out, err = pdbench("compare", "eval_", "--results", two_runs)
    assert code != 0 and "could be any of 2 runs" in err
    code, _out, err = pdbench("compare", "nosuch", "eval_tft", "--results", two_runs)
    assert code != 0 and "neither a run" in err and "mock/tft" in err
    own = tmp_path / "results"
    own.mkdir()
    shutil.copy(two_runs / "eval_tft.duckdb", own)
    eval_run(own, "mock/grim", "other", opponents="TFT")
    code, _out, err = pdbench("compare", "eval_tft", "other", "--results", own)
    assert code != 0 and "no opponent in common" in err
    code, _out, err = pdbench("compare", "eval_tft", "eval_alld", "--metric", "speed", "--results", two_runs)
    assert code != 0 and "--metric" in err


def test_an_interval_of_equal_values_up_to_rounding_is_no_interval() -> None:
    from harness.analysis.stats import Estimate, mean_ci
    from harness.cli.compare import _estimate

    alike = mean_ci([0.95, 0.95, 0.95])  # three games alike: their mean may differ from 0.95 in the last bit
    assert _estimate("payoff_per_round", alike) == "0.95"
    spread = Estimate(mean=0.95, low=0.9, high=1.0, n=3)
    assert _estimate("payoff_per_round", spread) == "0.95 ±0.05"
