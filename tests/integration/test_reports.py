"""Parse-failure rates and chosen-move rates in the ``eval`` scorecard and in ``pdbench report``,
checked against counts made from the raw ``calls`` and ``rounds`` rows."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json

MODEL = "mock/random?p=0.6&unparseable=0.5&seed=2"


@pytest.fixture
def eval_run(results: Path) -> tuple[Path, str]:
    code, out, err = pdbench("eval", "--model", MODEL, "--opponents", "ALLD,TFT", "--rounds", "10",
                             "--replicates", "2", "--noise", "0.1", "--results", results, "--run-id", "ev")  # fmt: skip
    assert code == 0, err
    return results, out


def per_condition(results: Path) -> dict[str, dict]:
    rows = sql_json(
        results,
        "select g.condition, count(*) as answers, count(*) filter (where outcome = 'unparseable') as unreadable "
        "from calls c join games g using (run_id, game_id) where c.outcome in ('ok', 'unparseable') group by all",
    )
    flags = sql_json(
        results,
        "select g.condition, count(*) as rounds, count(*) filter (where flagged_a) as flagged "
        "from rounds r join games g using (run_id, game_id) group by all",
    )
    out = {r["condition"]: r for r in rows}
    for f in flags:
        out[f["condition"]].update(f)
    return out


@pytest.mark.slow
def test_the_scorecard_shows_the_models_parse_failure_rate(eval_run: tuple[Path, str]) -> None:
    results, out = eval_run
    counts = per_condition(results)
    answers = sum(c["answers"] for c in counts.values())
    unreadable = sum(c["unreadable"] for c in counts.values())
    flagged = sum(c["flagged"] for c in counts.values())
    assert unreadable > 0 and flagged > 0
    assert "parse failures" in out and "fallback rate" in out
    assert f"parse failures {unreadable / answers:.1%} of {answers:,} answers" in out
    assert f"fallback moves in {flagged / 40:.1%} of 40 rounds" in out
    for cond, c in counts.items():
        row = next(line for line in out.splitlines() if cond.removeprefix("vs_") in line and "%" in line)
        assert f"{c['unreadable'] / c['answers']:.1%}" in row and f"{c['flagged'] / c['rounds']:.1%}" in row
    assert "moves each player chose" in out


@pytest.mark.slow
def test_report_gives_rates_per_model_and_per_condition(eval_run: tuple[Path, str]) -> None:
    results, _ = eval_run
    counts = per_condition(results)
    code, out, err = pdbench("report", "ev", "--results", results)
    assert code == 0, err
    assert "Model answers" in out and "moves each player chose" in out
    answers = sum(c["answers"] for c in counts.values())
    unreadable = sum(c["unreadable"] for c in counts.values())
    assert f"{unreadable / answers:.1%}" in out
    code, out, err = pdbench("report", "ev", "--results", results, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["condition"] for r in rows} == set(counts)
    metrics = sql_json(
        results, "select condition, cooperation_rate, cooperation_rate_played from player_metrics where player = 'a'"
    )
    for r in rows:
        c = counts[r["condition"]]
        assert (r["a_answers"], r["a_unreadable"]) == (c["answers"], c["unreadable"])
        assert r["a_parse_failure_rate"] == pytest.approx(c["unreadable"] / c["answers"])
        assert (r["a_fallback_rounds"], r["a_rounds_all_games"]) == (c["flagged"], c["rounds"])
        assert r["a_fallback_rate"] == pytest.approx(c["flagged"] / c["rounds"])
        assert r["b_parse_failure_rate"] is None and r["b_answers"] is None  # a strategy sends nothing
        mine = [m for m in metrics if m["condition"] == r["condition"]]
        assert r["a_cooperation_rate"] == pytest.approx(sum(m["cooperation_rate"] for m in mine) / len(mine))
        assert r["a_cooperation_rate_played"] == pytest.approx(
            sum(m["cooperation_rate_played"] for m in mine) / len(mine)
        )
    code, out, _ = pdbench("report", "ev", "--results", results, "--format", "csv")
    assert code == 0 and "a_parse_failure_rate" in out.splitlines()[0]


@pytest.mark.slow
def test_a_run_without_models_has_no_answers_table(results: Path) -> None:
    code, _, err = pdbench(
        "tournament", "--players", "TFT,ALLD", "--rounds", "5", "--results", results, "--run-id", "x"
    )
    assert code == 0, err
    code, out, _ = pdbench("report", "x", "--results", results)
    assert code == 0 and "Model answers" not in out
    assert sql_json(results, "select count(*) as n from model_parsing")[0]["n"] == 0


def readers_from_calls(results: Path) -> dict[str, dict[str, int]]:
    """What decided each of player A's moves, per condition, worked out from the raw rows alone: a flagged round
    is a fallback; else the round's first readable answer decided it, the parser's if it was the round's first
    answer, a re-ask's if an unreadable answer came before it."""
    calls = sql_json(
        results,
        "select c.game_id, c.round, c.attempt, c.outcome from calls c "
        "where c.purpose = 'move' and c.player = 'a' order by c.game_id, c.round, c.attempt",
    )
    rounds = sql_json(
        results,
        "select g.condition, r.game_id, r.round, r.flagged_a from rounds r join games g using (run_id, game_id)",
    )
    by_round: dict[tuple[str, int], list[str]] = {}
    for c in calls:
        by_round.setdefault((c["game_id"], c["round"]), []).append(c["outcome"])
    out: dict[str, dict[str, int]] = {}
    for r in rounds:
        counts = out.setdefault(
            r["condition"], dict.fromkeys(("parser", "structured", "judge", "reask", "fallback"), 0)
        )
        outcomes = by_round[(r["game_id"], r["round"])]
        if r["flagged_a"]:
            counts["fallback"] += 1
        else:
            counts["parser" if outcomes.index("ok") == 0 else "reask"] += 1
    return out


@pytest.mark.slow
def test_report_exports_carry_what_read_each_move(eval_run: tuple[Path, str]) -> None:
    results, _ = eval_run
    expected = readers_from_calls(results)
    assert all(c["reask"] > 0 and c["fallback"] > 0 and c["parser"] > 0 for c in expected.values())
    code, out, err = pdbench("report", "ev", "--results", results, "--format", "json")
    assert code == 0, err
    rows = {r["condition"]: r for r in json.loads(out)}
    code, out, err = pdbench("report", "ev", "--results", results, "--format", "csv")
    assert code == 0, err
    csv_rows = {r["condition"]: r for r in csv.DictReader(io.StringIO(out))}
    assert set(rows) == set(csv_rows) == set(expected)
    for cond, counts in expected.items():
        rounds = sum(counts.values())
        for reader, n in counts.items():
            assert rows[cond][f"a_{reader}_rounds"] == n
            assert rows[cond][f"a_{reader}_share"] == pytest.approx(n / rounds)
            assert int(csv_rows[cond][f"a_{reader}_rounds"]) == n
            assert float(csv_rows[cond][f"a_{reader}_share"]) == pytest.approx(n / rounds, abs=5e-5)  # 4 places
            assert rows[cond][f"b_{reader}_rounds"] is None  # a strategy: no reader
    # Summed over conditions, the counts are the text report's shares of the model's rounds.
    code, text, _ = pdbench("report", "ev", "--results", results)
    assert code == 0
    total = {reader: sum(c[reader] for c in expected.values()) for reader in ("parser", "reask", "fallback")}
    rounds = sum(total.values())
    for reader, name in (("parser", "parser"), ("reask", "re-ask"), ("fallback", "fallback")):
        assert f"{name} {total[reader] / rounds:.1%}".replace(".0%", "%") in text
