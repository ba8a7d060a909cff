"""The OpenAI and Anthropic providers and the registry that builds them.

Why through the real SDKs: what the harness relies on is what the SDKs do on the wire (which
field carries the system prompt, which exception a 529 becomes, where ``retry-after`` is read,
that ``max_retries=0`` really means one request). So the providers talk to the loopback
``FakeLLMServer`` on 127.0.0.1, or to an in-memory transport where a test needs an answer the
server cannot script. Nothing here reaches the network or reads the real environment.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pydantic
import pytest
import respx

from harness.errors import ConfigError
from harness.providers.anthropic import AnthropicProvider, to_messages_api
from harness.providers.base import FailureKind, Fault, MalformedResponse, Provider, SamplingParams
from harness.providers.info import ANTHROPIC, OPENAI
from harness.providers.mock import MockProvider
from harness.providers.openai import OpenAIProvider
from harness.providers.registry import (
    PROVIDERS,
    ProviderSettings,
    allow_keys_to,
    check_credentials,
    is_offline,
    key_origins,
    make_provider,
    parse_model_name,
    resolve_credentials,
    sends_key,
    settings_for,
)
from harness.providers.sdk import SdkProvider
from tests.support.llm_server import DEFAULT_REPLY, FakeLLMServer, estimate_tokens

KEY = "sk-test-secret-4242-do-not-leak"
SYSTEM = "You are playing an iterated Prisoner's Dilemma."
USER = "Round 1. Answer with exactly one of C or D."
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
PARAMS = SamplingParams(temperature=0.7, max_tokens=32, seed=11)
NAMES = ("openai", "anthropic")


def provider_for(name: str, base_url: str, **kwargs: Any) -> OpenAIProvider | AnthropicProvider:
    if name == "openai":
        return OpenAIProvider("gpt-test", api_key=KEY, base_url=base_url, **kwargs)
    return AnthropicProvider("claude-test", api_key=KEY, base_url=base_url, **kwargs)


def base_url_of(llm_server: FakeLLMServer, name: str) -> str:
    return llm_server.openai_base_url if name == "openai" else llm_server.anthropic_base_url


@pytest.fixture(params=NAMES)
async def provider(request: pytest.FixtureRequest, llm_server: FakeLLMServer) -> AsyncIterator[Any]:
    """Each provider against the fake server; ``provider.name`` says which."""
    made = provider_for(request.param, base_url_of(llm_server, request.param))
    yield made
    await made.aclose()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- completions -----------------------------------------------------------------------------


async def test_openai_completion_carries_text_tokens_model_and_params(llm_server: FakeLLMServer) -> None:
    provider = provider_for("openai", llm_server.openai_base_url)
    try:
        completion = await provider.generate(MESSAGES, PARAMS, timeout=5)
    finally:
        await provider.aclose()

    assert completion.text == DEFAULT_REPLY
    assert completion.model == "gpt-test"
    assert completion.finish_reason == "stop"
    assert completion.input_tokens == estimate_tokens(f"{SYSTEM}\n{USER}")
    assert completion.output_tokens == estimate_tokens(DEFAULT_REPLY)
    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions" and request.has_auth
    body = request.body
    assert body["messages"] == MESSAGES
    assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == ("gpt-test", 0.7, 32, 11)
    assert "top_p" not in body and "max_completion_tokens" not in body  # only what was set


async def test_anthropic_completion_puts_the_system_prompt_in_its_own_field(llm_server: FakeLLMServer) -> None:
    provider = provider_for("anthropic", llm_server.anthropic_base_url)
    try:
        completion = await provider.generate(MESSAGES, SamplingParams(max_tokens=40), timeout=5)
    finally:
        await provider.aclose()

    assert completion.text == DEFAULT_REPLY
    assert completion.model == "claude-test"
    assert completion.finish_reason == "end_turn"
    assert completion.input_tokens == estimate_tokens(f"{SYSTEM}\n{USER}")
    assert completion.output_tokens == estimate_tokens(DEFAULT_REPLY)
    [request] = llm_server.requests
    assert request.path == "/v1/messages" and request.has_auth  # the key went out (as a bearer token)
    body = request.body
    assert body["system"] == SYSTEM
    assert body["messages"] == [{"role": "user", "content": USER}]
    assert (body["model"], body["max_tokens"]) == ("claude-test", 40)


async def test_anthropic_sends_no_sampling_parameters_and_says_so_once(
    llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    """API version 2026-10-21 (SDK 2.x) answers 400 to temperature/top_p at any value."""
    provider = provider_for("anthropic", llm_server.anthropic_base_url)
    try:
        with caplog.at_level("WARNING", logger="harness.providers.anthropic"):
            for _ in range(2):
                await provider.generate(MESSAGES, SamplingParams(temperature=0.0, top_p=0.9, seed=3), timeout=5)
    finally:
        await provider.aclose()
    for request in llm_server.requests:
        assert not {"temperature", "top_p", "top_k", "seed"} & request.body.keys()
    [record] = caplog.records
    assert "seed, temperature, top_p not sent" in record.getMessage()
    assert provider.unsupported_params == {"temperature", "top_p", "seed"}
    assert OpenAIProvider.unsupported_params == frozenset()


async def test_anthropic_without_a_system_message_sends_no_system_field(llm_server: FakeLLMServer) -> None:
    provider = provider_for("anthropic", llm_server.anthropic_base_url)
    try:
        await provider.generate([{"role": "user", "content": USER}], SamplingParams(), timeout=5)
    finally:
        await provider.aclose()
    assert "system" not in llm_server.requests[0].body
    assert "temperature" not in llm_server.requests[0].body


def test_messages_api_translation_merges_roles_and_collects_system_text() -> None:
    system, turns = to_messages_api(
        [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "round 1"},
            {"role": "user", "content": "your move?"},
            {"role": "assistant", "content": "C"},
            {"role": "system", "content": "reminder"},
            {"role": "user", "content": "round 2"},
        ]
    )
    assert system == "rules\n\nreminder"
    assert turns == [
        {"role": "user", "content": "round 1\n\nyour move?"},
        {"role": "assistant", "content": "C"},
        {"role": "user", "content": "round 2"},
    ]
    with pytest.raises(ValueError, match="tool"):
        to_messages_api([{"role": "tool", "content": "x"}])


async def test_anthropic_text_joins_every_text_block_and_skips_others() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        content = [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "I pick "},
            {"type": "text", "text": "D"},
        ]
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-served",
            "content": content,
            "stop_reason": "max_tokens",
            "stop_sequence": None,
            "usage": {"input_tokens": 7, "output_tokens": 3},
        }
        return httpx2.Response(200, json=body)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        provider = AnthropicProvider("claude-test", api_key=KEY, http_client=http)
        completion = await provider.generate(MESSAGES, SamplingParams(), timeout=5)
        await provider.aclose()
        assert not http.is_closed  # the caller's client is the caller's to close
    assert (completion.text, completion.model, completion.finish_reason) == ("I pick D", "claude-served", "max_tokens")
    assert (completion.input_tokens, completion.output_tokens) == (7, 3)


async def test_openai_tolerates_a_compatible_server_without_usage_or_content() -> None:
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        choice = {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "length"}
        return httpx.Response(
            200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "", "choices": [choice]}
        )

    # The OpenAI SDK also takes a legacy httpx client, which respx can intercept.
    with respx.mock(assert_all_called=True) as router:
        router.post("http://local.test/v1/chat/completions").mock(side_effect=reply)
        async with httpx.AsyncClient() as http:
            provider = OpenAIProvider("llama", api_key="none", base_url="http://local.test/v1/", http_client=http)
            completion = await provider.generate(MESSAGES, SamplingParams(), timeout=5)
            await provider.aclose()
            assert not http.is_closed

    assert completion.text == "" and completion.finish_reason == "length"
    assert completion.input_tokens is None and completion.output_tokens is None
    assert completion.model == "llama"  # the server named none
    assert seen[0].headers["authorization"] == "Bearer none"
    assert provider.endpoint.base_url == "http://local.test/v1"


async def test_openai_uses_max_completion_tokens_on_openais_own_api() -> None:
    bodies: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        choice = {"index": 0, "message": {"role": "assistant", "content": "C"}, "finish_reason": "stop"}
        return httpx.Response(
            200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
        )

    with respx.mock(assert_all_called=True) as router:  # intercepted: nothing leaves the machine
        router.post("https://api.openai.com/v1/chat/completions").mock(side_effect=reply)
        async with httpx.AsyncClient() as http:
            provider = OpenAIProvider("gpt-test", api_key=KEY, http_client=http)
            await provider.generate(MESSAGES, SamplingParams(max_tokens=9), timeout=5)
    assert b'"max_completion_tokens":9' in bodies[0].replace(b" ", b"") and b'"max_tokens"' not in bodies[0]


# ---- retry classification --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "fault", "retry", "failure"),
    [
        (429, Fault.RATE_LIMITED, True, FailureKind.RETRYABLE),
        (500, Fault.TRANSIENT, True, FailureKind.RETRYABLE),
        (503, Fault.TRANSIENT, True, FailureKind.RETRYABLE),
        (529, Fault.TRANSIENT, True, FailureKind.RETRYABLE),
        (408, Fault.TRANSIENT, True, FailureKind.RETRYABLE),
        (409, Fault.TRANSIENT, True, FailureKind.RETRYABLE),
        (400, Fault.REJECTED, False, FailureKind.PERMANENT),
        (401, Fault.AUTHENTICATION, False, FailureKind.AUTHENTICATION),
        (403, Fault.AUTHENTICATION, False, FailureKind.AUTHENTICATION),
    ],
)
async def test_should_retry_classifies_http_statuses_after_exactly_one_request(
    provider: Any, llm_server: FakeLLMServer, status: int, fault: Fault, retry: bool, failure: FailureKind
) -> None:
    llm_server.configure(retry_after_s=2.5)
    llm_server.fail_next(provider.name, [status])

    with pytest.raises(openai.APIStatusError if provider.name == "openai" else anthropic.APIStatusError) as caught:
        await provider.generate(MESSAGES, PARAMS, timeout=5)
    decision = provider.should_retry(caught.value)

    assert llm_server.count() == 1  # SDK retries are off: the harness owns every attempt
    assert decision.fault is fault and decision.retry is retry and decision.fault.failure is failure
    assert decision.reason.startswith(f"HTTP {status}: ")
    assert decision.rate_limited is (status == 429)
    assert decision.retry_after == (2.5 if status == 429 else None)  # read from retry-after-ms
    if status == 529 and provider.name == "anthropic":
        assert isinstance(caught.value, anthropic.OverloadedError)


async def test_should_retry_uses_the_servers_words_not_the_sdks_body_dump(
    provider: Any, llm_server: FakeLLMServer
) -> None:
    llm_server.fail_next(provider.name, [500])
    with pytest.raises(Exception) as caught:
        await provider.generate(MESSAGES, PARAMS, timeout=5)
    assert provider.should_retry(caught.value).reason == "HTTP 500: Scripted failure 500."


async def test_a_timeout_is_retryable(provider: Any, llm_server: FakeLLMServer) -> None:
    llm_server.configure(timeout_s=5)
    llm_server.fail_next(provider.name, ["timeout"])

    with pytest.raises(openai.APITimeoutError if provider.name == "openai" else anthropic.APITimeoutError) as caught:
        await provider.generate(MESSAGES, PARAMS, timeout=0.3)
    decision = provider.should_retry(caught.value)

    assert decision.fault is Fault.TIMEOUT and decision.reason == "timeout"
    assert llm_server.count() == 1
    assert provider.should_retry(TimeoutError()).fault is Fault.TIMEOUT  # a deadline imposed by the call path


@pytest.mark.parametrize("name", NAMES)
async def test_connection_refused_is_retryable(name: str) -> None:
    port = closed_port()
    base = f"http://127.0.0.1:{port}" + ("/v1" if name == "openai" else "")
    provider = provider_for(name, base)
    try:
        with pytest.raises(openai.APIConnectionError if name == "openai" else anthropic.APIConnectionError) as caught:
            await provider.generate(MESSAGES, PARAMS, timeout=2)
    finally:
        await provider.aclose()
    decision = provider.should_retry(caught.value)
    assert decision.retry and decision.reason.startswith("connection error: ")
    assert decision.fault is Fault.TRANSIENT


@pytest.mark.parametrize(
    ("fault", "raised", "detail"),
    [
        ("corrupt", json.JSONDecodeError, " (Expecting ':' delimiter: line 1 column 6 (char 5))"),
        ("html", MalformedResponse, ": '<html><body><h1>Sign in to continue</h1></body></html>'"),
    ],
)
async def test_a_200_whose_body_is_not_json_is_retryable(
    provider: Any, llm_server: FakeLLMServer, fault: str, raised: type[Exception], detail: str
) -> None:
    # A corrupt body declared as JSON: both SDKs raise json.JSONDecodeError. An HTML page: they return
    # its text instead of a response object, which the provider cannot read.
    llm_server.fail_next(provider.name, [fault])
    with pytest.raises(raised) as caught:
        await provider.generate(MESSAGES, PARAMS, timeout=5)
    decision = provider.should_retry(caught.value)
    assert llm_server.count() == 1 and llm_server.count(status=200) == 1
    assert decision.fault is Fault.TRANSIENT
    assert decision.reason == f"malformed answer: the body is not JSON{detail}"


async def test_an_sdk_that_validates_strictly_says_so_and_it_is_retryable(
    provider: Any, llm_server: FakeLLMServer
) -> None:
    sdk = openai.AsyncOpenAI if provider.name == "openai" else anthropic.AsyncAnthropic
    provider._client = sdk(  # the same client, validating answers as the SDKs can be asked to
        api_key=KEY, base_url=base_url_of(llm_server, provider.name), max_retries=0, _strict_response_validation=True
    )
    llm_server.fail_next(provider.name, ["html"])
    error = openai.APIResponseValidationError if provider.name == "openai" else anthropic.APIResponseValidationError
    with pytest.raises(error) as caught:
        await provider.generate(MESSAGES, PARAMS, timeout=5)
    decision = provider.should_retry(caught.value)
    assert decision.retry and decision.reason.startswith("malformed answer: Expected Content-Type")


def answer(text: object, usage: dict[str, object] | None = None) -> dict[str, object]:
    """One body both SDKs read as an answer (OpenAI's ``choices``, Anthropic's ``content``)."""
    body: dict[str, object] = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "content": [{"type": "text", "text": text}],
        "model": "served",
    }
    return body | ({"usage": usage} if usage else {})


WRONG_SHAPES: dict[str, tuple[object, str]] = {
    "a list": ([1, 2, 3], "the JSON is not the API's answer (list: "),
    "null": (None, "the JSON is not the API's answer (NoneType: "),
    "a JSON string": ("C", "the body is not JSON: 'C'"),  # the SDKs hand back a bare string as text
    "fields of other types": ({"choices": "C", "content": "C", "model": "m"}, "the JSON is not the API's answer ("),
    "a number for the text": (answer(5), ""),
    "unreadable token counts": (
        answer("C", {"prompt_tokens": "many", "completion_tokens": 1, "input_tokens": "many", "output_tokens": 1}),
        "the answer has fields of the wrong type: Completion(text='C', input_tokens='many'",
    ),
}


def local(name: str) -> str:
    """A base URL that a MockTransport answers: nothing leaves the process."""
    return "http://local.test/v1" if name == "openai" else "http://local.test"


def json_transport(body: object, seen: list[httpx2.Request]) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    return httpx2.MockTransport(handler)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", WRONG_SHAPES)
async def test_json_of_another_shape_is_a_malformed_answer_and_retryable(name: str, shape: str) -> None:
    body, reason = WRONG_SHAPES[shape]
    seen: list[httpx2.Request] = []
    async with httpx2.AsyncClient(transport=json_transport(body, seen)) as http:
        provider = provider_for(name, local(name), http_client=http)
        with pytest.raises(MalformedResponse) as caught:
            await provider.generate(MESSAGES, PARAMS, timeout=5)
    decision = provider.should_retry(caught.value)
    assert len(seen) == 1 and decision.retry
    assert decision.reason.startswith(f"malformed answer: {reason}")


@pytest.mark.parametrize("name", NAMES)
async def test_whole_float_token_counts_are_read_as_ints(name: str) -> None:
    body = answer("D", {"prompt_tokens": 12.0, "completion_tokens": 1.0, "input_tokens": 12.0, "output_tokens": 1.0})
    async with httpx2.AsyncClient(transport=json_transport(body, [])) as http:
        provider = provider_for(name, local(name), http_client=http)
        completion = await provider.generate(MESSAGES, PARAMS, timeout=5)
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("D", 12, 1)
    assert type(completion.input_tokens) is int and type(completion.output_tokens) is int


@pytest.mark.parametrize("name", NAMES)
async def test_anything_else_is_not_retried(name: str) -> None:
    provider = provider_for(name, "http://127.0.0.1:9/v1")
    await provider.aclose()
    decision = provider.should_retry(ValueError("bad prompt"))
    assert not decision.retry and decision.reason == "ValueError: bad prompt"


# ---- the key stays secret --------------------------------------------------------------------


def echo_key_transport(status: int) -> httpx2.MockTransport:
    """A server that quotes the key back in its error message, as careless proxies do."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.headers["authorization"] == f"Bearer {KEY}"  # both SDKs send a bearer token
        message = f"Key {KEY} is not allowed here ({KEY})"
        return httpx2.Response(status, json={"type": "error", "error": {"type": "x", "message": message}})

    return httpx2.MockTransport(handler)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("status", [400, 401, 500])
