"""Seeds: every source of randomness in a game draws from its own stream, derived from stable parts.

A game's seed comes from the run seed, its condition and its replicate (see :mod:`harness.config.plan`);
each stream (horizon, noise, each player) is derived from that seed by name, so a game's result does not
depend on which other games share the run, their order, or how many play at once.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from any parts (independent of PYTHONHASHSEED and platform)."""
    digest = hashlib.blake2b(":".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def stream(seed: int, name: str) -> random.Random:
    """The random stream ``name`` of a game (``horizon``, ``noise``, ``a``, ``b``)."""
    return random.Random(derive_seed(seed, name))
