"""Model providers behind one small contract: ``generate`` a completion, and say whether an error is worth
retrying (``should_retry`` returning a decision). Also what every provider shares: API keys (where they may
be sent, how they are masked) and the rate-limit headers servers send. Retries, rate limits and the response
cache live in :mod:`harness.calls`, above.

May import: errors, states, util.
"""
