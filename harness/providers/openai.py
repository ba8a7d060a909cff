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

from harness.keys import Scrubber, scrub
from harness.providers.base import (
    DEFAULT_BASE_URLS,
    KEYLESS_PLACEHOLDER,
    Completion,
    Endpoint,
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
        # Compatible servers are not always complete: tolerate missing choices, content and usage. A body
        # of another shape (the SDK does not validate it) is a MalformedResponse, asked again.
        try:
            choices = response.choices or []
            first = choices[0] if choices else None
            text = (first.message.content if first is not None and first.message is not None else None) or ""
            usage = response.usage
            completion = Completion(
                text=text,
                input_tokens=usage.prompt_tokens if usage is not None else None,
                output_tokens=usage.completion_tokens if usage is not None else None,
                model=response.model or self.model,
                finish_reason=first.finish_reason if first is not None else None,
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
