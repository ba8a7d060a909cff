"""``anthropic/<model>``: Anthropic's Messages API.

The harness speaks in chat messages with a ``system`` role; the Messages API wants the system
prompt as a separate ``system`` parameter and strictly alternating user/assistant turns, so this
module translates. What every SDK provider shares (one request per ``generate`` with the SDK's retries
off, ``should_retry``, which waits for Anthropic's own 529 "overloaded" too, and ``aclose``) is
:class:`~harness.providers.sdk.SdkProvider`.
"""

from __future__ import annotations

import json
import logging
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import anthropic

from harness.providers.base import (
    KEYLESS_PLACEHOLDER,
    CacheHints,
    Completion,
    MalformedResponse,
    Message,
    PromptFacts,
    SamplingParams,
    keyless_headers,
    shape_error,
    well_formed,
)
from harness.providers.info import ANTHROPIC
from harness.providers.sdk import SdkErrors, SdkProvider, structured_request
from harness.providers.structured import TOOL_NAME, ReplySchema
from harness.providers.tiers import CacheTtl, ServiceTier

if TYPE_CHECKING:
    import httpx2

    from harness.providers.anthropic_batch import AnthropicBatch

log = logging.getLogger(__name__)

REFUSAL = "refusal"
"""The ``stop_reason`` of an answer Anthropic's safety classifiers withheld (or cut short)."""


class AnthropicProvider(SdkProvider):
    """One Claude model at one endpoint.

    ``http_client`` must be an ``httpx2.AsyncClient`` (the SDK rejects ``httpx`` objects; tests use
    ``httpx2.MockTransport`` or the loopback fake server); see :class:`~harness.providers.sdk.SdkProvider`.

    Sampling parameters are not sent. SDK 2.x pins API version 2026-10-21, which answers 400 to
    ``temperature``, ``top_p`` or ``top_k`` at any value (the SDK no longer even accepts them), and
    the Messages API never had a ``seed``. They still key the cache, so replicates stay separate
    draws; :attr:`unsupported_params` names them, and the first request that sets one logs a
    warning, so a run that asked for ``temperature=0`` does not silently pass as deterministic.
    """

    info = ANTHROPIC
    name = ANTHROPIC.name
    errors = SdkErrors(
        status=anthropic.APIStatusError,
        timeout=anthropic.APITimeoutError,
        connection=anthropic.APIConnectionError,
        validation=anthropic.APIResponseValidationError,
    )
    unsupported_params = frozenset({"temperature", "top_p", "seed"})
    _client: anthropic.AsyncAnthropic

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, http_client=http_client, service_tier=service_tier)
        # No key (a base URL the key may not go to): no credential from the environment either. The
        # placeholder keeps the SDK from looking for one; every request leaves its header out.
        self._no_credentials = (
            {}
            if api_key
            else keyless_headers(("Authorization", "X-Api-Key"), "ANTHROPIC_CUSTOM_HEADERS", anthropic.Omit())
        )
        self._warned = False
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or KEYLESS_PLACEHOLDER, base_url=self.url, max_retries=0, http_client=http_client
        )

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: PromptFacts | None = None,
        *,
        cache: CacheHints | None = None,
    ) -> Completion:
        """One Messages request; SDK exceptions propagate for :meth:`should_retry`. ``facts`` are for
        stand-in models and are not sent; ``cache`` places the prompt-cache breakpoints (see to_messages_api)."""
        with structured_request(params.reply is not None):
            response = await self._client.messages.create(
                timeout=timeout,
                extra_headers=self._no_credentials or None,  # type: ignore[arg-type]
                **self.request_body(messages, params, cache),
            )
        return self.read_response(response, params)

    def request_body(self, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> dict[str, Any]:
        """The Messages request for ``messages``: what ``generate`` sends, and what a batch item's ``params`` hold
        (:mod:`harness.providers.anthropic_batch`), so both ask the same question."""
        system, turns = to_messages_api(messages, cache)
        body: dict[str, Any] = {"model": self.model, "max_tokens": params.max_tokens, "messages": turns}
        if system:
            body["system"] = system
        if params.reply is not None:
            body.update(forced_tool(params.reply))
        if not self._warned and (dropped := sorted(self.unsupported_params & params.as_dict().keys())):
            self._warned = True
            log.warning(
                "anthropic/%s: %s not sent (the Messages API of SDK 2.x rejects sampling parameters); "
                "the model samples with its defaults",
                self.model,
                ", ".join(dropped),
            )
        return body

    def read_response(self, response: Any, params: SamplingParams) -> Completion:
        """The answer in a message (the SDK's object). A body of another shape (the SDK does not validate it) is a
        MalformedResponse, asked again."""
        try:
            blocks = response.content
            if blocks is None:  # a damaged answer, not an empty one (an empty list is the model's own)
                raise MalformedResponse(f"the answer has no content (stop_reason {response.stop_reason!r})")
            if not isinstance(blocks, list):
                raise TypeError(f"content is a {type(blocks).__name__}, not a list of blocks")
            text = reply_text(blocks) if params.reply is not None else _text(blocks)
            usage = response.usage
            read, written = _cache_tokens(usage)
            uncached = usage.input_tokens if usage is not None else None
            completion = Completion(
                text=text,
                # Anthropic counts cache reads and writes apart from input_tokens; the harness counts all input.
                input_tokens=uncached
                if uncached is None or not (read or written)
                else uncached + (read or 0) + (written or 0),
                output_tokens=usage.output_tokens if usage is not None else None,
                cached_input_tokens=read,
                cache_write_tokens=written,
                model=response.model or self.model,
                finish_reason=response.stop_reason,
                # Withheld by the safety classifiers: an outcome of its own, not an empty answer.
                refusal=REFUSAL if response.stop_reason == REFUSAL else None,
            )
        except (AttributeError, TypeError, IndexError, KeyError) as exc:
            raise shape_error(response, exc) from exc
        return well_formed(completion)

    def batch_api(self) -> AnthropicBatch:
        """This model's batch endpoint (Message Batches), for ``service_tier: batch``."""
        from harness.providers.anthropic_batch import AnthropicBatch

        return AnthropicBatch(self, self._client, self._no_credentials)


def _cache_tokens(usage: Any) -> tuple[int | None, int | None]:
    """(tokens read from the prompt cache, tokens written to it), None each where the answer did not say."""
    if usage is None:
        return None, None
    read = getattr(usage, "cache_read_input_tokens", None)
    written = getattr(usage, "cache_creation_input_tokens", None)
    for value in (read, written):
        if value is not None and not (type(value) is int and value >= 0):
            raise TypeError(f"a cache token count is {value!r}, not a whole number")
    return read, written


def forced_tool(reply: ReplySchema) -> dict[str, Any]:
    """The structured reply as the Messages API asks for it: one tool whose input is the reply's schema, and
    ``tool_choice`` naming it, so the model answers with a call of that tool and nothing else."""
    tool = {
        "name": TOOL_NAME,
        "description": "Submit your choice for this round.",
        "input_schema": reply.json_schema(),
    }
    return {"tools": [tool], "tool_choice": {"type": "tool", "name": TOOL_NAME}}


def reply_text(blocks: list[Any]) -> str:
    """The input of the forced tool call, as JSON text (read from its fields like OpenAI's structured reply);
    the text blocks when the model made no such call (it then does not follow the schema)."""
    for block in blocks:
        if isinstance(block, anthropic.types.ToolUseBlock) and block.name == TOOL_NAME:
            return json.dumps(block.input, ensure_ascii=False)
    return _text(blocks)


def _text(blocks: list[Any]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, anthropic.types.TextBlock))


