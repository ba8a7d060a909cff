"""What the providers that speak through a vendor's SDK (openai, anthropic) share.

Each sends one request per ``generate`` with the SDK's own retries off (``max_retries=0``): the harness owns
every attempt, waits under the shared rate limiter, records each try in the ``calls`` table and never pays
twice for one answer. What they share is here: the endpoint and key bookkeeping made from the resolved
settings, :meth:`SdkProvider.should_retry` (the two SDKs' errors have one shape), closing the connection pool
they own, and keeping every key out of every reason they give. Each subclass builds its SDK's client and
translates requests and answers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, Self

from harness.providers.base import (
    Endpoint,
    Fault,
    MalformedResponse,
    RetryDecision,
    decide_status,
    key_id,
    local_decision,
    status_message,
)
from harness.providers.keys import Scrubber, scrub
from harness.providers.structured import REFUSED_HINT
from harness.providers.tiers import ServiceTier

if TYPE_CHECKING:
    import httpx2

    from harness.providers.info import ProviderInfo


class StructuredRequestFailed(Exception):
    """A request for a structured reply failed (``cause``): told apart so that a server's refusal of the schema
    is reported as such (see :meth:`SdkProvider.structured_refused`)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


@contextlib.contextmanager
def structured_request(structured: bool) -> Iterator[None]:
    """Around an SDK's send: a failure of a request for a structured reply is a :class:`StructuredRequestFailed`
    (so a server's refusal of the schema can be told), any other request's failure passes as it is."""
    try:
        yield
    except Exception as exc:
        if not structured:
            raise
        raise StructuredRequestFailed(exc) from exc


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """The SDK's exception classes that :meth:`SdkProvider.should_retry` tells apart."""

    status: type[Exception]  # the server answered with an HTTP error status
    timeout: type[Exception]  # no answer in time (a subclass of ``connection``)
    connection: type[Exception]  # the connection failed or was lost
    validation: type[Exception]  # an answer of the wrong shape, when the SDK validates strictly


class SdkClient(Protocol):
    """The part of an SDK's async client this base class uses."""

    def is_closed(self) -> bool: ...

    async def close(self) -> None: ...


class SdkProvider:
    """One model at one endpoint, reached through a vendor's SDK.

    ``http_client`` lets tests (or a caller sharing a connection pool) supply the transport; a client passed in
    belongs to the caller and is left open by :meth:`aclose`. The base URL is always resolved here and given
    to the SDK: given None it would read its own ``*_BASE_URL`` (or a profile on disk), behind the back of the
    registry that already resolved settings and environment.
    """

    info: ClassVar[ProviderInfo]
    errors: ClassVar[SdkErrors]
    _client: SdkClient

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        http_client: httpx2.AsyncClient | None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> None:
        assert service_tier in self.info.tiers, f"{self.info.name} has no {service_tier} tier"  # refused in the config
        self.model = model
        self.service_tier = service_tier
        url = base_url or self.info.default_base_url
        assert url is not None, f"{self.info.name} has no endpoint of its own"
        self.url = url.rstrip("/")  # where requests go: the given base URL, else the provider's own endpoint
        self.endpoint = Endpoint(provider=self.info.name, base_url=self.url, key_id=key_id(api_key))
        self._scrubber = Scrubber([api_key] if api_key else [])
        self._owns_http_client = http_client is None

    @classmethod
    def create(
        cls,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        http_client: httpx2.AsyncClient | None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> Self:
        """The provider the registry makes, with the key and base URL it resolved and the agent's tier."""
        return cls(model, api_key=api_key, base_url=base_url, http_client=http_client, service_tier=service_tier)

    def __repr__(self) -> str:
        # Spelled out so that no debugger or log line ever shows the client (and its key).
        return f"{type(self).__name__}(model={self.model!r}, endpoint={self.endpoint!r})"

    def structured_refused(self, failed: StructuredRequestFailed) -> RetryDecision:
        """The decision on a structured request's failure, as on any request's; a 400 or 422 (the request
        refused as malformed) says that the server does not take the schema, and what to do instead."""
        decision = self.should_retry(failed.cause)
        if decision.fault is Fault.REJECTED and getattr(failed.cause, "status_code", None) in (400, 422):
            return RetryDecision(Fault.REJECTED, REFUSED_HINT.format(reason=decision.reason))
        return decision

    def should_retry(self, error: BaseException) -> RetryDecision:
        """Retry timeouts, lost connections, malformed answers, 408/409/429/5xx (and Anthropic's 529); never
        another 4xx or a local bug.

        HTTP statuses go by :func:`~harness.providers.base.decide_status`; a 200 whose body is not JSON raises
        ``json.JSONDecodeError`` from both SDKs, one of the wrong shape ``MalformedResponse`` from the provider
        or the SDK's validation error when it validates strictly; anything else is not retried. Every reason
        is scrubbed of keys before it can reach the results or a log."""
        if isinstance(error, StructuredRequestFailed):
            return self.structured_refused(error)
        errors = self.errors
        if isinstance(error, errors.status):
            message = self._scrub(status_message(error.body, error.message))  # type: ignore[attr-defined]
            return decide_status(error.status_code, error.response.headers, error.body, message)  # type: ignore[attr-defined]
        if isinstance(error, errors.timeout | TimeoutError):  # before errors.connection, its base class
            return RetryDecision(Fault.TIMEOUT, "timeout")
        if isinstance(error, errors.connection):
            cause = error.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None and str(cause) else error.message  # type: ignore[attr-defined]
            return RetryDecision(Fault.TRANSIENT, self._scrub(f"connection error: {detail}")[:500])
        if isinstance(error, json.JSONDecodeError):
            reason = f"malformed answer: the body is not JSON ({error})"
            return RetryDecision(Fault.TRANSIENT, self._scrub(reason)[:500])
        if isinstance(error, MalformedResponse | errors.validation):
            return RetryDecision(Fault.TRANSIENT, self._scrub(f"malformed answer: {error}")[:500])
        return local_decision(error, self._scrub)

    async def aclose(self) -> None:
        """Close the connection pool if it is ours; a caller's ``http_client`` stays open."""
        if self._owns_http_client and not self._client.is_closed():
            await self._client.close()

    def _scrub(self, text: str) -> str:
        """Never let a key (this one, in any form, or another one the run uses) into a reason that ends up
        in the results database, a log or the terminal."""
        return scrub(self._scrubber(text))
