"""The providers' batch adapters (:mod:`harness.providers.openai_batch`, :mod:`harness.providers.anthropic_batch`)
through the official SDKs against the loopback server: an item asks what ``generate`` would ask and its answer
reads as ``generate``'s does; the states are told apart; failed and expired items read as faults a later batch
retries, a refusal of the request itself as one it does not; and a batch whose id was lost is found again."""

from __future__ import annotations

import time

import pytest

from harness.providers.anthropic import AnthropicProvider
from harness.providers.base import Fault, Message, SamplingParams
from harness.providers.batch import BatchState, CannotTell
from harness.providers.openai import OpenAIProvider
from harness.providers.tiers import ServiceTier
from tests.support.llm_server import FakeLLMServer

KEY = "sk-test-0123456789abcdef"
PARAMS = SamplingParams(max_tokens=16)


def prompts(n: int) -> list[list[Message]]:
    return [[{"role": "user", "content": f"Round {i}: C or D?"}] for i in range(n)]


def make(server: FakeLLMServer, provider: str) -> OpenAIProvider | AnthropicProvider:
    if provider == "openai":
        return OpenAIProvider(
            "gpt-4o-mini", api_key=KEY, base_url=server.openai_base_url, service_tier=ServiceTier.BATCH
        )
    return AnthropicProvider(
        "claude-haiku-4-5", api_key=KEY, base_url=server.anthropic_base_url, service_tier=ServiceTier.BATCH
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_batch_answers_as_generate_would_and_its_failed_items_are_faults(
    llm_server: FakeLLMServer, provider: str
) -> None:
    llm_server.configure(batch_polls=1)
    llm_server.fail_batch_items(provider, {1: "error", 2: "expired"})
    model = make(llm_server, provider)
    try:
        api = model.batch_api()
        items = [api.item(f"id{i}", m, PARAMS, None) for i, m in enumerate(prompts(4))]
        created_after = time.time()
        batch_id = await api.submit(items, "submission-1")
        assert (await api.status(batch_id)).state is BatchState.PENDING
        status = await api.status(batch_id)
        assert (status.state, status.done, status.total) == (BatchState.ENDED, 4, 4)
        raw = await api.results(batch_id)
        assert sorted(raw) == ["id0", "id1", "id2", "id3"]
        outcomes = {custom_id: api.read(text, PARAMS) for custom_id, text in raw.items()}
        standard = type(model)(model.model, api_key=KEY, base_url=model.url, service_tier=ServiceTier.STANDARD)
        try:
            direct = await standard.generate(prompts(4)[0], PARAMS, timeout=5)
        finally:
            await standard.aclose()
        answered = outcomes["id0"].completion
        assert answered is not None and answered.text == direct.text
        assert (answered.input_tokens, answered.output_tokens) == (direct.input_tokens, direct.output_tokens)
        assert outcomes["id3"].completion is not None
        for failed in ("id1", "id2"):
            failure = outcomes[failed].failure
            assert outcomes[failed].completion is None and failure is not None
            assert failure.fault is Fault.TRANSIENT  # a later batch asks it again
        assert await api.find("submission-1", created_after, 4, frozenset()) == batch_id
        assert await api.find("submission-0", created_after + 3600, 7, frozenset()) is None
    finally:
        await model.aclose()


async def test_a_request_the_endpoint_refuses_is_a_fault_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.configure(batch_polls=0)
    model = make(llm_server, "anthropic")
    try:
        api = model.batch_api()
        item = api.item("bad", prompts(1)[0], PARAMS, None)
        item["params"]["messages"] = []  # the endpoint answers such a request 400
        batch_id = await api.submit([item], "s")
        (text,) = (await api.results(batch_id)).values()
        failure = api.read(text, PARAMS).failure
        assert failure is not None and failure.fault is Fault.REJECTED and "invalid_request_error" in failure.reason
    finally:
        await model.aclose()


async def test_an_openai_batch_refused_as_a_whole_says_why(llm_server: FakeLLMServer) -> None:
    llm_server.configure(batch_polls=1)
    llm_server.next_batch_outcome("openai", "failed")
    model = make(llm_server, "openai")
    try:
        api = model.batch_api()
        batch_id = await api.submit([api.item("a", prompts(1)[0], PARAMS, None)], "s")
        status = await api.status(batch_id)
        assert status.state is BatchState.FAILED and "Enqueued token limit" in status.detail
    finally:
        await model.aclose()


async def test_anthropic_cannot_tell_two_lost_batches_of_one_size_apart_unless_one_is_known(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.configure(batch_polls=1)
    model = make(llm_server, "anthropic")
    try:
        api = model.batch_api()
        created_after = time.time()
        first = await api.submit([api.item("x0", prompts(1)[0], PARAMS, None)], "s1")
        second = await api.submit([api.item("y0", prompts(1)[0], PARAMS, None)], "s2")
        with pytest.raises(CannotTell, match="2 batches"):
            await api.find("s2", created_after, 1, frozenset())
        assert await api.find("s2", created_after, 1, frozenset({first})) == second
        assert await api.find("s3", created_after, 1, frozenset({first, second})) is None
    finally:
        await model.aclose()