def to_messages_api(
    messages: list[Message], cache: CacheHints | None = None
) -> tuple[str | list[dict[str, Any]], list[dict[str, Any]]]:
    """Split chat messages into the Messages API's ``system`` and alternating turns.

    Every system message goes to ``system`` (joined by blank lines, in order), wherever it
    stood; consecutive messages of one role are merged, since the API rejects two user turns
    in a row. Roles other than system/user/assistant are a harness bug, so they raise.

    With ``cache``, the prompt is marked for Anthropic's prompt cache, which stores a prefix only where a
    ``cache_control`` breakpoint ends it and, for a later request, looks for it at that request's
    breakpoints and up to 20 content blocks before each. So the system prompt is one block with a breakpoint
    (the rules: the same in every round of every game of the condition), and a message with ``breaks`` is cut
    into text blocks there, one per round of the history: a breakpoint on the block that ends the rules and
    one on the block that ends the history, so the next round, one block longer, finds this round's prefix
    (three breakpoints in all: the API takes four).
    """
    cuts: dict[int, list[int]] = {}
    for index, offset in cache.breaks if cache is not None else ():
        cuts.setdefault(index, []).append(offset)
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role, content = message["role"], message.get("content", "")
        if role == "system":
            system.append(content)
        elif role not in ("user", "assistant"):
            raise ValueError(f"the Anthropic Messages API has no {role!r} role (use system, user or assistant)")
        elif turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": f"{_plain(turns[-1]['content'])}\n\n{content}"}
        elif index in cuts and cache is not None:
            turns.append({"role": role, "content": _blocks(content, cuts[index], cache.ttl)})
        else:
            turns.append({"role": role, "content": content})
    text = "\n\n".join(system)
    if cache is None or not text:
        return text, turns
    return [{"type": "text", "text": text, "cache_control": _control(cache.ttl)}], turns


def _blocks(content: str, offsets: list[int], ttl: CacheTtl) -> list[dict[str, Any]]:
    """``content`` cut at ``offsets`` into text blocks (their texts join to ``content``), with a breakpoint on
    the first (the rules) and the last but one (the end of the history); the system prompt holds the other."""
    edges = [0, *sorted({o for o in offsets if 0 < o < len(content)}), len(content)]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content[start:end]} for start, end in pairwise(edges)]
    if len(blocks) > 1:
        for block in {id(b): b for b in (blocks[0], blocks[-2])}.values():
            block["cache_control"] = _control(ttl)
    return blocks


def _control(ttl: CacheTtl) -> dict[str, str]:
    return {"type": "ephemeral"} if ttl is CacheTtl.FIVE_MINUTES else {"type": "ephemeral", "ttl": ttl.value}


def _plain(content: str | list[dict[str, Any]]) -> str:
    return content if isinstance(content, str) else "".join(block["text"] for block in content)
