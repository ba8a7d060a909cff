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
    # Their players: always-J, always-F and defect-once against the model in both seats, and the model itself.
    assert [c["name"] for c in conds] == [
        "vs_ALLC", "vs_ALLD", "vs_DONCE", "ALLC_vs_model", "ALLD_vs_model", "DONCE_vs_model", "self_play"
    ]  # fmt: skip
    strategies = [{"policy": "ALLC"}, {"policy": "ALLD"}, {"policy": "DONCE", "round": 1}]
    assert [c["agent_b"] for c in conds[:3]] == strategies and [c["agent_a"] for c in conds[3:6]] == strategies
    models = [c["agent_a"] for c in conds[:3]] + [c["agent_b"] for c in conds[3:]] + [conds[6]["agent_a"]]
    for agent in models:
        assert agent["model"] == "mock/tft" and agent["temperature"] == 0 and agent["max_tokens"] == 1
        prompts = agent["prompts"]
        assert (prompts["labels"]["cooperate"], prompts["labels"]["defect"]) == ("J", "F")
        assert prompts["shuffle_options"] is True and prompts["shared_order"] is True
        assert prompts["answer_format"] == "label" and prompts["round_template"] == "suites/akata2023/round.j2"
        assert "history_window" not in prompts
    games = sql_json(results, "select condition, rounds_played, status from games where run_id = 'ak'")
    assert len(games) == 21 and all(g["rounds_played"] == 10 and g["status"] == "complete" for g in games)
    calls = sql_json(results, "select option_order, request_json from calls where run_id = 'ak'")
    assert {c["option_order"] for c in calls} == {"CD", "DC"}
    for call in calls:
        request = json.loads(call["request_json"])
        assert request["params"]["temperature"] == 0.0 and request["params"]["max_tokens"] == 1
        assert [m["role"] for m in request["messages"]] == ["user"]  # one user message, no system prompt
    # In self-play both seats see the same order each round (one draw per round, shared).
    orders = sql_json(results, "select game_id, c.round, count(distinct c.player) as seats, "
                               "count(distinct c.option_order) as n from calls c join games g using (run_id, game_id) "
                               "where g.condition = 'self_play' group by all")  # fmt: skip
    assert len(orders) == 30 and {(o["seats"], o["n"]) for o in orders} == {(2, 1)}
    # The model's moves against DONCE (D in round 1 only), by TFT's rule: C, D, then C for ever, in either seat.
    moves = sql_json(results, "select g.condition, string_agg(r.action_a::varchar, '' order by r.round) as a, "
                              "string_agg(r.action_b::varchar, '' order by r.round) as b from rounds r join games g "
                              "using (run_id, game_id) where g.condition like '%DONCE%' group by 1, g.game_id "
                              "order by g.condition")  # fmt: skip
    assert (
        moves
        == [{"condition": "DONCE_vs_model", "a": "DCCCCCCCCC", "b": "CDCCCCCCCC"}] * 3
        + [{"condition": "vs_DONCE", "a": "CDCCCCCCCC", "b": "DCCCCCCCCC"}] * 3
    )


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
    assert [c["agent_b"]["p"] for c in conds] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert {c["agent_b"]["policy"] for c in conds} == {"RAND"}
    assert [c["name"] for c in conds][:2] == ["vs_RAND(p=0.0)", "vs_RAND(p=0.1)"]
    for c in conds:
        agent = c["agent_a"]
        assert agent["temperature"] == 0.7 and agent["max_tokens"] == 128
        prompts = agent["prompts"]
        assert prompts["history_window"] == 10 and prompts["answer_format"] == "json"
        assert (prompts["labels"]["cooperate"], prompts["labels"]["defect"]) == ("Cooperate", "Defect")
        assert prompts["shuffle_options"] is False
    players = sql_json(results, "select distinct player_b from games where run_id = 'fo' order by player_b")
    assert [p["player_b"] for p in players][:3] == ["RAND(p=0.0)", "RAND(p=0.1)", "RAND(p=0.2)"]
    # Third person, words, JSON answers; the last 10 rounds, whole-game counts, totals and the current round.
    last = sql_json(
        results, "select request_json, response_text from calls where run_id = 'fo' and round = 100 limit 1"
    )[0]
    request = json.loads(last["request_json"])
    assert request["params"]["temperature"] == 0.7 and request["params"]["max_tokens"] == 128
    system, user = (m["content"] for m in request["messages"])
    assert system.startswith("Player A and player B play a game") and "100 rounds" in system
    assert user.endswith('player A should play: {"action": "Cooperate"} or {"action": "Defect"}.')
    assert "The last 10 rounds of the game went as follows:" in user and "Round 89:" not in user
    assert "Round 90:" in user and user.count("Round ") == 10 and "Current round: 100." in user
    coop = user.split('A has played "Cooperate" ')[1].split(" times")[0]
    defect = user.split('times and "Defect" ')[1].split(" times")[0]
    assert int(coop) + int(defect) == 99  # counts over the whole game, not the window
    assert json.loads(last["response_text"])["action"] in ("Cooperate", "Defect")
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
        (["--suite", "akata2023", "--comprehension", "1"], "reply in 1 token(s), as its paper did, which cannot hold"),
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
    assert sql_json(results, "select count(*) as n, max(seed) > 0 as seeded from games")[0]["n"] == 7


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
        "experiment.conditions (seats): suite akata2023 fixes model vs ALLC, model vs ALLD, model vs DONCE(round=1), "
        "ALLC vs model, ALLD vs model, DONCE(round=1) vs model, model vs model, the config has model vs ALLD",
        "experiment.conditions[0].agent_a.max_tokens: suite akata2023 fixes 1, the config has 256",
        "experiment.conditions[0].agent_a.prompts.labels: suite akata2023 fixes J/F, the config has C/D",
        "experiment.conditions[0].agent_a.prompts.shuffle_options: suite akata2023 fixes True, the config has False",
    ):
        assert f"{problem}{follow}" in flat
    path.write_text("suite: akata2031\nexperiment: {conditions: [{agent_a: {policy: TFT}, agent_b: {policy: TFT}}]}\n")
    code, _, err = pdbench("validate", path)
    assert code == 2 and "suite: unknown suite 'akata2031'; suites: akata2023, fontana2025" in " ".join(err.split())
