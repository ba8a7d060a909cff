"""``openai/<model>``: OpenAI's Chat Completions API, and any server that speaks it.

The same class serves api.openai.com and OpenAI-compatible servers (vLLM, llama.cpp, Ollama,
LM Studio): only the base URL differs. The SDK's own retries are off (``max_retries=0``) because
the harness owns every attempt: it waits under the shared rate limiter, records each try in the
``calls`` table and never pays twice for one answer. This module only sends one request per
``generate`` and classifies what went wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import openai

from harness.providers.base import (
    DEFAULT_BASE_URLS,
    KEYLESS_PLACEHOLDER,
    Completion,
    Endpoint,
    MalformedResponse,
    Message,
    PromptFacts,
    RetryDecision,
    SamplingParams,
    key_id,
    keyless_headers,
    sdk_retry_decision,
    shape_error,
    well_formed,
)
from harness.providers.keys import Scrubber, scrub

if TYPE_CHECKING:
    import httpx2

DEFAULT_BASE_URL = DEFAULT_BASE_URLS["openai"]

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


class OpenAIProvider:
    """One model behind one Chat Completions endpoint.

    ``http_client`` lets tests (or a caller sharing a connection pool) supply the transport; the
    SDK accepts an ``httpx2.AsyncClient`` and also a legacy ``httpx.AsyncClient`` (which ``respx``
    can intercept). A client passed in belongs to the caller and is left open by :meth:`aclose`.

    ``max_tokens_field`` names the length cap in the request. OpenAI's own API rejects the old
    ``max_tokens`` for its reasoning models and accepts ``max_completion_tokens`` for every chat
    model, while compatible servers widely understand only ``max_tokens``; so the default picks
    ``max_completion_tokens`` for api.openai.com and ``max_tokens`` everywhere else.
    """

    name = "openai"
    unsupported_params: frozenset[str] = frozenset()  # every SamplingParams field is sent

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_tokens_field: MaxTokensField | None = None,
    ) -> None:
        self.model = model
        # Always pass a base URL: given None the SDK would read OPENAI_BASE_URL itself, behind the
        # back of the registry that already resolved settings and environment.
        url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.endpoint = Endpoint(provider="openai", base_url=url, key_id=key_id(api_key))
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_completion_tokens" if url == DEFAULT_BASE_URL else "max_tokens"
        )
        self._scrubber = Scrubber([api_key] if api_key else [])
        # No key (a base URL the key may not go to): no credential from the environment either. The
        # placeholder keeps the SDK from looking for one; every request leaves its header out.
        self._no_credentials = (
            {}
            if api_key
            else keyless_headers(
                ("Authorization", "OpenAI-Organization", "OpenAI-Project"), "OPENAI_CUSTOM_HEADERS", openai.Omit()
            )
        )
        self._owns_http_client = http_client is None
        self._client = openai.AsyncOpenAI(
            api_key=api_key or KEYLESS_PLACEHOLDER, base_url=url, max_retries=0, http_client=http_client
        )

    def __repr__(self) -> str:
        # Spelled out so that no debugger or log line ever shows the client (and its key).
        return f"OpenAIProvider(model={self.model!r}, endpoint={self.endpoint!r})"

    async def generate(
        self, messages: list[Message], params: SamplingParams, timeout: float, facts: PromptFacts | None = None
    ) -> Completion:
        """One Chat Completions request; SDK exceptions propagate for :meth:`should_retry`. ``facts`` are
        for stand-in models and are not sent."""
        extra: dict[str, Any] = {self.max_tokens_field: params.max_tokens}
        if params.temperature is not None:
            extra["temperature"] = params.temperature
        if params.top_p is not None:
            extra["top_p"] = params.top_p
        if params.seed is not None:
            extra["seed"] = params.seed
        response = await self._client.chat.completions.create(
            model=self.model,
            messages=[dict(m) for m in messages],  # type: ignore[misc]
            timeout=timeout,
            extra_headers=self._no_credentials or None,  # type: ignore[arg-type]
            **extra,
        )
        # A body of another shape (the SDK does not validate it), or one without an answer in it, is a
        # MalformedResponse, asked again (see read_choice); compatible servers may leave usage out.
        try:
            text, finish_reason, refusal = read_choice(response.choices)
            usage = response.usage
            completion = Completion(
                text=text,
                input_tokens=usage.prompt_tokens if usage is not None else None,
                output_tokens=usage.completion_tokens if usage is not None else None,
                model=response.model or self.model,
                finish_reason=finish_reason,
                refusal=refusal,
            )
        except (AttributeError, TypeError, IndexError, KeyError) as exc:
            raise shape_error(response, exc) from exc
        return well_formed(completion)

    def should_retry(self, error: BaseException) -> RetryDecision:
        """Retry timeouts, lost connections, malformed answers, 408/409/429/5xx; never another 4xx or a local bug."""
        return sdk_retry_decision(
            error,
            status_error=openai.APIStatusError,
            timeout_error=openai.APITimeoutError,
            connection_error=openai.APIConnectionError,
            validation_error=openai.APIResponseValidationError,
            scrub=self._scrub,
        )

    async def aclose(self) -> None:
        """Close the connection pool if it is ours; a caller's ``http_client`` stays open."""
        if self._owns_http_client and not self._client.is_closed():
            await self._client.close()

    def _scrub(self, text: str) -> str:
        """Never let a key (this one, in any form, or another one the run uses) into a reason that ends up
        in the results database, a log or the terminal."""
        return scrub(self._scrubber(text))


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