async def test_the_api_key_never_appears_in_a_reason(name: str, status: int) -> None:
    async with httpx2.AsyncClient(transport=echo_key_transport(status)) as http:
        provider = provider_for(name, "http://127.0.0.1:9" + ("/v1" if name == "openai" else ""), http_client=http)
        with pytest.raises(Exception) as caught:
            await provider.generate(MESSAGES, PARAMS, timeout=5)
    decision = provider.should_retry(caught.value)
    assert KEY not in decision.reason and "Key *** is not allowed here (***)" in decision.reason

    connection = (openai if name == "openai" else anthropic).APIConnectionError(
        request=httpx2.Request("POST", "http://x")
    )
    connection.__cause__ = OSError(f"proxy refused {KEY}")
    assert KEY not in provider.should_retry(connection).reason
    assert KEY not in provider.should_retry(RuntimeError(f"odd {KEY}")).reason
    assert KEY not in repr(provider) and KEY not in repr(provider.endpoint)


async def test_a_long_message_is_scrubbed_before_it_is_cut() -> None:
    """Truncating first could leave half a key behind."""
    message = "x" * 480 + KEY

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(400, json={"error": {"message": message, "type": "invalid_request_error"}})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        provider = OpenAIProvider("gpt-test", api_key=KEY, base_url="http://127.0.0.1:9/v1", http_client=http)
        with pytest.raises(openai.BadRequestError) as caught:
            await provider.generate(MESSAGES, PARAMS, timeout=5)
    reason = provider.should_retry(caught.value).reason
    assert KEY[:8] not in reason and reason.endswith("***")


