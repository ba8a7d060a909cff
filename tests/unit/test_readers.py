"""What decides a model's move, in process and fast: the judge's reading of its answer, the settings that ask for
structured replies and a judge, and a model player reading structured replies and consulting its judge (mock
provider, no cache)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import ValidationError

from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallPath
from harness.calls.pricing import PriceTable
from harness.calls.record import Reader
from harness.config.agents import ModelAgentConfig
from harness.game.horizon import FixedHorizonInfo
from harness.game.rules import PayoffMatrix
from harness.game.view import RoundView
from harness.players.model.judge import Judge, Verdict, judge_messages, read_verdict
from harness.players.model.player import LLMAgent, ModelPlayer
from harness.players.model.prompts.builder import PromptBuilder
from harness.players.model.settings import ParsePolicy
from harness.providers.base import Sample, SamplingParams
from harness.providers.mock import MockProvider
from harness.providers.structured import ReplySchema


@pytest.mark.parametrize(
    ("text", "shown", "verdict", "action"),
    [
        ("first", ("C", "D"), Verdict.FIRST, "C"),
        ("First.", ("D", "C"), Verdict.FIRST, "D"),  # the first option shown was D
        ("**second**", ("C", "D"), Verdict.SECOND, "D"),
        ("The answer: second", ("D", "C"), Verdict.SECOND, "C"),
        ("unclear", ("C", "D"), Verdict.UNCLEAR, None),
        ("Unclear.", ("C", "D"), Verdict.UNCLEAR, None),
    ],
)
def test_a_judgment_names_the_option_in_the_order_shown(
    text: str, shown: tuple[Any, Any], verdict: Verdict, action: str | None
) -> None:
    reading = read_verdict(text, shown)
    assert (reading.value, reading.action, reading.unreadable) == (verdict, action, None)
    assert reading.reader == (Reader.JUDGE if action else None)


@pytest.mark.parametrize("text", ["", "C", "first or second", "not first", "I think the player chose the first one"])
def test_a_judgment_that_is_not_one_of_the_three_is_unreadable(text: str) -> None:
    reading = read_verdict(text, ("C", "D"))
    assert reading.action is None and reading.unreadable is not None


def test_the_judge_sees_only_the_labels_and_the_reply() -> None:
    system, user = judge_messages("I'd say F, probably.", "J", "F")
    assert '"J" (the first) and "F" (the second)' in user["content"] and "I'd say F, probably." in user["content"]
    text = (system["content"] + user["content"]).lower()
    assert not any(word in text for word in ("cooperat", "defect", "payoff", "points", "round 1"))


def agent_config(**prompts_and_parse: Any) -> ModelAgentConfig:
    return ModelAgentConfig.model_validate({"model": "mock/tft", **prompts_and_parse})


def test_structured_settings_are_kept_by_the_player_and_written_back_where_they_were_written() -> None:
    cfg = agent_config(
        prompts={"answer_format": "structured", "reasoning": True, "labels": {"cooperate": "J", "defect": "F"}},
        parse={"judge": "mock/defector", "max_retries": 1},
    )
    assert cfg.reply_schema() == ReplySchema(labels=("J", "F"), reasoning=True)
    assert cfg.prompts.answer_format == "json" and cfg.judge == "mock/defector" and cfg.parse.max_retries == 1
    resolved = cfg.resolved()
    assert resolved["prompts"]["answer_format"] == "structured" and resolved["prompts"]["reasoning"] is True
    assert resolved["parse"]["judge"] == "mock/defector"
    assert "structured" not in resolved and "judge" not in resolved  # only where the user writes them
    assert ModelAgentConfig.model_validate(resolved).resolved() == resolved  # stored configs replay
    plain = agent_config()
    assert plain.reply_schema() is None and plain.judge is None and "judge" not in plain.resolved()["parse"]


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"prompts": {"reasoning": True}}, "only with answer_format: structured"),
        ({"parse": {"judge": "acme/judge"}}, "unknown provider 'acme'"),
        ({"parse": {"judge": "mock/nonsense"}}, "unknown mock behaviour"),
        ({"parse": {"judge": "gpt-4o"}}, "has no provider"),
        ({"judge": "mock/tft"}, "write judge as parse.judge"),
        ({"structured": True}, "write structured as prompts.answer_format: structured"),
    ],
)
def test_bad_reader_settings_are_refused_with_what_to_write(settings: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        agent_config(**settings)


VIEW = RoundView(
    seat="a",
    round=1,
    horizon=FixedHorizonInfo(3),
    payoffs=PayoffMatrix(),
    own_moves=[],
    opponent_moves=[],
    own_payoffs=[],
    opponent_payoffs=[],
    own_score=0.0,
    opponent_score=0.0,
)


def agent(model: str, *, structured: bool = False, judge: str | None = None, retries: int = 1) -> LLMAgent:
    limiter = EndpointLimiter(LimitSettings())
    reply = ReplySchema(labels=("C", "D")) if structured else None
    player = ModelPlayer(
        name=model,
        provider=MockProvider(model),
        limiter=limiter,
        prompts=PromptBuilder(),
        params=SamplingParams(),
        parse=ParsePolicy(max_retries=retries),
        reply=reply,
        judge=None if judge is None else Judge(judge, MockProvider(judge.partition("/")[2]), limiter),
    )
    calls = CallPath(cache=None, prices=PriceTable([]))
    sample = Sample("c", 0, "a")
    return LLMAgent(player, calls, seat="a", game_id=0, game_seed=1, sample=sample, rng=random.Random(0))


async def test_a_structured_move_is_read_from_its_field_and_recorded_as_such() -> None:
    me = agent("defector", structured=True)
    decision = await me.act(VIEW)
    [call] = me.take_records()
    assert decision.action == "D" and not decision.flagged
    assert (call.answer_format, call.reader, call.action, call.response_text) == (
        "structured",
        "structured",
        "D",
        '{"action": "D"}',
    )
    assert '"reply": {"labels": ["C", "D"], "reasoning": false}' in call.request_json


async def test_a_judge_decides_a_refused_reply_before_the_reask() -> None:
    me = agent("tft?unparseable=1", judge="mock/defector")
    decision = await me.act(VIEW)
    move, judged = me.take_records()
    assert decision.action == "D" and not decision.flagged
    assert (move.purpose, move.outcome.value, move.reader) == ("move", "unparseable", None)
    assert (judged.purpose, judged.attempt, judged.action, judged.reader) == ("judge", 1, "D", "judge")
    assert judged.response_text == "second" and judged.model == "defector"


async def test_an_unclear_judgment_leads_to_the_reask_and_each_refused_reply_is_judged() -> None:
    me = agent("tft?unparseable=1", judge="mock/cooperator?confused=1", retries=1)
    decision = await me.act(VIEW)
    records = me.take_records()
    assert decision.flagged and decision.action == "D"  # the fallback
    assert [(r.purpose, r.attempt) for r in records] == [("move", 1), ("judge", 1), ("move", 2), ("judge", 2)]
    assert {r.response_text for r in records if r.purpose == "judge"} == {"unclear"}
    assert all(r.action is None for r in records)


async def test_without_a_judge_a_refused_reply_is_asked_again_as_before() -> None:
    me = agent("tft?unparseable=1")
    await me.act(VIEW)
    assert [r.purpose for r in me.take_records()] == ["move", "move"]
