"""Before a run, one request to each served endpoint asked for structured replies: does it follow the schema?

``answer_format: structured`` asks the provider to constrain its reply to a JSON schema. OpenAI's and Anthropic's
own endpoints do; a server that speaks their API (llama.cpp, vLLM, Ollama, a proxy) may refuse the schema with a
400, or accept it and ignore it, answering free text. Found at the first move, the first fails every game and the
second makes every move unreadable, after the run has started and been recorded. So before any game, each
(endpoint, model) of a structured player that is not the provider's own endpoint gets one short request with the
player's schema, and a refusal, a reply that does not fit the schema, or a server that cannot be reached stops the
run with one paragraph (:class:`~harness.errors.ConfigError`). The probe is not a move: it is neither cached nor
recorded, and ``pdbench run --dry-run`` lists it without sending it (:func:`structured_probes`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass

from harness.calls.retry import AttemptFailed, RetryPolicy, RetrySettings, verdict
from harness.config import ExperimentConfig, ModelAgentConfig
from harness.config.engine_options import EngineOptions
from harness.errors import ConfigError
from harness.providers.base import Completion, Fault, Message, SamplingParams
from harness.providers.registry import PROVIDERS, ProviderSettings, make_provider, origin, parse_model_name
from harness.providers.sdk import StructuredRequestFailed
from harness.providers.structured import ReplySchema, ReplyViolation

PROBE_ATTEMPTS = 3
"""Tries of the probe on a fault that may pass (a 429, a 5xx, a timeout); a refusal is final at once."""
PROBE_MAX_SECONDS = 30.0
"""The most the probe of one endpoint may take, its waits included."""
PROBE_PROMPT = (
    "This is a check of the reply format before a game, not a move. Answer with the JSON object asked for, "
    "choosing {first}."
)
"""The probe's one user message (``{first}``: the schema's first label). Tests recognise the probe by it."""


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe: a structured player's model at a served endpoint, with the schema its moves ask for."""

    agent: ModelAgentConfig
    base_url: str
    schema: ReplySchema

    @property
    def where(self) -> str:
        return f"{self.agent.model} at {self.base_url}"


def structured_probes(config: ExperimentConfig, environ: Mapping[str, str] = os.environ) -> list[Probe]:
    """The probes a run of ``config`` sends before it plays: one per (endpoint, model) of a player with
    ``answer_format: structured`` whose base URL (its own, else the environment's) is not its provider's own
    endpoint. Reads no key, sends nothing."""
    out: dict[tuple[str, str], Probe] = {}
    for cond in config.experiment.conditions:
        for agent in (cond.agent_a, cond.agent_b):
            schema = agent.reply_schema() if isinstance(agent, ModelAgentConfig) else None
            if schema is None or not isinstance(agent, ModelAgentConfig):
                continue
            info = PROVIDERS[parse_model_name(agent.model)[0]]
            if info.offline or info.base_url_env is None:
                continue
            base_url = agent.base_url or (environ.get(info.base_url_env) or "").strip() or None
            if base_url is None or origin(base_url) == origin(info.default_base_url or ""):
                continue  # the provider's own endpoint: known to constrain its output
            out.setdefault((base_url.rstrip("/"), agent.model.strip()), Probe(agent, base_url.rstrip("/"), schema))
    return list(out.values())


def check_structured_replies(config: ExperimentConfig, engine: EngineOptions | None = None) -> None:
    """Send each probe of :func:`structured_probes` (in turn) and stop the run before it starts if a server
    refuses the schema, answers outside it, or cannot be reached. With a budget of nothing (``max_cost`` 0: answers
    from the cache only) no probe is sent, since it would be a paid request."""
    engine = engine or EngineOptions()
    if engine.max_cost == 0:
        return
    for probe in structured_probes(config):
        asyncio.run(_send(probe, engine))


