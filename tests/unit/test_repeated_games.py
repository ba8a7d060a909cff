"""What an interval means: a condition whose replicates are one game repeated shows "all alike" and no interval
(report, scorecard, csv/json), and `pdbench eval` says so before the run; a behaviour-profile dimension with no
chance in any game of a condition is —; `pdbench report --sfem` gives the SFEM rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from harness.analysis.profile_summary import behaviour_profile_by_condition
from harness.analysis.report import condition_summaries
from harness.cli.render import profile_table
from harness.cli.repeats import repeated_conditions
from harness.cli.report_view import RunReport
from harness.cli.scorecard import Scorecard
from harness.config.presets.evaluation import eval_config
from harness.config.presets.suites import get_suite
from tests.support.cli import pdbench
from tests.support.logs import write_logs


def text(renderable: object) -> str:
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def test_one_game_repeated_has_no_interval_and_says_so(results: Path) -> None:
    with write_logs(results, "same", [("CCDC", "CDCC")] * 3) as cat:
        [same] = condition_summaries(cat, "same")
        run = cat.require_run("same")
        shown = text(RunReport(run, [same])) + text(Scorecard(run, [same]))
    assert same.repeated and same.as_dict()["repeated_game"] is True
    payoff = same.seats[0].estimates["payoff_per_round"]
    assert (payoff.mean, payoff.low, payoff.high, payoff.n) == (pytest.approx(2.75), None, None, 3)  # (3+0+5+3)/4
    assert "3, all alike" in shown and re.search(r"± \d+\.\d", shown) is None  # no "± 0.000"
    assert "every replicate of that condition is the same game" in shown


def test_replicates_that_differ_keep_their_interval(results: Path) -> None:
    # The same moves as played, but the third game's A chose D in round 4 and noise played it as C: not alike.
    with write_logs(results, "differ", [("CCDC", "CDCC"), ("CCDC", "CDCC"), ("CCDd", "CDCC")]) as cat:
        [s] = condition_summaries(cat, "differ")
        shown = text(RunReport(cat.require_run("differ"), [s]))
    assert not s.repeated and s.as_dict()["repeated_game"] is False
    coop = s.seats[0].estimates["cooperation_rate"]
    assert coop.low is not None and coop.high is not None and coop.mean == pytest.approx((0.75 + 0.75 + 0.5) / 3)
    assert "all alike" not in shown and ("[" in shown or "±" in shown)


def test_a_profile_dimension_without_a_chance_is_a_dash(results: Path) -> None:
    # Game 1: both always C: no opponent D, so nothing to forgive or retaliate against (chances 0).
    # Game 2: B defects in round 1 only; A answers D, then C. Forgiving: B's D opens a grudge (1 opponent
    # defection), A's C in round 3 while holding it is one forgiven defection: 1/1. Retaliatory: B's round-1 D
    # is unprovoked, A's round-2 D a reaction: 1/1. The paper's mean over both games would be 0.5 each.
    with write_logs(results, "chances", [("CCC", "CCC"), ("CDC", "DCC")]) as cat:
        columns, rows = behaviour_profile_by_condition(cat, "chances")
    with write_logs(results, "none", [("CCC", "CCC")]) as cat:
        _, none = behaviour_profile_by_condition(cat, "none")
    got = dict(zip(columns, rows[0], strict=True))
    assert (got["forgiving"], got["retaliatory"]) == (1.0, 1.0)
    assert got["nice"] == 1.0  # A never defected first in either game
    empty = dict(zip(columns, none[0], strict=True))
    assert empty["forgiving"] is None and empty["retaliatory"] is None and empty["troublemaking"] == 0.0
    assert "—" in text(profile_table(columns, none, "profile"))


def test_eval_knows_before_the_run_which_replicates_will_repeat() -> None:
    def repeated(model: str, **options: object) -> list[str]:
        return repeated_conditions(eval_config(model, opponents=["ALLD", "TFT", "RAND"], **options))  # type: ignore[arg-type]

    assert repeated("mock/tft") == ["vs_ALLD", "vs_TFT"]  # RAND draws
    assert repeated("mock/tft", noise=0.1) == []
    assert repeated("mock/tft", stop_prob=0.1) == []  # each game's length is drawn
    assert repeated("mock/tft", replicates=1) == []
    assert repeated("mock/random") == []
    assert repeated("mock/tft?unparseable=0.2") == []
    assert repeated("openai/gpt-4o-mini", temperature=0.0) == ["vs_ALLD", "vs_TFT"]
    assert repeated("openai/gpt-4o-mini") == []  # the provider's default temperature samples
    akata = get_suite("akata2023").config("openai/gpt-4o-mini", replicates=3, seed=0, base_url=None, limits={})
    assert repeated_conditions(akata) == []  # temperature 0, but the options are shuffled per replicate


@pytest.mark.slow
def test_eval_prints_the_note_before_the_run(results: Path) -> None:
    code, out, err = pdbench("eval", "--model", "mock/tft", "--opponents", "ALLD", "--rounds", "3",
                             "--replicates", "2", "--results", results, "--run-id", "rep")  # fmt: skip
    assert code == 0, err
    assert "the 2 replicates of every condition will repeat one game" in " ".join(err.split())
    assert "2, all alike" in out


@pytest.mark.slow
def test_report_sfem_gives_a_row_per_fit(results: Path) -> None:
    # Seat A plays TFT without error over 16 moves: far better than chance (2 × 16 log 2 = 22.2 > 14.07).
    write_logs(results, "fits", [("CDDCDCCD", "DDCDCCDD"), ("CCDDDCCC", "CDDDCCCD")]).close()
    code, out, err = pdbench("report", "fits", "--sfem", "--format", "json", "--results", results)
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["player_name"], r["condition"], r["seat"]) for r in rows] == [
        ("TFT", "hand", "a"),
        ("ALLD", "hand", "b"),
        ("ALLD", None, None),
        ("TFT", None, None),
    ]
    assert rows[0]["tft"] == pytest.approx(1.0, abs=1e-6) and rows[0]["beta"] == pytest.approx(1.0)
    code, out, err = pdbench("report", "fits", "--sfem", "--results", results)
    assert code == 0 and "Strategy frequency estimation" in out and "β" in out
