"""What the providers are told about a prompt's reusable prefixes (CacheHints): Anthropic's ``cache_control``
breakpoints on content blocks cut where the template marked them, OpenAI's ``prompt_cache_key``; and, against
the loopback server that caches as each provider does, the rounds of one game read each other's prefixes."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import anyio
import httpx
import pytest
import respx

from harness.players.model.prompts.builder import PromptBuilder, PromptSettings, game_views
from harness.providers.anthropic import AnthropicProvider, to_messages_api
from harness.providers.base import CacheHints, SamplingParams
from harness.providers.openai import OpenAIProvider
from harness.providers.tiers import CacheTtl, ServiceTier
from tests.support.llm_server import FakeLLMServer

KEY = "sk-test-0123456789abcdef"
EPHEMERAL = {"type": "ephemeral"}


def test_without_hints_the_messages_api_gets_plain_text() -> None:
    system, turns = to_messages_api([{"role": "system", "content": "rules"}, {"role": "user", "content": "go"}])
    assert system == "rules" and turns == [{"role": "user", "content": "go"}]


def test_breaks_cut_the_user_turn_into_blocks_with_breakpoints_on_the_rules_and_the_historys_end() -> None:
    user = "RULES|R1|R2|R3|TAIL"
    offsets = [i for i, c in enumerate(user) if c == "|"]  # cut before each bar: RULES, |R1, |R2, |R3, |TAIL
    hints = CacheHints(key="k", breaks=tuple((1, o) for o in offsets))
    system, turns = to_messages_api([{"role": "system", "content": "sys"}, {"role": "user", "content": user}], hints)
    assert system == [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}]
    blocks = turns[0]["content"]
    assert "".join(b["text"] for b in blocks) == user  # the model reads the same text
    assert [b["text"] for b in blocks] == ["RULES", "|R1", "|R2", "|R3", "|TAIL"]
    assert [b.get("cache_control") for b in blocks] == [EPHEMERAL, None, None, EPHEMERAL, None]


def test_round_one_has_one_breakpoint_in_the_user_turn_and_an_hour_long_cache_says_so() -> None:
    hints = CacheHints(breaks=((0, 5),), ttl=CacheTtl.ONE_HOUR)
    system, turns = to_messages_api([{"role": "user", "content": "RULESTAIL"}], hints)
    assert system == ""  # no system prompt (a one-message protocol): nothing to mark there
    assert turns[0]["content"] == [
        {"type": "text", "text": "RULES", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"type": "text", "text": "TAIL"},
    ]


def test_a_reask_keeps_the_first_turns_blocks_and_adds_plain_turns() -> None:
    hints = CacheHints(breaks=((1, 2),))
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "abcd"},
        {"role": "assistant", "content": "hmm"},
        {"role": "user", "content": "again?"},
    ]
    _system, turns = to_messages_api(messages, hints)
    assert turns[0]["content"] == [
        {"type": "text", "text": "ab", "cache_control": EPHEMERAL},
        {"type": "text", "text": "cd"},
    ]
    assert turns[1:] == [{"role": "assistant", "content": "hmm"}, {"role": "user", "content": "again?"}]


def _openai_bodies(base_url: str | None, hints: CacheHints | None) -> dict[str, Any]:
    bodies: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        choice = {"index": 0, "message": {"role": "assistant", "content": "C"}, "finish_reason": "stop"}
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                         "choices": [choice]})  # fmt: skip

    url = (base_url or "https://api.openai.com/v1") + "/chat/completions"

    async def send() -> None:
        async with httpx.AsyncClient() as http:
            provider = OpenAIProvider("gpt-test", api_key=KEY, base_url=base_url, http_client=http)
            await provider.generate([{"role": "user", "content": "go"}], SamplingParams(), 5, cache=hints)

    with respx.mock(assert_all_called=True) as router:  # intercepted: nothing leaves the machine
        router.post(url).mock(side_effect=reply)
        anyio.run(send)
    return json.loads(bodies[0])


def test_openai_gets_the_games_cache_key_on_its_own_api_only() -> None:
    hints = CacheHints(key="pdbench-abc", breaks=((0, 1),))
    assert _openai_bodies(None, hints)["prompt_cache_key"] == "pdbench-abc"
    assert "prompt_cache_key" not in _openai_bodies("http://compatible.test/v1", hints)  # may not know the field
    assert "prompt_cache_key" not in _openai_bodies(None, None)


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_the_rounds_of_a_game_read_each_others_prefixes_from_the_providers_cache(
    name: str, llm_server: FakeLLMServer
) -> None:
    """Twelve rounds of one game, in the cached layout, against the loopback server caching as each provider
    does (its threshold lowered to 64 tokens so that a short game reaches it): from the round whose shared
    start first reaches the threshold, every round reads all that the last one wrote."""
    llm_server.configure(prompt_cache=True, openai_cache_min=64, openai_cache_step=1, anthropic_cache_min=64)
    builder = PromptBuilder(PromptSettings())
    base = llm_server.openai_base_url if name == "openai" else llm_server.anthropic_base_url
    cls = OpenAIProvider if name == "openai" else AnthropicProvider
    kwargs: dict[str, Any] = {"send_cache_key": True} if name == "openai" else {}
    provider = cls("m-test", api_key=KEY, base_url=base, **kwargs)
    usage = []
    try:
        for view in game_views(12):
            prompt = builder.prompt(view)
            hints = CacheHints(key="game-1-a", breaks=prompt.breaks)
            completion = await provider.generate(prompt.messages, SamplingParams(), 5, cache=hints)
            usage.append((completion.input_tokens or 0, completion.cached_input_tokens or 0))
    finally:
        await provider.aclose()
    assert usage[0][1] == 0  # nothing seen before
    reads = [cached for _, cached in usage]
    assert all(later > earlier for earlier, later in pairwise(reads[2:])), usage  # grows each round
    share = sum(reads) / sum(total for total, _ in usage)
    assert share > 0.75, usage


async def test_an_hour_long_cache_ttl_reaches_anthropics_breakpoints_and_is_priced_at_the_hour(
    llm_server: FakeLLMServer,
) -> None:
    """A player with cache_ttl: 1h marks its breakpoints so, and the call path prices its writes at the 1-hour
    write price (2x input against 1.25x)."""
    from harness.calls.path import CallPath
    from harness.calls.pricing import DEFAULT_PRICES, PriceTable

    llm_server.configure(prompt_cache=True, anthropic_cache_min=64)
    builder = PromptBuilder(PromptSettings())
    provider = AnthropicProvider("claude-sonnet-4-6", api_key=KEY, base_url=llm_server.anthropic_base_url)
    prices = PriceTable.load(DEFAULT_PRICES)
    try:
        for view in game_views(6):
            prompt = builder.prompt(view)
            hints = CacheHints(key="g", breaks=prompt.breaks, ttl=CacheTtl.ONE_HOUR)
            completion = await provider.generate(prompt.messages, SamplingParams(), 5, cache=hints)
    finally:
        await provider.aclose()
    body = llm_server.requests[-1].body
    marks = [b.get("cache_control") for b in body["messages"][0]["content"] if "cache_control" in b]
    assert marks and all(m == {"type": "ephemeral", "ttl": "1h"} for m in marks)
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    written = completion.cache_write_tokens or 0
    assert written > 0
    path = CallPath(cache=None, prices=prices)
    hour = path._count("anthropic/claude-sonnet-4-6", completion, ServiceTier.STANDARD, CacheTtl.ONE_HOUR)
    five = path._count("anthropic/claude-sonnet-4-6", completion, ServiceTier.STANDARD, CacheTtl.FIVE_MINUTES)
    assert hour is not None and five is not None
    assert hour - five == pytest.approx(written * (6.00 - 3.75) / 1e6)
