"""The fake LLM server, exercised through the real ``openai`` and ``anthropic`` SDKs.

Why through the SDKs: the harness's tests and benchmarks trust this server to make the SDKs raise
the same exception classes, expose the same ``retry-after`` headers and time out the same way as
the real providers. Checking raw JSON alone would not catch a shape the SDK reads differently.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.support.llm_server import (
    DEFAULT_REPLY,
    GARBAGE_REPLY,
    FakeLLMProcess,
    FakeLLMServer,
    always,
    build_responder,
    estimate_tokens,
    garbage_then,
    sequence,
)

KEY = "sk-test-secret-4242"
MESSAGES: list[Any] = [{"role": "user", "content": "Round 1. Do you cooperate (C) or defect (D)?"}]


@pytest.fixture
async def oai(llm_server: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def claude(llm_server: FakeLLMServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(base_url=llm_server.anthropic_base_url, api_key=KEY, max_retries=0)
    yield client
    await client.close()


async def ask_openai(client: openai.AsyncOpenAI) -> str:
    response = await client.chat.completions.create(model="gpt-test", messages=MESSAGES)
    return response.choices[0].message.content or ""


async def ask_anthropic(client: anthropic.AsyncAnthropic) -> str:
    response = await client.messages.create(model="claude-test", max_tokens=50, messages=MESSAGES)
    return response.content[0].text  # type: ignore[union-attr]


async def test_openai_completion_has_the_chat_completion_shape(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    response = await oai.chat.completions.create(model="gpt-test", messages=MESSAGES)

    assert response.object == "chat.completion"
    assert response.model == "gpt-test"
    assert response.choices[0].message.role == "assistant"
    assert response.choices[0].message.content == DEFAULT_REPLY
    assert response.choices[0].finish_reason == "stop"
    assert response.usage is not None
    assert response.usage.prompt_tokens == estimate_tokens(MESSAGES[0]["content"])
    assert response.usage.completion_tokens == estimate_tokens(DEFAULT_REPLY)
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens
    [record] = llm_server.requests
    assert (record.provider, record.path, record.status) == ("openai", "/v1/chat/completions", 200)
    assert record.body["messages"] == MESSAGES
    assert record.has_auth
    assert record.response_text == DEFAULT_REPLY
    assert "authorization" not in record.headers
    assert KEY not in repr(llm_server.requests)


async def test_anthropic_completion_has_the_message_shape(
    llm_server: FakeLLMServer, claude: anthropic.AsyncAnthropic
) -> None:
    message = await claude.messages.create(model="claude-test", max_tokens=50, system="Be brief.", messages=MESSAGES)

    assert (message.type, message.role, message.model) == ("message", "assistant", "claude-test")
    assert message.content[0].type == "text"
    assert message.content[0].text == DEFAULT_REPLY
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == estimate_tokens("Be brief.\n" + MESSAGES[0]["content"])
    assert message.usage.output_tokens == estimate_tokens(DEFAULT_REPLY)
    [record] = llm_server.requests
    assert (record.provider, record.path, record.status, record.has_auth) == ("anthropic", "/v1/messages", 200, True)
    assert KEY not in repr(llm_server.requests)  # the SDK sends it as `authorization: Bearer`


async def test_x_api_key_is_accepted_and_never_recorded(llm_server: FakeLLMServer) -> None:
    body = {"model": "claude-test", "max_tokens": 5, "messages": MESSAGES}
    async with httpx.AsyncClient(base_url=llm_server.base_url, trust_env=False) as http:
        response = await http.post("/v1/messages", json=body, headers={"x-api-key": KEY})
    assert response.status_code == 200
    assert response.headers["request-id"].startswith("req_")
    assert KEY not in repr(llm_server.requests)


async def test_missing_auth_is_401_in_each_providers_shape(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    with pytest.raises(openai.AuthenticationError) as openai_error:
        await oai.chat.completions.create(
            model="gpt-test", messages=MESSAGES, extra_headers={"Authorization": openai.Omit()}
        )
    with pytest.raises(anthropic.AuthenticationError) as anthropic_error:
        await claude.messages.create(
            model="claude-test", max_tokens=5, messages=MESSAGES, extra_headers={"Authorization": anthropic.Omit()}
        )
    async with httpx.AsyncClient(base_url=llm_server.base_url, trust_env=False) as http:
        not_bearer = await http.post("/v1/chat/completions", json={}, headers={"authorization": "Basic abc"})

    assert openai_error.value.response.json()["error"]["code"] == "invalid_api_key"
    assert anthropic_error.value.response.json() == {
        "type": "error",
        "error": {"type": "authentication_error", "message": anthropic_error.value.body["error"]["message"]},  # type: ignore[index]
    }
    assert not_bearer.status_code == 401
    assert llm_server.count(status=401) == 3
    assert all(not r.has_auth and r.fault == "auth" for r in llm_server.requests)


async def test_invalid_requests_are_400(llm_server: FakeLLMServer) -> None:
    auth = {"authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=llm_server.base_url, headers=auth, trust_env=False) as http:
        no_max_tokens = await http.post("/v1/messages", json={"model": "m", "messages": MESSAGES})
        streaming = await http.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "stream": True})
        not_json = await http.post("/v1/chat/completions", content=b"{oops")

    assert no_max_tokens.status_code == 400
    assert no_max_tokens.json()["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in no_max_tokens.json()["error"]["message"]
    assert streaming.status_code == 400
    assert not_json.status_code == 400
    assert not_json.json()["error"]["type"] == "invalid_request_error"


async def test_rpm_limit_rejects_the_sixth_request_in_the_window(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.rpm_limit = 5
    for _ in range(5):
        await ask_openai(oai)

    with pytest.raises(openai.RateLimitError) as caught:
        await ask_openai(oai)
    await ask_anthropic(claude)  # each provider has its own window

    headers = caught.value.response.headers
    assert 1 <= int(headers["retry-after"]) <= 60
    assert 0 < int(headers["retry-after-ms"]) <= 60_000
    assert 0 < caught.value.response.json()["error"]["retry_after"] <= 60
    assert caught.value.response.json()["error"]["code"] == "rate_limit_exceeded"
    assert llm_server.rate_limited_count == 1
    assert llm_server.count(provider="openai", status=200) == 5
    assert llm_server.requests[5].fault == "rate_limit"


async def test_the_window_rolls_and_retry_after_is_honest(
    llm_server: FakeLLMServer, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.configure(rpm_limit=1, rate_window_s=0.3)
    await ask_anthropic(claude)
    with pytest.raises(anthropic.RateLimitError) as caught:
        await ask_anthropic(claude)

    wait_ms = int(caught.value.response.headers["retry-after-ms"])
    assert caught.value.response.headers["retry-after"] == "1"  # whole seconds, rounded up
    assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert 0 < wait_ms <= 300
    await asyncio.sleep(wait_ms / 1000 + 0.02)
    assert await ask_anthropic(claude) == DEFAULT_REPLY


async def test_scripted_openai_failures_raise_the_sdk_classes(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    llm_server.fail_next("openai", [500, 400, 429, 529])

    with pytest.raises(openai.InternalServerError):
        await ask_openai(oai)
    with pytest.raises(openai.BadRequestError):
        await ask_openai(oai)
    with pytest.raises(openai.RateLimitError) as limited:
        await ask_openai(oai)
    with pytest.raises(openai.InternalServerError) as overloaded:
        await ask_openai(oai)
    assert await ask_openai(oai) == DEFAULT_REPLY

    assert limited.value.response.headers["retry-after"] == "1"
    assert overloaded.value.status_code == 529
    assert [r.status for r in llm_server.requests] == [500, 400, 429, 529, 200]
    assert [r.fault for r in llm_server.requests] == ["scripted"] * 4 + [None]


async def test_scripted_anthropic_failures_raise_the_sdk_classes(
    llm_server: FakeLLMServer, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.fail_next("anthropic", [500, 529, 400])

    with pytest.raises(anthropic.InternalServerError) as internal:
        await ask_anthropic(claude)
    with pytest.raises(anthropic.OverloadedError) as overloaded:
        await ask_anthropic(claude)
    with pytest.raises(anthropic.BadRequestError):
        await ask_anthropic(claude)
    assert await ask_anthropic(claude) == DEFAULT_REPLY

    assert not isinstance(internal.value, anthropic.OverloadedError)
    assert internal.value.body["error"]["type"] == "api_error"  # type: ignore[index]
    assert overloaded.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


async def test_scripted_timeout_raises_api_timeout_error(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.fail_next("openai", ["timeout"])
    llm_server.fail_next("anthropic", ["timeout"])
    started = time.monotonic()

    with pytest.raises(openai.APITimeoutError):
        await oai.with_options(timeout=0.3).chat.completions.create(model="gpt-test", messages=MESSAGES)
    with pytest.raises(anthropic.APITimeoutError):
        await claude.with_options(timeout=0.3).messages.create(model="claude-test", max_tokens=5, messages=MESSAGES)

    assert time.monotonic() - started < 2
    assert await ask_openai(oai) == DEFAULT_REPLY  # the failure was used up
    assert [r.fault for r in llm_server.requests[:2]] == ["timeout", "timeout"]
    assert llm_server.requests[0].status is None  # the answer is still being held back


async def test_scripted_corrupt_and_html_answers_are_200s_the_sdks_cannot_read(
    llm_server: FakeLLMServer, oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    llm_server.fail_next("openai", ["corrupt", "html"])
    llm_server.fail_next("anthropic", ["corrupt"])
    async with httpx.AsyncClient(trust_env=False) as raw:
        sent = await raw.post(
            f"{llm_server.openai_base_url}/chat/completions",
            json={"model": "gpt-test", "messages": MESSAGES},
            headers={"authorization": f"Bearer {KEY}"},
        )
    assert sent.status_code == 200 and sent.headers["content-type"] == "application/json"
    assert sent.content.startswith(b'{"id"#') and int(sent.headers["content-length"]) == len(sent.content)
    with pytest.raises(json.JSONDecodeError):  # whole, but not JSON
        json.loads(sent.content)
    assert isinstance(await oai.chat.completions.create(model="gpt-test", messages=MESSAGES), str)  # the page
    with pytest.raises(json.JSONDecodeError):
        await ask_anthropic(claude)
    assert await ask_openai(oai) == DEFAULT_REPLY  # the faults were used up
    assert [(r.status, r.fault) for r in llm_server.requests] == [(200, "corrupt"), (200, "html"), (200, "corrupt"),
                                                              (200, None)]  # fmt: skip
    with pytest.raises(ValueError, match="'corrupt', 'html'"):
        llm_server.fail_next("openai", ["garbled"])


async def test_stopping_wakes_a_held_back_answer_at_once() -> None:
    with FakeLLMServer(timeout_s=30) as llm_server:
        llm_server.fail_next("openai", ["timeout"])
        async with openai.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0) as oai:
            with pytest.raises(openai.APITimeoutError):
                await oai.with_options(timeout=0.2).chat.completions.create(model="gpt-test", messages=MESSAGES)
        started = time.monotonic()
    assert time.monotonic() - started < 3


async def test_latency_is_added_to_each_request(llm_server: FakeLLMServer, oai: openai.AsyncOpenAI) -> None:
    llm_server.latency_ms = 150
    started = time.monotonic()
    await asyncio.gather(ask_openai(oai), ask_openai(oai))  # concurrent: async sleeps, not serial
    assert 0.14 <= time.monotonic() - started < 1


async def test_error_rate_is_random_but_replayable(llm_server: FakeLLMServer, oai: openai.AsyncOpenAI) -> None:
    llm_server.configure(error_rate=0.5, seed=7)

    async def statuses() -> list[int]:
        seen = []
        for _ in range(12):
            try:
                await ask_openai(oai)
                seen.append(200)
            except openai.InternalServerError as exc:
                seen.append(exc.status_code)
        return seen

    first = await statuses()
    llm_server.reset()
    assert await statuses() == first
    assert set(first) == {200, 500}
    assert {r.fault for r in llm_server.requests if r.status == 500} == {"random"}


async def test_responders_script_the_answers(llm_server: FakeLLMServer, oai: openai.AsyncOpenAI) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def spy(provider: str, request: dict[str, Any]) -> str:
        seen.append((provider, request))
        return "D"

    llm_server.responder = sequence(["C", "D"])
    assert [await ask_openai(oai) for _ in range(3)] == ["C", "D", "C"]
    llm_server.responder = spy
    assert await ask_openai(oai) == "D"
    assert seen == [("openai", {"model": "gpt-test", "messages": MESSAGES})]

    garbage = garbage_then(2, "Final answer: D")
    assert [garbage("openai", {}) for _ in range(3)] == [GARBAGE_REPLY, GARBAGE_REPLY, "Final answer: D"]
    assert always("x")("anthropic", {}) == "x"
    assert build_responder(["A", "B"], garbage_first=1)("openai", {}) == GARBAGE_REPLY
    with pytest.raises(ValueError, match="rpm_limit"):
        llm_server.rpm_limit = 0


@pytest.mark.slow
async def test_subprocess_mode_serves_and_stops() -> None:
    with FakeLLMProcess(replies=["Final answer: D"], latency_ms=1) as proc:
        assert proc.base_url.startswith("http://127.0.0.1:")
        proc.fail_next("anthropic", [529])
        async with openai.AsyncOpenAI(base_url=proc.openai_base_url, api_key=KEY, max_retries=0) as oai:
            assert await ask_openai(oai) == "Final answer: D"
        async with anthropic.AsyncAnthropic(base_url=proc.anthropic_base_url, api_key=KEY, max_retries=0) as claude:
            with pytest.raises(anthropic.OverloadedError):
                await ask_anthropic(claude)
        assert proc.count(provider="openai", status=200) == 1
        assert proc.count(status=529) == 1
        assert proc.requests[0]["has_auth"] is True
        assert proc.returncode is None
    assert proc.returncode is not None
