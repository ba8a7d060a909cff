"""One limiter per endpoint, shared by every game of the process.

Providers limit an API key (an organisation) on a server, not a game: fifty games sharing one
key share one budget. An endpoint is told apart by its provider, its normalised URL
(:func:`endpoint_url`: one server spelled ``localhost`` or ``127.0.0.1``, with or without its
default port or a trailing slash, is one endpoint) and a short SHA-256 of the key
(:func:`harness.providers.base.key_id`); the key itself is never kept.

Agents on one endpoint that configure different limits share one budget all the same: the
limiter applies the strictest of each (:func:`strictest`), and ``pdbench validate`` / ``run`` say
so before the run (:func:`limit_disagreements`).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import socket
import time
from collections.abc import Iterable
from urllib.parse import urlsplit

from harness.calls.limits.endpoint import Clock, EndpointLimiter
from harness.calls.limits.settings import LimitSettings
from harness.providers.base import key_id
from harness.providers.registry import PROVIDERS

EndpointKey = tuple[str, str | None, str | None]  # provider, normalised URL, key id

DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_url(base_url: str | None, *, resolve: bool = True) -> str | None:
    """``scheme://address:port/path`` of a base URL, the host resolved to its address (an IPv4 one where it
    has one), so that every spelling of one server names one endpoint; the URL as written (trimmed) if it
    cannot be read. ``resolve=False`` asks no name server: only ``localhost`` and addresses are read (for
    ``pdbench validate``, which must not look up the hosts of a file it checks)."""
    if not base_url:
        return None
    try:
        parts = urlsplit(base_url.strip())
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        return base_url.strip().rstrip("/")
    address = _address(host) if resolve else _literal(host)
    if ":" in address:
        address = f"[{address}]"
    path = re.sub("/{2,}", "/", parts.path).rstrip("/")
    return f"{scheme}://{address}:{port}{path}" if port else f"{scheme}://{address}{path}"


@functools.lru_cache(maxsize=256)
def _address(host: str) -> str:
    """The host's address (the lowest IPv4 one if any, else the lowest IPv6 one), or the name in lower case
    if it does not resolve."""
    host = host.lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return host
    addresses = [ipaddress.ip_address(str(a).split("%")[0]) for a in found]
    v4 = sorted(a for a in addresses if a.version == 4)
    v6 = sorted(a for a in addresses if a.version == 6)
    return str((v4 or v6)[0]) if addresses else host


def _literal(host: str) -> str:
    """The host's address without asking a name server: an address as it is, ``localhost`` as 127.0.0.1,
    any other name in lower case."""
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def strictest(a: LimitSettings, b: LimitSettings) -> LimitSettings:
    """The limits that keep both agents' promises: the lower of each (``None``, unlimited, yields)."""

    def low(x: float | None, y: float | None) -> float | None:
        return y if x is None else x if y is None else min(x, y)

    concurrency = low(a.concurrency, b.concurrency)
    return LimitSettings(
        concurrency=None if concurrency is None else int(concurrency), rpm=low(a.rpm, b.rpm), tpm=low(a.tpm, b.tpm)
    )


def describe(settings: LimitSettings) -> str:
    """``concurrency 4, rpm 100, tpm unlimited``: limits as the user configures them."""

    def value(x: float | int | None) -> str:
        return "unlimited" if x is None else f"{x:g}"

    return f"concurrency {value(settings.concurrency)}, rpm {value(settings.rpm)}, tpm {value(settings.tpm)}"


def limit_disagreements(agents: Iterable[tuple[str, str, str | None, str | None, LimitSettings]]) -> list[str]:
    """A warning for each endpoint whose agents configure different limits, naming the limits that apply.

    ``agents``: (where in the config, provider, base URL, name of the key's variable, limits). An agent
    without a base URL goes where the run would send it: the environment's (``OPENAI_BASE_URL``), else
    the provider's own endpoint."""
    groups: dict[tuple[str, str | None, str | None], list[tuple[str, LimitSettings]]] = {}
    for where, provider, base_url, key_env, settings in agents:
        info = PROVIDERS[provider]
        url = base_url or os.environ.get(info.base_url_env or "") or info.default_base_url
        groups.setdefault((provider, endpoint_url(url, resolve=False), key_env), []).append((where, settings))
    out = []
    for (provider, url, _), members in groups.items():
        distinct = {settings.model_dump_json() for _, settings in members}
        if len(distinct) < 2:
            continue
        applied = members[0][1]
        for _, settings in members[1:]:
            applied = strictest(applied, settings)
        named = "; ".join(f"{where}: {describe(settings)}" for where, settings in members)
        out.append(
            f"the agents on one endpoint ({provider}{' at ' + url if url else ''}) set different limits ({named}); "
            f"they share one budget, so the run applies the strictest of each: {describe(applied)}. Give them "
            "the same `limits` to silence this"
        )
    return out


class LimiterRegistry:
    """One limiter per endpoint (provider, normalised URL, key id), shared by every game.

    A later ``get`` of an endpoint with other settings tightens its limiter to the strictest of both,
    since two budgets for one endpoint would together exceed it.
    """

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._limiters: dict[EndpointKey, EndpointLimiter] = {}

    def get(self, provider: str, base_url: str | None, api_key: str | None, settings: LimitSettings) -> EndpointLimiter:
        """The limiter of this endpoint, created on first use."""
        key = (provider, endpoint_url(base_url), key_id(api_key))
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = EndpointLimiter(settings, clock=self._clock)
        elif limiter.settings != settings:
            limiter.tighten(strictest(limiter.settings, settings))
        return limiter

    def limiters(self) -> dict[EndpointKey, EndpointLimiter]:
        """Every endpoint's limiter, keyed by (provider, normalised URL, key id), for displays."""
        return dict(self._limiters)
