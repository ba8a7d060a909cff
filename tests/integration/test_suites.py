"""``pdbench eval --suite``: the published protocols, as stored and played, and the options they refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json


def stored_config(results: Path, run_id: str) -> dict:
    return json.loads(sql_json(results, f"select config_json from runs where run_id = '{run_id}'")[0]["config_json"])


@pytest.mark.slow
def test_akata2023_plays_and_stores_its_protocol(results: Path) -> None:
    code, out, err = pdbench(
        "eval", "--suite", "akata2023", "--model", "mock/tft", "--results", results, "--run-id", "ak"
    )
    assert code == 0, err
    assert "Scorecard ak" in out and "DONCE" in out
    config = stored_config(results, "ak")
    assert config["suite"] == "akata2023" and config["kind"] == "eval"
    # R=8, S=0, T=10, P=5: both cooperate 8 each; one defects 10 against 0; both defect 5 each.
    assert config["game"]["payoff_matrix"] == {"C": {"C": [8, 8], "D": [0, 10]}, "D": {"C": [10, 0], "D": [5, 5]}}
    assert config["horizon"]["type"] == "fixed" and config["horizon"]["n_rounds"] == 10
    assert config["noise"]["prob"] == 0
    conds = config["experiment"]["conditions"]
    assert [c["name"] for c in conds] == ["vs_ALLD", "vs_DONCE", "vs_TFT"]
    assert [c["agent_b"] for c in conds] == [{"policy": "ALLD"}, {"policy": "DONCE", "round": 1}, {"policy": "TFT"}]
    for c in conds:
        agent = c["agent_a"]
        assert agent["model"] == "mock/tft" and agent["temperature"] == 0
        assert (agent["prompts"]["labels"]["cooperate"], agent["prompts"]["labels"]["defect"]) == ("J", "F")
        assert agent["prompts"]["shuffle_options"] is True and agent["prompts"]["answer_format"] == "free"
        assert "history_window" not in agent["prompts"]
    games = sql_json(results, "select condition, rounds_played, status from games where run_id = 'ak'")
    assert len(games) == 9 and all(g["rounds_played"] == 10 and g["status"] == "complete" for g in games)
    calls = sql_json(results, "select option_order, request_json from calls where run_id = 'ak'")
    assert {c["option_order"] for c in calls} == {"CD", "DC"}
    assert all('"temperature": 0.0' in c["request_json"] for c in calls)
    # The model's moves against DONCE (D in round 1 only), by TFT's rule: C, D, then C for ever.
    moves = sql_json(results, "select string_agg(r.action_a::varchar, '' order by r.round) as a, "
                              "string_agg(r.action_b::varchar, '' order by r.round) as b from rounds r join games g "
                              "using (run_id, game_id) where g.condition = 'vs_DONCE' group by g.game_id")  # fmt: skip
    assert moves == [{"a": "CDCCCCCCCC", "b": "DCCCCCCCCC"}] * 3


@pytest.mark.slow
def test_fontana2025_plays_and_stores_its_protocol(results: Path) -> None:
    code, out, err = pdbench("eval", "--suite", "fontana2025", "--model", "mock/random", "--replicates", "1",
                             "--results", results, "--run-id", "fo")  # fmt: skip
    assert code == 0, err
    assert "Behaviour profile of the model" in out and "vs_RAND(p=0.3)" in out
    assert "troublemaking" in out and "chances" not in out  # the five dimensions, not the view's counts
    config = stored_config(results, "fo")
    assert config["suite"] == "fontana2025" and config["horizon"]["n_rounds"] == 100
    conds = config["experiment"]["conditions"]
    assert [c["agent_b"]["coop_prob"] for c in conds] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert {c["agent_b"]["policy"] for c in conds} == {"RAND"}
    assert [c["name"] for c in conds][:2] == ["vs_RAND(p=0.0)", "vs_RAND(p=0.1)"]
    for c in conds:
        prompts = c["agent_a"]["prompts"]
        assert prompts["history_window"] == 10 and prompts["answer_format"] == "json"
        assert prompts["shuffle_options"] is False
    players = sql_json(results, "select distinct player_b from games where run_id = 'fo' order by player_b")
    assert [p["player_b"] for p in players][:3] == ["RAND(p=0.0)", "RAND(p=0.1)", "RAND(p=0.2)"]
    # JSON answers, and a history of at most 10 rounds in the prompt of round 100.
    last = sql_json(
        results, "select request_json, response_text from calls where run_id = 'fo' and round = 100 limit 1"
    )[0]
    user = json.loads(last["request_json"])["messages"][1]["content"]
    assert user.endswith('Reply with only a JSON object: {"action": "C"} or {"action": "D"}.')
    assert "The last 10 of the 99 rounds played so far:" in user and "- Round 89:" not in user
    assert json.loads(last["response_text"])["action"] in ("C", "D")
    # The opponents cooperate at their rates: RAND(p=0) never, RAND(p=1) always.
    ends = sql_json(results, "select g.player_b, avg((r.action_b = 'C')::int) as coop from rounds r join games g "
                             "using (run_id, game_id) group by all")  # fmt: skip
    rates = {e["player_b"]: e["coop"] for e in ends}
    assert rates["RAND(p=0.0)"] == 0 and rates["RAND(p=1.0)"] == 1


def test_eval_help_lists_the_suites_and_their_papers() -> None:
    code, out, _ = pdbench("eval", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "akata2023" in flat and "Playing repeated games with Large Language Models" in flat
    assert "fontana2025" in flat and "Nicer Than Humans" in flat and "arXiv:2406.13605" in flat


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suite", "axelrod1980"], "unknown suite 'axelrod1980'; the suites are: akata2023 (Akata"),
        (["--suite", "akata2023", "--rounds", "20"], "--suite akata2023 fixes the protocol of Akata"),
        (["--suite", "fontana2025", "--opponents", "TFT", "--temperature", "0.5"],
         "so --opponents (the opponents), --temperature (the sampling temperature) cannot be given with it"),
        (["--suite", "akata2023", "--noise", "0"], "--noise (the noise) cannot be given"),  # even at its default
    ],
)  # fmt: skip
def test_bad_suite_options_are_one_paragraph_errors(results: Path, args: list[str], message: str) -> None:
    code, _, err = pdbench("eval", "--model", "mock/tft", *args, "--results", results)
    assert code == 2
    assert err.startswith("error: ") and message in " ".join(err.split()) and "Traceback" not in err
    assert not list(results.glob("*.duckdb"))  # nothing was started


@pytest.mark.slow
def test_engine_options_are_allowed_with_a_suite(results: Path) -> None:
    code, _, err = pdbench("eval", "--suite", "akata2023", "--model", "mock/tft", "--replicates", "1", "--seed", "4",
                           "--concurrency", "2", "--no-cache", "--results", results, "--run-id", "eng")  # fmt: skip
    assert code == 0, err
    assert sql_json(results, "select count(*) as n, max(seed) > 0 as seeded from games")[0]["n"] == 3


def test_a_config_that_names_a_suite_must_follow_it(tmp_path: Path) -> None:
    path = tmp_path / "fake.yaml"
    path.write_text("""
