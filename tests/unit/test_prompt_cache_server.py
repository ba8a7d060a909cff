"""The loopback server accounts for prompt caching as each provider does (``prompt_cache=True``), seen through
the official SDKs and the harness's providers: a prefix seen before, at or above the threshold, is reported
cached, in OpenAI's 128-token steps or at Anthropic's breakpoints within its 20-block lookback. Expected counts
are worked by hand from the server's tokenizer: four characters a token, plus one token per OpenAI message for
its role; every Anthropic block counted on its own."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from harness.providers.anthropic import AnthropicProvider
from harness.providers.base import SamplingParams
from harness.providers.openai import OpenAIProvider
from tests.support.llm_server import FakeLLMServer

KEY = "sk-test-prompt-cache"
PARAMS = SamplingParams(max_tokens=16)


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def test_openai_reports_the_seen_prefix_in_128_token_steps_from_1024(llm_server: FakeLLMServer) -> None:
    llm_server.configure(prompt_cache=True)
    provider = OpenAIProvider("gpt-test", api_key=KEY, base_url=llm_server.openai_base_url)
    system = "x" * 4000  # 1,000 tokens, and one for the role: 1,001
    try:
        first = await provider.generate(chat(system, "y" * 400), PARAMS, timeout=5)  # + 1 + 100 = 1,102
        # The same prefix and a longer user message: 1,001 + 1 + 300 = 1,302 tokens, of which the first 1,102
        # were seen; in whole 128-token steps that is 1,024.
        second = await provider.generate(chat(system, "y" * 400 + "z" * 800), PARAMS, timeout=5)
        # 750 + 1 tokens of the same system text are seen (751, 640 in steps): below 1,024, nothing is read.
        short = await provider.generate(chat("x" * 3000, "w" * 400), PARAMS, timeout=5)
        # The second prompt again: all of it was seen (1,302 tokens: 1,280 in steps).
        again = await provider.generate(chat(system, "y" * 400 + "z" * 800), PARAMS, timeout=5)
    finally:
        await provider.aclose()
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == (1102, 0, None)
    assert (second.input_tokens, second.cached_input_tokens) == (1302, 1024)
    assert (short.input_tokens, short.cached_input_tokens) == (852, 0)
    assert (again.input_tokens, again.cached_input_tokens) == (1302, 1280)


async def test_openai_remembers_prompts_per_model_and_prompt_cache_key(llm_server: FakeLLMServer) -> None:
    llm_server.configure(prompt_cache=True)
    messages: Any = chat("x" * 8000, "y")  # 2,001 + 2 = 2,003 tokens: 1,920 in steps
    async with openai.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0) as client:

        async def cached(model: str, key: str | None) -> int | None:
            extra = {"prompt_cache_key": key} if key is not None else {}
            response = await client.chat.completions.create(model=model, messages=messages, **extra)
            assert response.usage is not None and response.usage.prompt_tokens_details is not None
            return response.usage.prompt_tokens_details.cached_tokens

        assert await cached("m", "game-1-a") == 0
        assert await cached("m", "game-1-a") == 1920
        assert await cached("m", "game-1-b") == 0  # another key: another cache
        assert await cached("other", "game-1-a") == 0  # another model
        assert await cached("m", None) == 0
        assert await cached("m", None) == 1920


async def test_openai_usage_is_unchanged_with_caching_off(llm_server: FakeLLMServer) -> None:
    provider = OpenAIProvider("gpt-test", api_key=KEY, base_url=llm_server.openai_base_url)
    try:
        for _ in range(2):
            completion = await provider.generate(chat("x" * 8000, "y"), PARAMS, timeout=5)
            assert completion.cached_input_tokens is None
    finally:
        await provider.aclose()


def text(body: str, *, breakpoint: str | None = None) -> dict[str, Any]:
    """A text block; ``breakpoint``: its cache_control ttl ("5m" sends none, Anthropic's default)."""
    block: dict[str, Any] = {"type": "text", "text": body}
    if breakpoint == "5m":
        block["cache_control"] = {"type": "ephemeral"}
    elif breakpoint is not None:
        block["cache_control"] = {"type": "ephemeral", "ttl": breakpoint}
    return block


async def usage_of(client: anthropic.AsyncAnthropic, system: list[Any], messages: list[Any]) -> dict[str, Any]:
    response = await client.messages.create(model="claude-test", max_tokens=16, system=system, messages=messages)
    u = response.usage
    assert u.cache_creation is not None
    return {
        "input": u.input_tokens,
        "read": u.cache_read_input_tokens,
        "written": u.cache_creation_input_tokens,
        "1h": u.cache_creation.ephemeral_1h_input_tokens,
    }


async def test_anthropic_writes_breakpoint_prefixes_and_reads_them_back(llm_server: FakeLLMServer) -> None:
    llm_server.configure(prompt_cache=True)
    system = [text("s" * 4000, breakpoint="5m")]  # block 0: 1,000 tokens, below 1,024: not written on its own
    round_1 = {"role": "user", "content": [text("u" * 400, breakpoint="1h")]}  # block 1: 100 tokens, through 1,100
    async with anthropic.AsyncAnthropic(base_url=llm_server.anthropic_base_url, api_key=KEY, max_retries=0) as client:
        first = await usage_of(client, system, [round_1])
        # Blocks 2 ("C", 1 token) and 3 (100 tokens, a breakpoint: through 1,201), then 8 characters (2 tokens).
        round_2 = {"role": "user", "content": [text("v" * 400, breakpoint="5m"), text("Round 2?")]}
        second = await usage_of(client, system, [round_1, {"role": "assistant", "content": "C"}, round_2])
        # A prompt whose every breakpoint prefix is below 1,024 tokens writes nothing, and so reads nothing.
        small = [text("t" * 2000, breakpoint="5m")]  # 500 tokens
        tiny = [{"role": "user", "content": [text("q" * 400, breakpoint="5m")]}]  # through 600
        below = [await usage_of(client, small, tiny) for _ in range(2)]
    # Anthropic's convention: input_tokens is what was neither read nor written.
    assert first == {"input": 0, "read": 0, "written": 1100, "1h": 1100}  # up to the last breakpoint, 1h-ttl
    assert second == {"input": 2, "read": 1100, "written": 101, "1h": 0}  # 1,201 - 1,100, at block 3's 5m
    assert below == [{"input": 600, "read": 0, "written": 0, "1h": 0}] * 2


async def test_anthropic_looks_back_20_blocks_from_a_breakpoint(llm_server: FakeLLMServer) -> None:
    llm_server.configure(prompt_cache=True)
    system = [text("s" * 4000)]  # block 0: 1,000 tokens
    opening = text("u" * 400)  # block 1: through 1,100

    def rounds(breakpoint_at: int) -> list[Any]:
        """Blocks 2 to 26 (a token each), the breakpoint at block ``breakpoint_at`` alone."""
        blocks = [text(f"r{i:03d}", breakpoint="5m" if i == breakpoint_at else None) for i in range(2, 27)]
        return [{"role": "user", "content": [opening, *blocks]}]

    async with anthropic.AsyncAnthropic(base_url=llm_server.anthropic_base_url, api_key=KEY, max_retries=0) as client:
        written = await usage_of(client, system, [{"role": "user", "content": [text("u" * 400, breakpoint="5m")]}])
        assert written == {"input": 0, "read": 0, "written": 1100, "1h": 0}  # the prefix through block 1
        # Blocks 2 to 26 are a token each ("r002": four characters). A breakpoint at block 22 looks back to block
        # 2: block 1's entry is 21 boundaries back, a miss; the request writes its own prefix, through block 22
        # (1,100 + 21 = 1,121 tokens), and blocks 23 to 26 are input.
        miss = await usage_of(client, system, rounds(22))
        # At block 21 the lookback reaches block 1 (20 boundaries back): 1,100 read, 20 written, 5 input.
        hit = await usage_of(client, system, rounds(21))
    assert miss == {"input": 4, "read": 0, "written": 1121, "1h": 0}
    assert hit == {"input": 5, "read": 1100, "written": 20, "1h": 0}


async def test_anthropic_through_the_provider_counts_all_input(llm_server: FakeLLMServer) -> None:
    """The harness's provider sends no breakpoint (yet): nothing is cached, the zeros are reported, and its
    input_tokens are Anthropic's input_tokens (the provider adds reads and writes, here none)."""
    llm_server.configure(prompt_cache=True)
    provider = AnthropicProvider("claude-test", api_key=KEY, base_url=llm_server.anthropic_base_url)
    try:
        completions = [await provider.generate(chat("s" * 8000, "u" * 40), PARAMS, timeout=5) for _ in range(2)]
    finally:
        await provider.aclose()
    for c in completions:
        assert (c.input_tokens, c.cached_input_tokens, c.cache_write_tokens) == (2010, 0, 0)


@pytest.mark.parametrize("setting", [{"openai_cache_min": 0}, {"anthropic_lookback": -1}])
def test_the_cache_settings_are_checked(setting: dict[str, int]) -> None:
    from tests.support.llm_server import ServerConfig

    with pytest.raises(ValueError, match="cache"):
        ServerConfig(**setting)  # type: ignore[arg-type]