async def _send(probe: Probe, engine: EngineOptions) -> None:
    agent = probe.agent
    settings = ProviderSettings(
        base_url=agent.base_url,
        api_key_env=agent.api_key_env,
        key_only_to_configured=bool(agent.key_only_to_configured),
    )
    provider = make_provider(agent.model, settings, http_client=engine.http_client)
    labels = probe.schema.labels
    messages: list[Message] = [{"role": "user", "content": PROBE_PROMPT.format(first=labels[0])}]
    params = SamplingParams(
        temperature=agent.temperature, top_p=agent.top_p, max_tokens=agent.max_tokens, reply=probe.schema
    )
    retry = probe_retry(engine.retry)

    async def attempt() -> Completion:
        try:
            return await provider.generate(messages, params, retry.timeout)
        except Exception as exc:
            # The server's own words, not the hint a game's record gets (the paragraph says what to do).
            decision = provider.should_retry(exc.cause if isinstance(exc, StructuredRequestFailed) else exc)
            may_retry, reason = verdict(decision, retry)
            raise AttemptFailed(decision, reason, may_retry) from None

    try:
        completion = await RetryPolicy(retry, asyncio.sleep, _no_count).run(attempt)
        read = probe.schema.read(completion.text)
        if isinstance(read, ReplyViolation):
            raise ConfigError(_ignored(probe, completion.text, read, completion.finish_reason))
    except AttemptFailed as failed:
        raise ConfigError(_failed(probe, failed.decision.fault, failed.reason)) from None
    finally:
        await provider.aclose()


def probe_retry(run: RetrySettings) -> RetrySettings:
    """The run's retry settings, bounded for a check before the run: at most :data:`PROBE_ATTEMPTS` tries and
    :data:`PROBE_MAX_SECONDS` in all, so that a server that is down is reported in seconds, not after a game's
    whole budget. A Retry-After beyond that is not sat out (the request gives up at once, as a game's does)."""
    return run.model_copy(
        update={
            "max_attempts": min(run.max_attempts, PROBE_ATTEMPTS),
            "max_seconds": min(run.max_seconds, PROBE_MAX_SECONDS),
            "backoff_max": min(run.backoff_max, PROBE_MAX_SECONDS / PROBE_ATTEMPTS),
        }
    )


def _no_count() -> None:
    """The probe is not a call of the run: its retries are counted nowhere."""


def _failed(probe: Probe, fault: Fault | None, reason: str) -> str:
    """The paragraph for a probe the server refused (a 4xx) or that could not be sent."""
    fix = "run it with answer_format: json instead, or use a server that takes a JSON schema"
    reason = reason.rstrip(".")
    if fault in (Fault.REJECTED, Fault.AUTHENTICATION):
        return (
            f"{probe.where} refused a request for the structured reply (answer_format: structured), in a check of "
            f"one request before any game: {reason}. Its games would fail at their first move: {fix}. "
            "Nothing was played."
        )
    return (
        f"{probe.where} could not be asked whether it follows the structured reply's JSON schema (answer_format: "
        f"structured), in a check of one request before any game (up to {PROBE_ATTEMPTS} tries in "
        f"{PROBE_MAX_SECONDS:g} s): {reason}. "
        "Check that the server is up at that base URL, then start the run again. Nothing was played."
    )


def _ignored(probe: Probe, text: str, violation: ReplyViolation, finish_reason: str | None) -> str:
    """The paragraph for a server that took the schema but answered outside it."""
    labels = " or ".join(f'"{label}"' for label in probe.schema.labels)
    cut = (
        f" The reply was cut at max_tokens {probe.agent.max_tokens}; a larger max_tokens may let it finish."
        if finish_reason == "length"
        else ""
    )
    return (
        f"{probe.where} accepted the structured reply's JSON schema (answer_format: structured) but did not follow "
        f'it, in a check of one request before any game: asked for {{"action": {labels}}}, it answered '
        f"{text[:160]!r} ({violation.reason}). Every move of the run would be unreadable: run it with answer_format: "
        f"json instead, or use a server that constrains its output to a JSON schema (llama.cpp's server, vLLM, "
        f"Ollama).{cut} Nothing was played."
    )
