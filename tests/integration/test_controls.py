"""Prompt controls through the engine, on the offline mock: shuffled option order, reply formats and the
comprehension check, recorded per call; every figure checked against a derivation of its own."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json

PRICES = "mock/*: {input: 1000.0, output: 1000.0}\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


SHUFFLED = """
run: {{seed: 5}}
horizon: {{type: fixed, n_rounds: 12}}
experiment:
  replicates: 2
  conditions:
    - name: tft_vs_alld
      agent_a: {{model: mock/tft, prompts: {prompts}}}
      agent_b: {{policy: ALLD}}
    - name: self_play
      agent_a: {{model: mock/tft, prompts: {prompts}}}
      agent_b: {{model: mock/tft, prompts: {prompts}}}
"""
NEUTRAL_SHUFFLED = "{labels: {cooperate: J, defect: F}, shuffle_options: true}"


def request_messages(row: dict) -> list[dict]:
    return json.loads(row["request_json"])["messages"]


@pytest.mark.slow
def test_the_option_order_is_drawn_per_round_and_seat_recorded_and_shown(tmp_path: Path, results: Path) -> None:
    config = write(tmp_path / "shuffled.yaml", SHUFFLED.format(prompts=NEUTRAL_SHUFFLED))
    code, _, err = pdbench("run", config, "--results", results, "--run-id", "shuf")
    assert code == 0, err
    calls = sql_json(results, "select game_id, round, player, attempt, option_order, request_json, action "
                              "from calls where run_id = 'shuf' order by game_id, round, player, attempt")  # fmt: skip
    assert len(calls) == 2 * 12 + 2 * 12 * 2  # one call per model move: 2 games with one model, 2 with two
    per_move = defaultdict(set)
    for c in calls:
        per_move[(c["game_id"], c["round"], c["player"])].add(c["option_order"])
        system, user = (m["content"] for m in request_messages(c))
        first, second = ("J", "F") if c["option_order"] == "CD" else ("F", "J")
        # The order shown is the order recorded, in the question; in the (default) cached layout the rules list
        # the options in the fixed order, the same in every round (the classic layout's are test_prompt_controls').
        assert "one of two options, J or F." in system
        assert user.index("- If you choose J and the other player chooses J,") < user.index(
            "- If you choose F and the other player chooses F,"
        )
        assert user.endswith(f"Reply with exactly one of {first} or {second}.")
    assert all(len(orders) == 1 for orders in per_move.values())  # one order per round and seat
    shares = Counter(c["option_order"] for c in calls)
    assert set(shares) == {"CD", "DC"} and 0.3 < shares["DC"] / len(calls) < 0.7  # 144 fair draws: 0.5 +- 0.2
    # The two seats of a self-play round draw their orders independently: they differ in some rounds.
    by_round = defaultdict(dict)
    for (game, rnd, seat), orders in per_move.items():
        by_round[(game, rnd)][seat] = next(iter(orders))
    assert any(seats.get("b") not in (None, seats["a"]) for seats in by_round.values())
    # mock/tft still plays TFT, whatever the order: C, then ALLD's D for ever.
    tft = sql_json(results, "select g.game_id, string_agg(r.action_a::varchar, '' order by r.round) as moves from "
                            "games g join rounds r using (run_id, game_id) where g.condition = 'tft_vs_alld' "
                            "group by all")  # fmt: skip
    assert [t["moves"] for t in tft] == ["C" + "D" * 11] * 2


@pytest.mark.slow
def test_without_shuffling_the_order_is_null(tmp_path: Path, results: Path) -> None:
    config = write(tmp_path / "plain.yaml", SHUFFLED.format(prompts="{labels: {cooperate: J, defect: F}}"))
    code, _, err = pdbench("run", config, "--results", results, "--run-id", "plain")
    assert code == 0, err
    assert sql_json(results, "select distinct option_order, purpose from calls") == [
        {"option_order": None, "purpose": "move"}
    ]


CHECKED = """
run: {{seed: 11}}
horizon: {{type: fixed, n_rounds: 4}}
experiment:
  replicates: 2
  conditions:
    - name: vs_alld
      agent_a: {{model: "mock/tft?confused=0.3", prompts: {prompts}{comprehension}}}
      agent_b: {{policy: ALLD}}
    - name: seat_b
      agent_a: {{policy: TFT}}
      agent_b: {{model: "mock/tft?confused=0.3", prompts: {prompts}{comprehension}}}
