"""Structured replies (``answer_format: structured``): each provider asks for the move through its own constrained
output and hands back the reply object as JSON text, read from its ``action`` field.

Through the real SDKs against the loopback server, which checks the request's shape (OpenAI's ``response_format``
with a strict JSON schema, Anthropic's forced tool call) and answers as a constrained decoder would, or refuses
the request as a server without constrained output does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness.providers.base import Fault, PromptFacts, SamplingParams
from harness.providers.mock import MockProvider
from harness.providers.structured import ReplySchema, ReplyViolation
from tests.support.llm_server import FakeLLMServer, constrained, reply_schema
from tests.unit.test_providers import MESSAGES, NAMES, base_url_of, provider_for

JF = ReplySchema(labels=("J", "F"))
WITH_REASONING = ReplySchema(labels=("C", "D"), reasoning=True)


@pytest.fixture(params=NAMES)
async def provider(request: pytest.FixtureRequest, llm_server: FakeLLMServer) -> AsyncIterator[Any]:
    made = provider_for(request.param, base_url_of(llm_server, request.param))
    yield made
    await made.aclose()


def test_the_schema_is_strict_with_the_action_an_enum_of_the_two_labels() -> None:
    assert JF.json_schema() == {
        "type": "object",
        "properties": {"action": {"type": "string", "enum": ["J", "F"]}},
        "required": ["action"],
        "additionalProperties": False,
    }
    schema = WITH_REASONING.json_schema()
    assert list(schema["properties"]) == ["reasoning", "action"] == schema["required"]  # reasoning first


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('{"action": "F"}', "F"),
        ('{"action": "J"}', "J"),
        ('{"action": "C"}', ReplyViolation("the structured reply's action 'C' is not one of J or F")),
        ('{"action": "j"}', ReplyViolation("the structured reply's action 'j' is not one of J or F")),
        ("F", ReplyViolation("the structured reply is not JSON")),
        ('["F"]', ReplyViolation("the structured reply is not a JSON object")),
        ('{"action": "F", "why": "x"}', ReplyViolation("the structured reply has fields the schema does not allow")),
    ],
)
def test_a_reply_is_read_from_its_field_or_is_a_violation(text: str, read: object) -> None:
    assert JF.read(text) == read


def test_a_reply_without_its_reasoning_breaks_a_schema_that_asks_for_it() -> None:
    assert WITH_REASONING.read('{"reasoning": "they cooperated", "action": "C"}') == "C"
    assert isinstance(WITH_REASONING.read('{"action": "C"}'), ReplyViolation)


def test_free_requests_keep_their_parameters_and_cache_keys() -> None:
    free = SamplingParams(temperature=0.0, max_tokens=5)
    assert "reply" not in free.as_dict()
    assert SamplingParams(max_tokens=5, reply=JF).as_dict()["reply"] == {"labels": ["J", "F"], "reasoning": False}


@pytest.mark.parametrize(("schema", "option"), [(JF, 1), (JF, 0), (WITH_REASONING, 1)])
async def test_each_provider_asks_for_the_schema_and_returns_the_reply_object(
    provider: Any, llm_server: FakeLLMServer, schema: ReplySchema, option: int
) -> None:
    llm_server.configure(responder=constrained(option))
    completion = await provider.generate(MESSAGES, SamplingParams(max_tokens=64, reply=schema), 10.0)
    assert schema.read(completion.text) == schema.labels[option]
    body = llm_server.requests[-1].body
    assert reply_schema(provider.name, body) == schema.json_schema()
    if provider.name == "openai":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["strict"] is True
    else:
        assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
        assert len(body["tools"]) == 1


async def test_a_free_request_sends_no_schema(provider: Any, llm_server: FakeLLMServer) -> None:
    await provider.generate(MESSAGES, SamplingParams(max_tokens=16), 10.0)
    body = llm_server.requests[-1].body
    assert "response_format" not in body and "tools" not in body and "tool_choice" not in body


async def test_a_reply_that_ignores_the_schema_is_handed_back_as_it_came(
    provider: Any, llm_server: FakeLLMServer
) -> None:
    llm_server.configure(responder=lambda p, r: "I pick F")
    completion = await provider.generate(MESSAGES, SamplingParams(max_tokens=16, reply=JF), 10.0)
    assert completion.text == "I pick F" and isinstance(JF.read(completion.text), ReplyViolation)


async def test_a_server_without_constrained_output_refuses_for_good(provider: Any, llm_server: FakeLLMServer) -> None:
    """A 400 is the caller's mistake: not retried; the game fails with the server's own words."""
    llm_server.configure(structured=False)
    with pytest.raises(Exception) as raised:
        await provider.generate(MESSAGES, SamplingParams(max_tokens=16, reply=JF), 10.0)
    decision = provider.should_retry(raised.value)
    assert decision.fault is Fault.REJECTED and "does not support" in decision.reason
    assert "refused the structured reply" in decision.reason and "answer_format: json" in decision.reason


async def test_other_failures_of_a_structured_request_keep_their_kind(provider: Any, llm_server: FakeLLMServer) -> None:
    llm_server.fail_next(provider.name, [429])
    with pytest.raises(Exception) as raised:
        await provider.generate(MESSAGES, SamplingParams(max_tokens=16, reply=JF), 10.0)
    decision = provider.should_retry(raised.value)
    assert decision.fault is Fault.RATE_LIMITED and "structured" not in decision.reason


FACTS = PromptFacts(cooperate="J", defect="F", option_order="CD", answer_format="json", own_moves=(), opponent_moves=())


@pytest.mark.parametrize(("behaviour", "label"), [("cooperator", "J"), ("defector", "F")])
@pytest.mark.parametrize("schema", [JF, ReplySchema(labels=("J", "F"), reasoning=True)])
async def test_the_mock_answers_within_the_schema(behaviour: str, label: str, schema: ReplySchema) -> None:
    completion = await MockProvider(behaviour).generate(MESSAGES, SamplingParams(reply=schema), 1.0, FACTS)
    assert schema.read(completion.text) == label


async def test_the_mock_breaks_the_schema_at_its_unparseable_rate() -> None:
    completion = await MockProvider("cooperator?unparseable=1").generate(MESSAGES, SamplingParams(reply=JF), 1.0, FACTS)
    assert isinstance(JF.read(completion.text), ReplyViolation)
