"""``openai/<model>``: OpenAI's Chat Completions API, and any server that speaks it.

The same class serves api.openai.com and OpenAI-compatible servers (vLLM, llama.cpp, Ollama,
LM Studio): only the base URL differs. What every SDK provider shares (one request per ``generate``
with the SDK's retries off, ``should_retry``, ``aclose``) is :class:`~harness.providers.sdk.SdkProvider`;
this module translates the request and reads the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import openai

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
from harness.providers.info import OPENAI
from harness.providers.sdk import SdkErrors, SdkProvider, structured_request
from harness.providers.structured import SCHEMA_NAME, ReplySchema
from harness.providers.tiers import ServiceTier

if TYPE_CHECKING:
    import httpx2

    from harness.providers.openai_batch import OpenAIBatch

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


class OpenAIProvider(SdkProvider):
    """One model behind one Chat Completions endpoint.

    ``http_client``: the SDK accepts an ``httpx2.AsyncClient`` and also a legacy ``httpx.AsyncClient`` (which
    ``respx`` can intercept); see :class:`~harness.providers.sdk.SdkProvider`.

    ``max_tokens_field`` names the length cap in the request. OpenAI's own API rejects the old
    ``max_tokens`` for its reasoning models and accepts ``max_completion_tokens`` for every chat
    model, while compatible servers widely understand only ``max_tokens``; so the default picks
    ``max_completion_tokens`` for api.openai.com and ``max_tokens`` everywhere else.

    ``prompt_cache_key`` (the :class:`~harness.providers.base.CacheHints` key: one per game and seat) routes a
    game's requests to where its prompt prefix is cached. It is sent to api.openai.com only, unless
    ``send_cache_key`` says otherwise: a compatible server may refuse a field it does not know.

    ``service_tier`` flex sends ``service_tier="flex"`` (to any server: the user asked for it); standard sends
    nothing, so that compatible servers see the requests they always did.
    """

    info = OPENAI
    name = OPENAI.name
    errors = SdkErrors(
        status=openai.APIStatusError,
        timeout=openai.APITimeoutError,
        connection=openai.APIConnectionError,
        validation=openai.APIResponseValidationError,
    )
    unsupported_params: frozenset[str] = frozenset()  # every SamplingParams field is sent
    _client: openai.AsyncOpenAI

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_tokens_field: MaxTokensField | None = None,
        send_cache_key: bool | None = None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> None:
        super().__init__(model, api_key=api_key, base_url=base_url, http_client=http_client, service_tier=service_tier)
        self.send_cache_key = self.url == OPENAI.default_base_url if send_cache_key is None else send_cache_key
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_completion_tokens" if self.url == OPENAI.default_base_url else "max_tokens"
        )
        # No key (a base URL the key may not go to): no credential from the environment either. The
        # placeholder keeps the SDK from looking for one; every request leaves its header out.
        self._no_credentials = (
            {}
            if api_key
            else keyless_headers(
                ("Authorization", "OpenAI-Organization", "OpenAI-Project"), "OPENAI_CUSTOM_HEADERS", openai.Omit()
            )
        )
        self._client = openai.AsyncOpenAI(
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
        """One Chat Completions request; SDK exceptions propagate for :meth:`should_retry`. ``facts`` are
        for stand-in models and are not sent; of ``cache``, only the key is (OpenAI finds prefixes itself)."""
        with structured_request(params.reply is not None):
            response = await self._client.chat.completions.create(
                timeout=timeout,
                extra_headers=self._no_credentials or None,  # type: ignore[arg-type]
                **self.request_body(messages, params, cache),
            )
        return self.read_response(response)

    def request_body(self, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> dict[str, Any]:
        """The JSON body of the Chat Completions request for ``messages``: what ``generate`` sends, and what a
        batch item holds (:mod:`harness.providers.openai_batch`), so both ask the same question."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            self.max_tokens_field: params.max_tokens,
        }
        if self.service_tier is ServiceTier.FLEX:
            body["service_tier"] = ServiceTier.FLEX.value
        if cache is not None and cache.key is not None and self.send_cache_key:
            body["prompt_cache_key"] = cache.key
        if params.temperature is not None:
            body["temperature"] = params.temperature
        if params.top_p is not None:
            body["top_p"] = params.top_p
        if params.seed is not None:
            body["seed"] = params.seed
        if params.reply is not None:
            body["response_format"] = response_format(params.reply)
        return body

    def read_response(self, response: Any) -> Completion:
        """The answer in a chat completion (the SDK's object). A body of another shape (the SDK does not validate
        it), or one without an answer in it, is a MalformedResponse, asked again (see read_choice); compatible
        servers may leave usage out."""
        try:
            text, finish_reason, refusal = read_choice(response.choices)
            usage = response.usage
            details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
            completion = Completion(
                text=text,
                input_tokens=usage.prompt_tokens if usage is not None else None,
                output_tokens=usage.completion_tokens if usage is not None else None,
                model=response.model or self.model,
                finish_reason=finish_reason,
                refusal=refusal,
                # Compatible servers often leave the details out: then nothing is known of a cache.
                cached_input_tokens=getattr(details, "cached_tokens", None) if details is not None else None,
            )
        except (AttributeError, TypeError, IndexError, KeyError) as exc:
            raise shape_error(response, exc) from exc
        return well_formed(completion)

    def batch_api(self) -> OpenAIBatch:
        """This model's batch endpoint (the Batch API, through files), for ``service_tier: batch``."""
        from harness.providers.openai_batch import OpenAIBatch

        return OpenAIBatch(self, self._client, self._no_credentials)


def response_format(reply: ReplySchema) -> dict[str, Any]:
    """The structured reply as Chat Completions asks for it: a strict JSON schema (OpenAI's structured outputs;
    llama.cpp's server, vLLM and Ollama take the same ``response_format`` and constrain decoding to it)."""
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": reply.json_schema()}}


CONTENT_FILTER = "content_filter"
"""The ``finish_reason`` of an answer the provider's content filter withheld (or cut short)."""


def read_choice(choices: object) -> tuple[str, str | None, str | None]:
    """The text, finish reason and refusal (see :attr:`Completion.refusal`) of a reply's first choice.

    A reply without a choice, or whose message or content is missing with nothing to explain it, is
    not the model's empty answer but a damaged one (a server or proxy fault that passes): it raises
    :class:`MalformedResponse` (a body of another shape: TypeError or AttributeError, for the caller to
    wrap), so the call path asks again and never caches it. Null content is
    explained by a refusal (``finish_reason: content_filter``, or ``message.refusal`` as structured
    outputs send it) or by the length cap (``finish_reason: length``: a model whose budget went to
    reasoning has nothing more to say, and asking again would pay for the same)."""
    if choices is None or choices == []:
        raise MalformedResponse("the answer has no choices")
    if not isinstance(choices, list):
        raise TypeError(f"choices is a {type(choices).__name__}, not a list")
    first = choices[0]
    message = first.message
    finish_reason = first.finish_reason
    if message is None:
        raise MalformedResponse(f"the answer's choice has no message (finish_reason {finish_reason!r})")
    content, withheld = message.content, getattr(message, "refusal", None)
    if finish_reason == CONTENT_FILTER:
        return content or withheld or "", finish_reason, CONTENT_FILTER
    if isinstance(withheld, str) and withheld:
        return content or withheld, finish_reason, "refusal"
    if content is None and finish_reason != "length":
        raise MalformedResponse(f"the answer's message has no content (finish_reason {finish_reason!r})")
    return content or "", finish_reason, None
