"""Temporary: the response cache moved to :mod:`harness.store.cache` and its sibling modules.

Only the modules this branch does not own (``harness/calls.py``, ``harness/cli.py``,
``harness/providers/mock.py``) still import from here; this file goes once their imports point at
:mod:`harness.store.cache`, :mod:`harness.store.cache_keys`, :mod:`harness.store.cache_file`,
:mod:`harness.store.claims` and :mod:`harness.store.ledger`.
"""

from harness.store.cache import CachedResponse, CacheStats, ResponseCache
from harness.store.cache_file import delete_cache, set_aside
from harness.store.cache_keys import cache_key, cache_key_join, cache_key_parts, canonical_json, json_string
from harness.store.claims import Claim
from harness.store.ledger import LedgerEntry

__all__ = [
    "CacheStats",
    "CachedResponse",
    "Claim",
    "LedgerEntry",
    "ResponseCache",
    "cache_key",
    "cache_key_join",
    "cache_key_parts",
    "canonical_json",
    "delete_cache",
    "json_string",
    "set_aside",
]
