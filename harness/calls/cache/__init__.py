"""The shared response cache: one SQLite file holding the answers paid for (by cache key), the ledger of
paid calls not yet in a results file, and the claims on requests in flight. :mod:`~harness.calls.cache.cache`
composes the jobs; each has its own module: keys, responses, ledger, claims, storage (this process's
connections to the file), turns (async calls grouped by turn of the event loop) and file (opening, failures).
"""