suite: akata2023
kind: eval
horizon: {type: fixed, n_rounds: 20}
experiment:
  conditions:
    - {name: vs_ALLD, agent_a: {model: mock/tft, temperature: 0.0}, agent_b: {policy: ALLD}}
""")
    code, _, err = pdbench("validate", path)
    flat = " ".join(err.split())
    assert code == 2 and "Traceback" not in err
    follow = "; follow the protocol or remove `suite: akata2023`"
    for problem in (
        "game.payoff_matrix: suite akata2023 fixes R=8, S=0, T=10, P=5, the config has R=3, S=0, T=5, P=1",
        "horizon: suite akata2023 fixes 10 rounds, the config has 20 rounds",
        "experiment.conditions (opponents): suite akata2023 fixes ALLD, DONCE(round=1), TFT, the config has ALLD",
        "experiment.conditions[0].agent_a.prompts.labels: suite akata2023 fixes J/F, the config has C/D",
        "experiment.conditions[0].agent_a.prompts.shuffle_options: suite akata2023 fixes True, the config has False",
    ):
        assert f"{problem}{follow}" in flat
    path.write_text("suite: akata2031\nexperiment: {conditions: [{agent_a: {policy: TFT}, agent_b: {policy: TFT}}]}\n")
    code, _, err = pdbench("validate", path)
    assert code == 2 and "suite: unknown suite 'akata2031'; suites: akata2023, fontana2025" in " ".join(err.split())
