"""The akata2023 suite against the data Akata et al. (2023) released: GPT-4's released answers, served by a
loopback server that replays them by the history each prompt shows (tests/support/replay.py), give per opponent
and seat the cooperation and payoffs the released CSV records (tests/fixtures/akata2023/)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.analysis.report import condition_summaries
from harness.store.catalog import Catalog
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, served_to_the_cli
from tests.support.replay import answer_table, released_games, replay, shown_history

RELEASED = Path(__file__).resolve().parents[1] / "fixtures" / "akata2023" / "gpt4_pd.csv"
GPT4 = "act_gpt4"
# Their players, as the suite names its conditions: (player1, player2) -> (condition, the model's seat).
CONDITIONS = {
    (GPT4, "act_j"): ("vs_ALLC", "a"),
    (GPT4, "act_f"): ("vs_ALLD", "a"),
    (GPT4, "act_defect_once"): ("vs_DONCE", "a"),
    ("act_j", GPT4): ("ALLC_vs_model", "b"),
    ("act_f", GPT4): ("ALLD_vs_model", "b"),
    ("act_defect_once", GPT4): ("DONCE_vs_model", "b"),
    (GPT4, GPT4): ("self_play", "a"),
}


def from_the_csv() -> dict[str, tuple[float, float, str]]:
    """Per condition, straight from the released rows: the model's cooperation rate (share of J answers), its
    points per round, and its answers in round order."""
    games: dict[tuple[str, str], list[dict[str, str]]] = {}
    with RELEASED.open(newline="") as f:
        for row in csv.DictReader(f):
            games.setdefault((row["player1"], row["player2"]), []).append(row)
    out = {}
    for pair, (condition, seat) in CONDITIONS.items():
        rows = sorted(games[pair], key=lambda r: int(r["round"]))
        col = "1" if seat == "a" else "2"
        answers = "".join(r[f"answer{col}"] for r in rows)
        points = [int(r[f"points{col}"]) for r in rows]
        assert len(rows) == 10 and int(rows[-1][f"total{col}"]) == sum(points)  # the release is self-consistent
        out[condition] = (answers.count("J") / len(rows), sum(points) / len(rows), answers)
    return out


@pytest.fixture
def gpt4(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    table = answer_table(released_games(RELEASED, GPT4))  # refuses released answers that disagree
    with served_to_the_cli(monkeypatch, responder=replay(table)) as srv:
        yield srv


def test_the_replay_reads_the_history_the_prompt_shows() -> None:
    prompt = (
        "rules\n\nIn round 1, you chose Option J and the other player chose Option F. So you won 0 points and the "
        "other player won 10 points.\n\nYou are now playing round 2.\nQ: Which option do you choose, Option F or "
        "Option J?\nA: Option"
    )
    assert shown_history(prompt) == (("J", "F"),)
    table = answer_table(released_games(RELEASED, GPT4))
    assert table[()] == "J" and table[(("J", "F"),)] == "F"  # GPT-4 opened with J and answered an F with F
    with pytest.raises(ValueError, match="not an akata2023 round prompt"):
        shown_history(prompt.replace("round 2", "round 3"))


@pytest.mark.slow
def test_gpt4_replayed_through_the_suite_matches_the_released_data(gpt4: FakeLLMServer, results: Path) -> None:
    code, _, err = pdbench("eval", "--suite", "akata2023", "--model", "openai/gpt-4", "--replicates", "2",
                           "--results", results, "--run-id", "gpt4")  # fmt: skip
    assert code == 0, err
    expected = from_the_csv()
    with Catalog(results) as cat:
        summaries = {s.condition: s for s in condition_summaries(cat, "gpt4")}
    assert set(summaries) == set(expected)
    for condition, seat in CONDITIONS.values():
        cooperation, payoff, _ = expected[condition]
        summary = summaries[condition]
        seats = [s for s in summary.seats if s.player == seat]
        if condition == "self_play":
            seats = list(summary.seats)  # the model in both seats: each side must match
        for mine in seats:
            assert mine.name == "openai/gpt-4"
            assert mine.estimates["cooperation_rate"].mean == pytest.approx(cooperation, abs=1e-12), condition
            assert mine.estimates["payoff_per_round"].mean == pytest.approx(payoff, abs=1e-12), condition
    # Round by round, in every replicate (the option orders differ between them), as released.
    moves = sql_json(results, "select g.condition, g.replicate, "
                              "string_agg(r.action_a::varchar, '' order by r.round) as a, "
                              "string_agg(r.action_b::varchar, '' order by r.round) as b "
                              "from rounds r join games g using (run_id, game_id) group by all")  # fmt: skip
    assert len(moves) == 14
    for game in moves:
        condition = game["condition"]
        seat = next(s for c, s in CONDITIONS.values() if c == condition)
        played = game[seat].replace("C", "J").replace("D", "F")
        assert played == expected[condition][2], condition
    sent = [r.body for r in gpt4.requests if r.provider == "openai"]
    assert sent and all(b["max_tokens"] == 1 and b["temperature"] == 0 for b in sent)
    assert all([m["role"] for m in b["messages"]] == ["user"] for b in sent)
    assert all(b["messages"][0]["content"].endswith("\nA: Option") for b in sent)
