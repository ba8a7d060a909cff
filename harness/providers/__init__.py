"""Model providers behind one small contract: ``generate`` a completion, and say whether an error is worth
retrying (``should_retry`` returning a decision). The registry (:mod:`~harness.providers.registry`) holds one
:class:`~harness.providers.info.ProviderInfo` per provider (offline or not, its key and base-URL variables, its
own endpoint): callers ask it, never compare names. The SDK providers (openai, anthropic) share
:class:`~harness.providers.sdk.SdkProvider`. Also what every provider shares: API keys (where they may be sent,
how they are masked) and the rate-limit headers servers send. Retries, rate limits and the response
cache live in :mod:`harness.calls`, above.

May import: errors, states, util.
"""