"""
CHECK = ", comprehension: {rounds: [1, 3]}"
QUESTION_MARK = "Before you choose, answer a question about the game."


def mock_answer(kind: str, text: str) -> str | None:
    """The answer in one of the mock's shapes, read independently of harness.players.model.comprehension."""
    if kind == "last_move":
        found = set(re.findall(r"\b[JF]\b", text))
        return {"J": "C", "F": "D"}[found.pop()] if len(found) == 1 else None
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]
    if kind == "payoff":
        return f"{numbers[0]:g},{numbers[1]:g}" if len(numbers) >= 2 else None
    return f"{numbers[0]:g}" if numbers else None


@pytest.mark.slow
def test_comprehension_answers_and_accuracy_by_hand(tmp_path: Path, results: Path) -> None:
    config = write(tmp_path / "checked.yaml", CHECKED.format(prompts=NEUTRAL_SHUFFLED, comprehension=CHECK))
    code, out, err = pdbench("run", config, "--results", results, "--run-id", "cc")
    assert code == 0, err
    # Each game: round 1 asks 4 payoffs and the horizon; round 3 those and the last move: 11 questions.
    calls = sql_json(results, "select game_id, round, player, attempt, option_order, request_json, response_text "
                              "from calls where run_id = 'cc' and purpose = 'comprehension' "
                              "order by game_id, round, attempt")  # fmt: skip
    assert len(calls) == 4 * 11
    moves = {(r["game_id"], r["round"]): r for r in sql_json(results, "select * from rounds where run_id = 'cc'")}
    seats = {g["game_id"]: ("a" if g["player_a"].startswith("mock") else "b")
             for g in sql_json(results, "select game_id, player_a from games")}  # fmt: skip
    rows = {(r["game_id"], r["round"], r["attempt"]): r for r in sql_json(results, "select * from comprehension")}
    assert len(rows) == 44
    # Default payoffs from a player's own side: (own, other) -> (own points, other's points); symmetric game.
    points = {("C", "C"): "3,3", ("C", "D"): "0,5", ("D", "C"): "5,0", ("D", "D"): "1,1"}
    tally: dict[str, Counter] = defaultdict(Counter)
    for call in calls:
        seat = seats[call["game_id"]]
        assert call["player"] == seat and call["option_order"] in ("CD", "DC")
        question = request_messages(call)[1]["content"].split(QUESTION_MARK)[1]
        if m := re.search(r"If you choose ([JF]) and the other player chooses ([JF])", question):
            kind, canon = "payoff", {"J": "C", "F": "D"}
            qid, expected = f"payoff_{canon[m[1]]}{canon[m[2]]}", points[(canon[m[1]], canon[m[2]])]
        elif "How many rounds does the game last" in question:
            kind, qid, expected = "horizon", "horizon", "4"
        else:
            asked_round = int(re.search(r"What did you choose in round (\d+)\?", question)[1])
            assert asked_round == call["round"] - 1
            kind, qid = "last_move", "last_move"
            expected = moves[(call["game_id"], asked_round)][f"action_{seat}"]
        answer = mock_answer(kind, call["response_text"])
        row = rows[(call["game_id"], call["round"], call["attempt"])]
        assert (row["player"], row["question"], row["kind"], row["expected"], row["answer"]) == (
            seat, qid, kind, expected, answer)  # fmt: skip
        assert row["correct"] == (answer == expected)
        tally[kind]["asked"] += 1
        tally[kind]["right"] += answer == expected
    right = sum(t["right"] for t in tally.values())
    assert 0 < right < 44  # confused=0.3: some wrong, most right
    view = {r["kind"]: r for r in sql_json(results, "select * from comprehension_accuracy where run_id = 'cc'")}
    assert view["all"]["questions"] == 44 and view["all"]["correct"] == right
    assert view["all"]["accuracy"] == pytest.approx(right / 44)
    for kind, t in tally.items():
        assert (view[kind]["questions"], view[kind]["correct"]) == (t["asked"], t["right"])
        assert view[kind]["accuracy"] == pytest.approx(t["right"] / t["asked"])
    assert {r["player_name"] for r in view.values()} == {"mock/tft?confused=0.3"}
    code, out, err = pdbench("report", "cc", "--results", results)
    assert code == 0, err
    assert "Comprehension check" in out and f"{right / 44:.1%}" in out


