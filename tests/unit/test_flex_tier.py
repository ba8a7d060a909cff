"""OpenAI's flex tier (``service_tier: flex``): what is sent through the official SDK to the loopback server, the
tier kept out of the response-cache key, the longer timeout, "resource unavailable" 429s retried without
touching the endpoint's learned rate (a plain 429 chain still lowers it), each call's tier recorded and priced
at its tier's prices, and bad input refused (or warned of) before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.limits.adaptation import CHAIN_MIN
from harness.calls.path import CallPath, CallTag, RetrySettings
from harness.calls.pricing import DEFAULT_PRICES, Price, PriceTable
from harness.calls.retry import FLEX_TIMEOUT_S
from harness.config import parse_experiment
from harness.config.presets.evaluation import eval_config
from harness.config.presets.suites import SUITES
from harness.errors import ConfigError
from harness.providers.base import Completion, Fault, Message, Sample, SamplingParams, decide_status
from harness.providers.openai import OpenAIProvider
from harness.providers.registry import make_provider
from harness.providers.tiers import ServiceTier
from harness.states import CallOutcome
from tests.support.llm_server import FakeLLMServer

KEY = "sk-test-flex-tier"
MESSAGES: list[Message] = [{"role": "user", "content": "Cooperate or defect? Answer C or D."}]
TAG = CallTag(game_id=1, round=1, player="a", sample=Sample("c", 0, "a"))
FAST = RetrySettings(backoff_initial=0, backoff_max=0)


def openai(server: FakeLLMServer, tier: ServiceTier) -> OpenAIProvider:
    return OpenAIProvider("o4-mini", api_key=KEY, base_url=server.openai_base_url, service_tier=tier)


def sent_tiers(server: FakeLLMServer) -> list[object]:
    return [r.body.get("service_tier", "(none)") for r in server.requests]


# ---- the request ---------------------------------------------------------------------------------------


async def test_flex_sends_service_tier_flex_and_standard_sends_nothing(llm_server: FakeLLMServer) -> None:
    for tier in (ServiceTier.FLEX, ServiceTier.STANDARD):
        provider = openai(llm_server, tier)
        try:
            await provider.generate(MESSAGES, SamplingParams(max_tokens=8), timeout=5)
        finally:
            await provider.aclose()
    assert sent_tiers(llm_server) == ["flex", "(none)"]


async def test_the_tier_is_not_part_of_the_response_cache_key(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    """The same draw asked at flex after standard is a cache hit: free, and recorded with no tier."""
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        path = CallPath(cache=cache, prices=PriceTable.load(DEFAULT_PRICES), retry=FAST)
        limiter = EndpointLimiter(LimitSettings())
        standard, flex = openai(llm_server, ServiceTier.STANDARD), openai(llm_server, ServiceTier.FLEX)
        try:
            paid = await path.request(standard, limiter, MESSAGES, SamplingParams(), TAG, 1)
            hit = await path.request(flex, limiter, MESSAGES, SamplingParams(), TAG, 1)
        finally:
            await standard.aclose()
            await flex.aclose()
    assert len(llm_server.requests) == 1 and hit.cached and hit.text == paid.text
    assert paid.records[0].service_tier == "standard"
    assert (hit.records[0].service_tier, hit.records[0].cost_usd) == (None, 0.0)


def test_flex_waits_900_s_an_attempt_unless_the_user_set_a_timeout() -> None:
    default = RetrySettings()
    flex = default.for_tier(ServiceTier.FLEX)
    assert (flex.timeout, flex.max_seconds) == (FLEX_TIMEOUT_S, 2 * FLEX_TIMEOUT_S) == (900.0, 1800.0)
    assert default.for_tier(ServiceTier.STANDARD) is default
    given = RetrySettings.model_validate({"timeout": 30.0, "max_seconds": 100.0})  # as PDBENCH_TIMEOUT sets it
    assert given.for_tier(ServiceTier.FLEX) == given
    only_timeout = RetrySettings.model_validate({"timeout": 1200.0}).for_tier(ServiceTier.FLEX)
    assert (only_timeout.timeout, only_timeout.max_seconds) == (1200.0, 2400.0)


class TimedEcho:
    """Answers at once and keeps the timeout it was given."""

    name = "echo"
    model = "m"
    offline = False

    def __init__(self, tier: ServiceTier) -> None:
        from harness.providers.base import Endpoint

        self.service_tier = tier
        self.endpoint = Endpoint(provider="echo", base_url="http://localhost:1/v1", key_id=None)
        self.timeouts: list[float] = []

    async def generate(self, messages: Any, params: Any, timeout: float, facts: Any = None, *, cache: Any = None):
        self.timeouts.append(timeout)
        return Completion(text="C", input_tokens=1000, output_tokens=100, model=self.model)

    def should_retry(self, error: BaseException) -> Any:
        raise AssertionError("never fails")

    async def aclose(self) -> None:
        return None


async def test_the_call_path_gives_a_flex_request_the_flex_timeout_and_prices_it_at_flex_prices() -> None:
    # echo/*: 2 and 8 $/Mtok standard, 1 and 4 at flex: 1000 * 1 + 100 * 4 = 1400 micro-dollars at flex,
    # 1000 * 2 + 100 * 8 = 2800 at standard.
    prices = PriceTable([("echo/*", Price(input=2, output=8, flex=Price(input=1, output=4)))])
    path = CallPath(cache=None, prices=prices)
    flex, standard = TimedEcho(ServiceTier.FLEX), TimedEcho(ServiceTier.STANDARD)
    limiter = EndpointLimiter(LimitSettings())
    flexed = await path.request(flex, limiter, MESSAGES, SamplingParams(), TAG, 1)  # type: ignore[arg-type]
    other = CallTag(game_id=1, round=1, player="b", sample=Sample("c", 0, "b"))  # another draw: not known yet
    plain = await path.request(standard, limiter, MESSAGES, SamplingParams(), other, 1)  # type: ignore[arg-type]
    assert (flex.timeouts, standard.timeouts) == ([900.0], [60.0])
    assert flexed.records[0].service_tier == "flex" and flexed.records[0].cost_usd == pytest.approx(1400e-6)
    assert plain.records[0].service_tier == "standard" and plain.records[0].cost_usd == pytest.approx(2800e-6)
    assert path.stats.cost_usd == pytest.approx(4200e-6)


async def test_a_mock_call_records_no_tier() -> None:
    path = CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES))
    result = await path.request(make_provider("mock/tft"), EndpointLimiter(LimitSettings()), MESSAGES,
                                SamplingParams(), TAG, 1)  # fmt: skip
    assert result.records[0].service_tier is None


# ---- "resource unavailable" 429s ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message", "no_capacity"),
    [
        ({"message": "Try later", "type": "x", "code": "resource_unavailable"}, "Try later", True),
        ({"error": {"message": "x", "code": "RESOURCE_UNAVAILABLE"}}, "x", True),
        ({"message": "Resource Unavailable: flex is busy", "code": None}, "Resource Unavailable: flex is busy", True),
        (None, "resource unavailable", True),
        ({"message": "Rate limit reached", "code": "rate_limit_exceeded"}, "Rate limit reached", False),
    ],
)
def test_a_429_says_resource_unavailable_by_its_code_or_message_in_any_case(
    body: object, message: str, no_capacity: bool
) -> None:
    decision = decide_status(429, {}, body, message)
    assert decision.fault is Fault.RATE_LIMITED and decision.retry and decision.no_capacity is no_capacity


def test_only_a_429_can_say_it() -> None:
    assert not decide_status(503, {}, {"code": "resource_unavailable"}, "resource unavailable").no_capacity


async def _after_three_successes_then_one_request(server: FakeLLMServer, tier: ServiceTier) -> tuple[Any, Any]:
    """Three answered requests (a rate to learn from), then one met by the queued failures; the limiter after."""
    path = CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES), retry=FAST)
    limiter = EndpointLimiter(LimitSettings(concurrency=4))
    provider = openai(server, tier)
    try:
        for replicate in range(3):
            tag = CallTag(game_id=1, round=1, player="a", sample=Sample("c", replicate, "a"))
            await path.request(provider, limiter, MESSAGES, SamplingParams(), tag, 1)
        failures = ["unavailable"] * CHAIN_MIN if tier is ServiceTier.FLEX else [429] * CHAIN_MIN
        server.fail_next("openai", failures)
        last = CallTag(game_id=1, round=1, player="a", sample=Sample("c", 3, "a"))
        result = await path.request(provider, limiter, MESSAGES, SamplingParams(), last, 1)
    finally:
        await provider.aclose()
    return result, limiter.snapshot()


async def test_resource_unavailable_429s_are_retried_and_leave_the_learned_rate_alone(
    llm_server: FakeLLMServer,
) -> None:
    result, limiter = await _after_three_successes_then_one_request(llm_server, ServiceTier.FLEX)
    outcomes = [r.outcome for r in result.records]
    assert outcomes == [CallOutcome.RATE_LIMITED] * CHAIN_MIN + [CallOutcome.OK]
    assert all(r.service_tier == "flex" for r in result.records)
    assert "Resource unavailable" in (result.records[0].error or "")
    # A chain of CHAIN_MIN plain 429s reaches the limit (below); these say nothing of the rate.
    assert (limiter.learned_rpm, limiter.limit_reached_count, limiter.rate_limited_count) == (None, 0, 0)
    assert limiter.paused_until is None


async def test_a_chain_of_plain_429s_still_lowers_the_learned_rate(llm_server: FakeLLMServer) -> None:
    llm_server.configure(retry_after_s=0.01)
    result, limiter = await _after_three_successes_then_one_request(llm_server, ServiceTier.STANDARD)
    assert [r.outcome for r in result.records][-1] is CallOutcome.OK
    assert limiter.limit_reached_count == 1 and limiter.learned_rpm is not None
    assert limiter.rate_limited_count == CHAIN_MIN


async def test_the_loopback_server_echoes_the_tier_and_answers_a_share_of_flex_requests_unavailable(
    llm_server: FakeLLMServer,
) -> None:
    import openai as sdk

    llm_server.configure(flex_unavailable_rate=1.0)
    async with sdk.AsyncOpenAI(base_url=llm_server.openai_base_url, api_key=KEY, max_retries=0) as client:
        standard = await client.chat.completions.create(model="o4-mini", messages=MESSAGES)  # type: ignore[arg-type]
        with pytest.raises(sdk.RateLimitError) as refused:
            await client.chat.completions.create(model="o4-mini", messages=MESSAGES, service_tier="flex")  # type: ignore[arg-type]
        llm_server.configure(flex_unavailable_rate=0.0)
        flex = await client.chat.completions.create(model="o4-mini", messages=MESSAGES, service_tier="flex")  # type: ignore[arg-type]
    assert (standard.service_tier, flex.service_tier) == ("default", "flex")
    assert refused.value.code == "resource_unavailable" and "retry-after" not in refused.value.response.headers
    assert openai(llm_server, ServiceTier.FLEX).should_retry(refused.value).no_capacity


# ---- bad input ---------------------------------------------------------------------------------------------


def _config(agent: dict[str, Any]) -> Any:
    return parse_experiment(
        {"experiment": {"conditions": [{"name": "c", "agent_a": agent, "agent_b": {"policy": "TFT"}}]}}
    )


@pytest.mark.parametrize("model", ["anthropic/claude-haiku-4-5", "mock/tft"])
def test_flex_on_a_provider_without_it_is_refused_in_a_sentence(model: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _config({"model": model, "service_tier": "flex"})
    assert "flex is an OpenAI tier" in str(refused.value) and model in str(refused.value)


def test_a_tier_the_provider_lacks_is_refused() -> None:
    with pytest.raises(ConfigError, match="mock has none"):
        _config({"model": "mock/tft", "service_tier": "batch"})
    with pytest.raises(ConfigError, match="--service-tier is standard"):
        eval_config("openai/o4-mini", service_tier="fast")


def test_flex_without_a_flex_price_is_a_warning_not_an_error() -> None:
    unpriced = _config({"model": "openai/gpt-4o-mini", "service_tier": "flex"})
    assert unpriced.problems() == []
    (warning,) = [w for w in unpriced.warnings() if "service_tier" in w]
    assert "openai/gpt-4o-mini" in warning and "unknown cost" in warning
    priced = _config({"model": "openai/o4-mini", "service_tier": "flex"})
    assert not [w for w in priced.warnings() if "service_tier" in w]


def test_the_tier_is_stored_only_when_it_is_not_standard() -> None:
    flex = eval_config("openai/o4-mini", service_tier="flex", opponents=["TFT"])
    standard = eval_config("openai/o4-mini", opponents=["TFT"])
    assert flex.resolved_dict()["experiment"]["conditions"][0]["agent_a"]["service_tier"] == "flex"
    assert "service_tier" not in standard.resolved_dict()["experiment"]["conditions"][0]["agent_a"]


def test_a_suite_takes_flex_and_stays_its_protocol() -> None:
    suite = next(iter(SUITES.values()))
    config = suite.config("openai/o4-mini", service_tier="flex")
    assert config.problems() == []  # the suite's deviations say nothing of how calls are bought
    agents = [c.agent_a for c in config.experiment.conditions if hasattr(c.agent_a, "service_tier")]
    assert agents and all(a.service_tier is ServiceTier.FLEX for a in agents)
