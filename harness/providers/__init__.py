"""Model providers behind one small contract: ``generate`` a completion, and say whether an error
is worth retrying (``should_retry``). Retries, rate limits and caching live in the call path."""