@pytest.mark.slow
def test_the_move_conversation_never_contains_the_questions(tmp_path: Path, results: Path) -> None:
    with_check = write(tmp_path / "with.yaml", CHECKED.format(prompts=NEUTRAL_SHUFFLED, comprehension=CHECK))
    without = write(tmp_path / "without.yaml", CHECKED.format(prompts=NEUTRAL_SHUFFLED, comprehension=""))
    for run_id, path in (("with", with_check), ("without", without)):
        code, _, err = pdbench("run", path, "--results", results, "--run-id", run_id, "--no-cache")
        assert code == 0, err
    moves = sql_json(results, "select run_id, request_json, option_order from calls where purpose = 'move' "
                              "order by run_id, game_id, round, player, attempt")  # fmt: skip
    assert all(QUESTION_MARK not in m["request_json"] for m in moves)
    by_run = defaultdict(list)
    for m in moves:
        by_run[m["run_id"]].append((m["request_json"], m["option_order"]))
    assert by_run["with"] == by_run["without"]  # the moves were asked exactly as without a check
    assert sql_json(results, "select count(*) as n from calls where purpose = 'comprehension' and run_id = 'without'"
                    )[0]["n"] == 0  # fmt: skip


@pytest.mark.slow
def test_orders_and_answers_are_identical_on_resume(tmp_path: Path, results: Path) -> None:
    config = write(tmp_path / "checked.yaml", CHECKED.format(prompts=NEUTRAL_SHUFFLED, comprehension=CHECK))
    prices = write(tmp_path / "prices.yaml", PRICES)
    code, _, err = pdbench(
        "run",
        config,
        "--results",
        results,
        "--run-id",
        "cut",
        "--prices",
        prices,
        "--max-cost",
        "3",
        "--despite-estimate",
    )
    assert code == 130, err
    code, _, err = pdbench("resume", "cut", "--results", results, "--prices", prices)
    assert code == 0, err
    code, _, err = pdbench("run", config, "--results", results, "--run-id", "whole", "--no-cache")
    assert code == 0, err
    query = ("select game_id, round, player, purpose, attempt, option_order, response_text from calls "
             "where run_id = '{}' order by all")  # fmt: skip
    assert sql_json(results, query.format("cut")) == sql_json(results, query.format("whole"))
    answers = "select * exclude (run_id) from comprehension where run_id = '{}' order by all"
    assert sql_json(results, answers.format("cut")) == sql_json(results, answers.format("whole"))
    assert sql_json(results, "select count(*) as n from superseded_calls where run_id = 'cut'")[0]["n"] > 0


@pytest.mark.slow
def test_json_and_label_answers_are_asked_for_and_read(tmp_path: Path, results: Path) -> None:
    for fmt in ("json", "label"):
        prompts = f"{{labels: {{cooperate: J, defect: F}}, shuffle_options: true, answer_format: {fmt}}}"
        config = write(tmp_path / f"{fmt}.yaml", CHECKED.format(prompts=prompts, comprehension=CHECK))
        code, _, err = pdbench("run", config, "--results", results, "--run-id", fmt)
        assert code == 0, err
    rows = sql_json(results, "select run_id, response_text, action, outcome from calls where purpose = 'move'")
    assert rows and all(r["outcome"] == "ok" for r in rows)
    for r in rows:
        label = {"C": "J", "D": "F"}[r["action"]]
        assert r["response_text"] == (f'{{"action": "{label}"}}' if r["run_id"] == "json" else label)
    answered = sql_json(results, "select run_id, count(*) as n, count(answer) as readable from comprehension "
                                 "group by all order by run_id")  # fmt: skip
    assert answered == [{"run_id": "json", "n": 44, "readable": 44}, {"run_id": "label", "n": 44, "readable": 44}]


@pytest.mark.slow
def test_eval_scorecard_reports_the_comprehension_accuracy(results: Path) -> None:
    code, out, err = pdbench("eval", "--model", "mock/tft?confused=0.5", "--opponents", "TFT,ALLD", "--rounds",
                             "5", "--replicates", "2", "--comprehension", "1,5", "--results", results,
                             "--run-id", "ev")  # fmt: skip
    assert code == 0, err
    rows = sql_json(results, "select kind, questions, correct, accuracy from comprehension_accuracy order by kind")
    totals = sql_json(results, "select count(*) as n, count(*) filter (where correct) as ok from comprehension")[0]
    assert totals["n"] == 4 * (5 + 6)
    overall = next(r for r in rows if r["kind"] == "all")
    assert (overall["questions"], overall["correct"]) == (totals["n"], totals["ok"])
    assert "Comprehension check" in out and f"{totals['ok'] / totals['n']:.1%}" in out
    code, _, err = pdbench(
        "eval", "--model", "mock/tft", "--rounds", "5", "--comprehension", "1,6", "--results", results
    )
    assert code == 2 and "comprehension.rounds (and the same in 8 more conditions): round 6 is never reached" in err