async def test_endpoint_identifies_the_key_by_hash_only() -> None:
    a = OpenAIProvider("m", api_key=KEY)
    b = AnthropicProvider("m", api_key=KEY)
    other = OpenAIProvider("m", api_key="other")
    for provider in (a, b, other):
        await provider.aclose()
    assert a.endpoint.provider == "openai" and a.endpoint.base_url == "https://api.openai.com/v1"
    assert b.endpoint.provider == "anthropic" and b.endpoint.base_url == "https://api.anthropic.com"
    assert a.endpoint.key_id == b.endpoint.key_id and len(a.endpoint.key_id or "") == 12
    assert other.endpoint.key_id != a.endpoint.key_id


async def test_aclose_closes_an_owned_client_and_is_idempotent(llm_server: FakeLLMServer) -> None:
    provider = provider_for("anthropic", llm_server.anthropic_base_url)
    await provider.aclose()
    await provider.aclose()
    with pytest.raises(anthropic.APIConnectionError):  # closed pool: no request can go out
        await provider.generate(MESSAGES, PARAMS, timeout=5)


# ---- registry --------------------------------------------------------------------------------

ENV = {"OPENAI_API_KEY": "sk-openai-env", "ANTHROPIC_API_KEY": "sk-ant-env"}


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("openai/gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("mock/tft?unparseable=0.1", ("mock", "tft?unparseable=0.1")),
        ("openai/meta-llama/Llama-3.1-8B-Instruct", ("openai", "meta-llama/Llama-3.1-8B-Instruct")),
        (" openai/gpt-4o ", ("openai", "gpt-4o")),
    ],
)
def test_parse_model_name(name: str, parsed: tuple[str, str]) -> None:
    assert parse_model_name(name) == parsed


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("gpt-4o-mini", "did you mean 'openai/gpt-4o-mini'?"),
        ("claude-sonnet-4-5", "did you mean 'anthropic/claude-sonnet-4-5'?"),
        ("tft", "did you mean 'mock/tft'?"),
        ("google/gemini-2.0", "unknown provider 'google'"),
        ("OpenAI/gpt-4o", "lower-case: openai/gpt-4o"),
        ("openai/", "names no model"),
    ],
)
def test_a_bad_model_name_lists_the_known_forms(name: str, hint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_name(name)
    message = str(caught.value)
    assert hint in message
    assert "openai/<model>" in message and "anthropic/<model>" in message and "mock/<behaviour>" in message


def test_credentials_come_from_the_environment() -> None:
    env = {**ENV, "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "ANTHROPIC_BASE_URL": " "}
    assert resolve_credentials("openai", None, env) == ("sk-openai-env", "http://127.0.0.1:8000/v1")
    assert resolve_credentials("anthropic", None, env) == ("sk-ant-env", None)  # blank counts as unset
    assert resolve_credentials("mock", None, {}) == (None, None)


@pytest.fixture
def loopback_allowed() -> Iterator[None]:
    """``--allow-key-to 127.0.0.1``: keys named by api_key_env may go to a server on this machine."""
    allow_keys_to(["127.0.0.1"])
    yield
    allow_keys_to([])


def test_settings_override_the_environment(loopback_allowed: None) -> None:
    env = {**ENV, "OPENAI_BASE_URL": "http://env.test/v1", "VLLM_KEY": "sk-vllm "}
    settings = ProviderSettings(base_url="http://127.0.0.1:9000/v1", api_key_env="VLLM_KEY")
    assert resolve_credentials("openai", settings, env) == ("sk-vllm", "http://127.0.0.1:9000/v1")


def test_a_key_named_by_api_key_env_goes_to_another_server_only_when_allowed() -> None:
    env = {**ENV, "OPENAI_BASE_URL": "http://env.test/v1", "VLLM_KEY": "sk-vllm"}
    elsewhere = ProviderSettings(base_url="http://10.0.0.7:9000/v1", api_key_env="VLLM_KEY")
    with pytest.raises(
        ConfigError, match=r"VLLM_KEY .* would be sent to 10\.0\.0\.7:9000 .* --allow-key-to 10\.0\.0\.7:9000"
    ):
        resolve_credentials("openai", elsewhere, env)
    for allowed in (["10.0.0.7"], ["10.0.0.7:9000"], ["http://10.0.0.7:9000/v1"]):
        allow_keys_to(allowed)
        try:
            assert resolve_credentials("openai", elsewhere, env) == ("sk-vllm", "http://10.0.0.7:9000/v1")
        finally:
            allow_keys_to([])
    allow_keys_to(["10.0.0.7:9001"])  # another port is another server
    try:
        with pytest.raises(ConfigError, match="would be sent to"):
            resolve_credentials("openai", elsewhere, env)
    finally:
        allow_keys_to([])
    # Its own endpoint, the environment's base URL, and a player that sends no key there need no allowance.
    assert resolve_credentials("openai", ProviderSettings(api_key_env="VLLM_KEY"), env)[0] == "sk-vllm"
    assert resolve_credentials("openai", ProviderSettings(base_url="http://env.test/v1", api_key_env="VLLM_KEY"),
                               env)[0] == "sk-vllm"  # fmt: skip
    keyless = ProviderSettings(base_url="http://10.0.0.7:9000/v1", api_key_env="VLLM_KEY", key_only_to_configured=True)
    assert resolve_credentials("openai", keyless, env) == (None, "http://10.0.0.7:9000/v1")


def test_a_missing_key_says_what_to_set() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_credentials("openai", None, {}, model="openai/gpt-4o-mini")
    message = str(caught.value)
    assert message.startswith("openai/gpt-4o-mini needs an API key: set OPENAI_API_KEY in the environment or in .env")
    assert ".env.example" in message and "placeholder" in message and "OPENAI_BASE_URL" in message

    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        resolve_credentials("anthropic", None, {"OPENAI_API_KEY": "k"})
    with pytest.raises(ConfigError, match="set MY_KEY"):
        resolve_credentials("openai", ProviderSettings(api_key_env="MY_KEY"), ENV)


def test_a_base_url_must_be_a_url() -> None:
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL 'localhost:8000' is not a server's URL: it does not start"):
        resolve_credentials("openai", None, {**ENV, "OPENAI_BASE_URL": "localhost:8000"})
    with pytest.raises(pydantic.ValidationError):
        ProviderSettings(base_url="localhost:8000")


def test_provider_settings_reject_unknown_fields() -> None:
    with pytest.raises(pydantic.ValidationError):
        ProviderSettings(api_key="sk-inline")  # type: ignore[call-arg]
    with pytest.raises(pydantic.ValidationError):
        ProviderSettings(timeout=60)  # type: ignore[call-arg]  # the call path's RetrySettings.timeout rules


async def test_make_provider_builds_each_kind() -> None:
    made = [
        make_provider("openai/gpt-4o-mini", environ=ENV),
        make_provider("anthropic/claude-sonnet-4-5", environ=ENV),
        make_provider("openai/llama3", ProviderSettings(base_url="http://127.0.0.1:11434/v1/"), environ=ENV),
        make_provider("mock/tft", environ={}),
    ]
    try:
        oai, claude, local, mock = made
        assert isinstance(oai, OpenAIProvider) and (oai.name, oai.model) == ("openai", "gpt-4o-mini")
        assert oai.endpoint.base_url == "https://api.openai.com/v1"  # not the real env's OPENAI_BASE_URL
        assert isinstance(claude, AnthropicProvider) and claude.model == "claude-sonnet-4-5"
        assert claude.endpoint.base_url == "https://api.anthropic.com"
        assert local.endpoint.base_url == "http://127.0.0.1:11434/v1"
        assert isinstance(mock, MockProvider) and mock.model == "tft"
        for provider in made:  # the Provider protocol, attribute by attribute
            assert all(hasattr(provider, attr) for attr in Provider.__annotations__)
            assert all(callable(getattr(provider, m)) for m in ("generate", "should_retry", "aclose"))
    finally:
        for provider in made:
            await provider.aclose()


def test_each_provider_says_what_it_is_and_callers_ask_it_not_its_name() -> None:
    mock, oai, claude = PROVIDERS["mock"], PROVIDERS["openai"], PROVIDERS["anthropic"]
    assert mock.offline and not mock.needs_key and mock.default_base_url is None
    for served, url in ((oai, "https://api.openai.com/v1"), (claude, "https://api.anthropic.com")):
        assert not served.offline and served.needs_key and served.default_base_url == url
    assert (oai.key_env, oai.base_url_env) == ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    assert (claude.key_env, claude.base_url_env) == ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    assert is_offline("mock/tft") and is_offline(" mock/grim?p=0.1")
    assert not any(is_offline(name) for name in ("openai/gpt-4o-mini", "anthropic/claude", "mock", "tft", ""))
    assert (MockProvider.info, OpenAIProvider.info, AnthropicProvider.info) == (mock, oai, claude)


def test_the_sdk_providers_share_retries_closing_and_scrubbing() -> None:
    for cls in (OpenAIProvider, AnthropicProvider):
        assert issubclass(cls, SdkProvider)
        for shared in ("should_retry", "aclose", "_scrub", "__repr__", "create"):
            assert shared not in vars(cls), f"{cls.__name__} redefines {shared}"
    assert OpenAIProvider.errors.status is openai.APIStatusError
    assert AnthropicProvider.errors.status is anthropic.APIStatusError


def test_a_provider_whose_package_is_missing_says_what_to_install() -> None:
    for info, requirement in ((OPENAI, "openai>=3"), (ANTHROPIC, "anthropic>=2")):
        missing = replace(info, provider_class="harness.providers.not_installed:Provider")
        with pytest.raises(ConfigError) as caught:
            missing.factory(f"{info.name}/some-model")
        assert str(caught.value).startswith(f"{info.name}/some-model needs the {info.sdk!r} package ({requirement})")
        assert str(caught.value).endswith(f"install it with pip install '{requirement}'")


def test_make_provider_reports_a_missing_key_before_any_request() -> None:
    with pytest.raises(ConfigError, match="openai/gpt-4o-mini needs an API key"):
        make_provider("openai/gpt-4o-mini", environ={})
    with pytest.raises(ConfigError, match="unknown mock behaviour"):
        make_provider("mock/saint", environ={})


async def test_make_provider_talks_to_the_fake_server_via_the_environment(llm_server: FakeLLMServer) -> None:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": llm_server.openai_base_url}
    provider = make_provider("openai/gpt-test", environ=env)
    try:
        completion = await provider.generate(MESSAGES, PARAMS, timeout=5)
    finally:
        await provider.aclose()
    assert completion.text == DEFAULT_REPLY and llm_server.count(provider="openai", status=200) == 1


def test_check_credentials_reports_every_problem_at_once() -> None:
    names = [
        "openai/gpt-4o-mini",
        "anthropic/claude-sonnet-4-5",
        "mock/tft",
        "gpt-4o",
        "mock/saint",
        "openai/gpt-4o-mini",  # the same model twice is one problem
    ]
    with pytest.raises(ConfigError) as caught:
        check_credentials(names, environ={})
    problems = caught.value.problems
    assert len(problems) == 4
    assert problems[0].startswith("openai/gpt-4o-mini needs an API key")
    assert problems[1].startswith("anthropic/claude-sonnet-4-5 needs an API key")
    assert "did you mean 'openai/gpt-4o'" in problems[2]
    assert "unknown mock behaviour" in problems[3]
    assert str(caught.value).startswith("4 models cannot be used as configured")


def test_check_credentials_passes_when_all_is_set_and_never_prints_a_key() -> None:
    check_credentials(["openai/gpt-4o-mini", "anthropic/claude-haiku-4-5", "mock/random?p=0.3"], environ=ENV)
    with pytest.raises(ConfigError) as caught:
        check_credentials(["openai/a", "anthropic/b"], environ={"OPENAI_API_KEY": KEY})
    assert KEY not in str(caught.value) and str(caught.value).startswith("one model cannot")


def test_settings_can_be_given_per_model_or_per_provider(loopback_allowed: None) -> None:
    local = ProviderSettings(base_url="http://127.0.0.1:8000/v1", api_key_env="LOCAL_KEY")
    per_provider = ProviderSettings(api_key_env="TEAM_KEY")
    table = {"openai/llama": local, "openai": per_provider}
    assert settings_for("openai/llama", table) is local
    assert settings_for("openai/gpt-4o", table) is per_provider
    assert settings_for("anthropic/claude", table) is None
    assert settings_for("openai/x", local) is local
    check_credentials(["openai/llama", "openai/gpt-4o"], table, environ={"LOCAL_KEY": "x", "TEAM_KEY": "y"})
    with pytest.raises(ConfigError, match="set TEAM_KEY"):
        check_credentials(["openai/llama", "openai/gpt-4o"], table, environ={"LOCAL_KEY": "x"})


@pytest.mark.parametrize("headers", [{"retry-after": "soon"}, {"retry-after": "inf"}, {"retry-after-ms": "nan"},
                                     {"retry-after": "1e400"}])  # fmt: skip
def test_unreadable_or_infinite_retry_after_is_ignored(headers: dict[str, str]) -> None:
    from harness.providers.base import retry_after_seconds

    assert retry_after_seconds(headers) is None


# ---- where a key may go (a base URL typed into the dashboard) ---------------------------------------

LOCAL = {**ENV, "OPENAI_BASE_URL": "http://gpu-box.lan:8000/v1"}


@pytest.mark.parametrize(
    ("provider", "base_url", "sent"),
    [
        ("openai", None, True),  # the default endpoint, or the configured one
        ("openai", "https://api.openai.com/v1", True),
        ("openai", "https://API.OpenAI.com./v2/other/path", True),  # host case, trailing dot and path do not matter
        ("openai", "https://api.openai.com:443/v1", True),  # the default port, spelled out
        ("openai", "http://api.openai.com/v1", False),  # in clear text: another origin
        ("openai", "https://api.openai.com:8443/v1", False),
        ("openai", "https://api.openai.com.evil.example/v1", False),
        ("openai", "https://evil.example/v1?to=https://api.openai.com", False),
        ("openai", "http://gpu-box.lan:8000/v1", True),  # OPENAI_BASE_URL's origin
        ("openai", "http://gpu-box.lan:8000/other", True),
        ("openai", "http://gpu-box.lan:8001/v1", False),
        ("openai", "https://gpu-box.lan:8000/v1", False),
        ("openai", "http://127.0.0.1:8000/v1", False),  # the same machine perhaps, but not the name configured
        ("openai", "https://api.anthropic.com", False),  # the other provider's endpoint
        ("anthropic", "https://api.anthropic.com", True),
        ("anthropic", "http://gpu-box.lan:8000/v1", False),  # OPENAI_BASE_URL is not Anthropic's
        ("openai", "http://[::1]:8000/v1", False),
        ("openai", "not a url", False),
    ],
)
def test_a_typed_base_url_gets_the_key_only_if_the_user_configured_its_origin(
    provider: str, base_url: str | None, sent: bool
) -> None:
    assert sends_key(provider, base_url, LOCAL) is sent


def test_key_origins_name_what_configured_them() -> None:
    assert key_origins("openai", LOCAL) == {
        ("https", "api.openai.com", 443): "openai's own endpoint",
        ("http", "gpu-box.lan", 8000): "OPENAI_BASE_URL",
    }
    assert key_origins("anthropic", LOCAL) == {("https", "api.anthropic.com", 443): "anthropic's own endpoint"}


def test_resolving_a_typed_base_url_that_is_not_configured_gives_no_key_and_needs_none() -> None:
    typed = ProviderSettings(base_url="http://evil.example:8000/v1", key_only_to_configured=True)
    assert resolve_credentials("openai", typed, LOCAL) == (None, "http://evil.example:8000/v1")
    assert resolve_credentials("openai", typed, {}) == (None, "http://evil.example:8000/v1")  # no key set: fine
    check_credentials(["openai/llama"], typed, environ={})
    configured = ProviderSettings(base_url="http://gpu-box.lan:8000/v1", key_only_to_configured=True)
    assert resolve_credentials("openai", configured, LOCAL) == ("sk-openai-env", "http://gpu-box.lan:8000/v1")
    with pytest.raises(ConfigError, match="needs an API key: set OPENAI_API_KEY"):
        resolve_credentials("openai", configured, {"OPENAI_BASE_URL": "http://gpu-box.lan:8000/v1"})
    # Without the flag (a base URL from the user's own config file or --base-url): the key goes with it.
    assert resolve_credentials("openai", ProviderSettings(base_url="http://evil.example/v1"), ENV)[0] == "sk-openai-env"


async def test_a_keyless_provider_sends_no_credential_and_endpoints_tell_it_apart(llm_server: FakeLLMServer) -> None:
    llm_server.configure(require_key=False)
    provider = make_provider("openai/gpt-test", ProviderSettings(base_url=llm_server.openai_base_url,
                                                                 key_only_to_configured=True), environ=ENV)  # fmt: skip
    try:
        completion = await provider.generate(MESSAGES, PARAMS, timeout=5)
    finally:
        await provider.aclose()
    assert completion.text == DEFAULT_REPLY
    assert [r.has_auth for r in llm_server.requests] == [False]
    assert provider.endpoint.key_id is None


def test_a_damaged_key_is_refused_by_the_registry_before_a_provider_exists() -> None:
    with pytest.raises(ConfigError, match="the key in OPENAI_API_KEY has a line break at position 4 of 8"):
        make_provider("openai/gpt-4o-mini", environ={"OPENAI_API_KEY": "sk-\nabcd"})
    with pytest.raises(ConfigError) as caught:
        check_credentials(
            ["openai/a", "anthropic/b"], environ={"OPENAI_API_KEY": "sk-a\tb", "ANTHROPIC_API_KEY": "k\x00"}
        )
    assert [p.split(" has ")[1].split(",")[0] for p in caught.value.problems] == [
        "a tab at position 5 of 6", "an invisible control character (U+0000) at position 2 of 2"
    ]  # fmt: skip


def _choice(content: str | None, finish_reason: str | None, refusal: str | None = None) -> list[Any]:
    from types import SimpleNamespace

    message = SimpleNamespace(content=content, refusal=refusal)
    return [SimpleNamespace(message=message, finish_reason=finish_reason)]


@pytest.mark.parametrize(
    ("choices", "read"),
    [
        (_choice("C", "stop"), ("C", "stop", None)),
        (_choice("", "stop"), ("", "stop", None)),  # the model's own empty answer
        (_choice(None, "length"), ("", "length", None)),  # its budget went to reasoning: asking again pays the same
        (_choice(None, "content_filter"), ("", "content_filter", "content_filter")),
        (_choice("I'll coop", "content_filter"), ("I'll coop", "content_filter", "content_filter")),  # cut short
        (_choice(None, "stop", refusal="I can't help"), ("I can't help", "stop", "refusal")),  # structured outputs
    ],
)
def test_an_openai_choice_is_an_answer_an_empty_answer_or_a_refusal(choices: list[Any], read: tuple) -> None:
    from harness.providers.openai import read_choice

    assert read_choice(choices) == read


@pytest.mark.parametrize("choices", [None, [], _choice(None, "stop"), _choice(None, None)])
def test_an_openai_reply_without_its_answer_is_malformed_not_empty(choices: list[Any] | None) -> None:
    from harness.providers.openai import read_choice

    with pytest.raises(MalformedResponse, match=r"no (choices|content)"):
        read_choice(choices)
