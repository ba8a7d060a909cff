"""The call path: one model request from prompt to recorded answer. The request and its cache key
(:mod:`~harness.calls.request`), retries that honour Retry-After (:mod:`~harness.calls.retry`), answers and
the budget (:mod:`~harness.calls.answers`, :mod:`~harness.calls.pricing`), the per-call record
(:mod:`~harness.calls.record`), the response cache with its claims and ledger (:mod:`harness.calls.cache`)
and the per-endpoint rate limits (:mod:`harness.calls.limits`); :mod:`~harness.calls.path` ties them together.

May import: errors, states, util, providers.
"""
