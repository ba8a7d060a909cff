"""From a model name a user typed (``openai/gpt-4o-mini``) to a ready :class:`Provider`.

Names are ``provider/model``: ``openai/<model>`` (OpenAI, or any OpenAI-compatible server such
as vLLM, llama.cpp or Ollama behind ``OPENAI_BASE_URL``), ``anthropic/<model>`` and
``mock/<behaviour>``. Keys and base URLs come from explicit :class:`ProviderSettings` or the
environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``,
``ANTHROPIC_BASE_URL``); loading ``.env`` into that environment is the CLI's job.

Where a key may go: wherever the user's own configuration says (settings, environment). A base URL
given by someone else (typed into the dashboard, which anyone who reaches the page can do) carries
``key_only_to_configured``: the key then goes only to the provider's own endpoint or to a base URL
set in the environment or ``.env`` (:func:`key_origins`); requests to any other address go without
a key, so a visitor cannot collect the user's keys by typing their own server's address.

A key named by a file (``api_key_env`` in an experiment file, which may come from anyone) goes only to
the provider's own endpoint, to the base URL set in the environment or ``.env``, or to a host the user
allowed on the command line (``--allow-key-to HOST``, :func:`allow_keys_to`); otherwise the run is
refused before any request (:func:`key_destination_problem`), for a downloaded config could otherwise
send ``AWS_SECRET_ACCESS_KEY`` as the Bearer token to its own server. Every key a player names is
remembered (:func:`harness.providers.keys.remember_key`), sent or not, so that no prompt carries it.

:func:`check_credentials` exists so that a missing key is reported, with every other problem,
before the first game starts rather than as a failed call an hour into a run. The SDKs are
imported only when a provider of theirs is made, so mock-only runs need neither installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator

from harness.errors import ConfigError
from harness.providers.base import URL_EXAMPLE, Provider, url_problem
from harness.providers.info import ANTHROPIC, OPENAI, ProviderInfo
from harness.providers.keys import check_key, remember_key
from harness.providers.mock import BEHAVIOURS, MOCK
from harness.providers.tiers import ServiceTier

if TYPE_CHECKING:
    import httpx2

PROVIDERS: dict[str, ProviderInfo] = {info.name: info for info in (OPENAI, ANTHROPIC, MOCK)}
"""Every provider, by the name a model name starts with."""
_KNOWN_NAMES = (
    "openai/<model> (OpenAI, or an OpenAI-compatible server such as vLLM, llama.cpp or Ollama "
    "with OPENAI_BASE_URL), anthropic/<model>, mock/<behaviour> (offline; behaviours: " + ", ".join(BEHAVIOURS) + ")"
)


def is_offline(name: str) -> bool:
    """Whether the model ``name`` is answered offline (the mock): no key, no server, nothing to pay. A name
    that is not a model's is not offline (it is refused where it is checked)."""
    provider, slash, _ = name.strip().partition("/")
    return bool(slash) and provider in PROVIDERS and PROVIDERS[provider].offline


class ProviderSettings(BaseModel):
    """How to reach one provider (or one model), when the environment's defaults are not enough.

    ``api_key_env`` names the environment variable that holds the key, never the key itself, so a
    config file can be committed and shared. (The time a request may take is the call path's
    :class:`~harness.calls.retry.RetrySettings`, one setting for the whole run.)
    ``key_only_to_configured``: ``base_url`` was given by someone who may not own the key (the
    dashboard's page); the key goes to it only if it is one of :func:`key_origins`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    api_key_env: str | None = None
    key_only_to_configured: bool = False

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and (problem := url_problem(value)) is not None:
            raise ValueError(f"base_url {value!r} is not a server's URL: {problem} (e.g. {URL_EXAMPLE})")
        return value


ALLOW_FLAG = "--allow-key-to"
_allowed_hosts: frozenset[tuple[str, int | None]] = frozenset()  # (host, port or None for any port)


def allow_keys_to(hosts: Iterable[str]) -> None:
    """The hosts the user allowed on the command line (``--allow-key-to``) to receive a key named by a file's
    ``api_key_env`` (each ``HOST``, ``HOST:PORT`` or a URL), for the rest of the command; replaces any earlier
    allowance. Process-wide, as the command line is; raises ConfigError for a value that names no host."""
    global _allowed_hosts
    _allowed_hosts = frozenset(_allowed(text) for text in hosts)


def _allowed(text: str) -> tuple[str, int | None]:
    value = text.strip()
    try:
        parts = urlsplit(value if "://" in value else f"//{value}")
        host, port = (parts.hostname or "").rstrip("."), parts.port
    except ValueError:
        host, port = "", None
    if not host or (parts.path not in ("", "/") and "://" not in value):
        raise ConfigError(
            f"{ALLOW_FLAG} takes a host name or address, optionally with :PORT (e.g. {ALLOW_FLAG} 127.0.0.1:8000 or "
            f"{ALLOW_FLAG} llm.my-lab.org), got {text!r}"
        )
    return host.lower(), port


def _host_text(found: tuple[str, str, int | None]) -> str:
    """``host`` or ``host:port`` (a port other than the scheme's own), as --allow-key-to takes it."""
    scheme, host, port = found
    shown = f"[{host}]" if ":" in host else host
    return shown if port == {"http": 80, "https": 443}.get(scheme) else f"{shown}:{port}"


def key_destination_problem(
    provider: str, settings: ProviderSettings | None, environ: Mapping[str, str] = os.environ, *, label: str = ""
) -> str | None:
    """Why the key a file names (``settings.api_key_env``) may not go where the settings send it, or None.

    It may go to the provider's own endpoint and to the base URL of the environment (:func:`key_origins`,
    the dashboard's rule), and to a host allowed with ``--allow-key-to``; anywhere else is refused, whoever
    wrote the file, before the key is read. A player with ``key_only_to_configured`` sends no key there, so
    nothing is refused for it."""
    info = PROVIDERS.get(provider)
    if info is None or info.base_url_env is None or settings is None or not settings.api_key_env:
        return None
    if settings.key_only_to_configured:
        return None
    base_url = settings.base_url or (environ.get(info.base_url_env) or "").strip() or None
    if sends_key(provider, base_url, environ):
        return None
    found = origin(base_url or "")
    if found is not None and any(
        found[1].lower() == host and port in (None, found[2]) for host, port in _allowed_hosts
    ):
        return None
    host = _host_text(found) if found is not None else str(base_url)
    return (
        f"{label or provider}: the key in {settings.api_key_env} (named by api_key_env) would be sent to {host} "
        f"({base_url}), which is neither {provider}'s own endpoint nor the {info.base_url_env} of your "
        "environment. A config file can name any variable and any server, so nothing was sent. If that server is "
        f"yours and may have this key, allow it on the command line: {ALLOW_FLAG} {host} (or set "
        f"{info.base_url_env} to its URL in the environment or .env)"
    )


def parse_model_name(name: str) -> tuple[str, str]:
    """``"openai/gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``.

    Only the first slash separates, so a served model may have slashes of its own
    (``openai/meta-llama/Llama-3.1-8B-Instruct`` for vLLM).
    """
    provider, slash, model = name.strip().partition("/")
    if not slash:
        raise ConfigError(
            f"model name {name!r} has no provider: write provider/model{_guess(name)}; known: {_KNOWN_NAMES}"
        )
    if provider not in PROVIDERS:
        hint = f" (provider names are lower-case: {provider.lower()}/{model})" if provider.lower() in PROVIDERS else ""
        raise ConfigError(f"unknown provider {provider!r} in model name {name!r}{hint}; known: {_KNOWN_NAMES}")
    if not model.strip():
        raise ConfigError(f"model name {name!r} names no model after {provider}/; known: {_KNOWN_NAMES}")
    return provider, model.strip()


def resolve_credentials(
    provider: str,
    settings: ProviderSettings | None = None,
    environ: Mapping[str, str] = os.environ,
    *,
    model: str | None = None,
) -> tuple[str | None, str | None]:
    """``(api_key, base_url)`` for ``provider``: settings first, then the environment.

    ``model`` (the full name) only makes the error message name what the user typed. A missing or
    damaged key raises :class:`ConfigError`; the mock provider needs neither key nor URL. The key is
    ``None`` (requests go without one) when ``settings.key_only_to_configured`` and the base URL is
    not one of :func:`key_origins`.
    """
    info = PROVIDERS.get(provider)
    if info is None:
        raise ConfigError(f"unknown provider {provider!r}; known: {_KNOWN_NAMES}")
    if info.key_env is None or info.base_url_env is None:  # the mock: it talks to no server and needs no key
        return None, None
    settings = settings or ProviderSettings()
    label = model or f"{provider}/<model>"
    base_env = info.base_url_env
    base_url = settings.base_url or (environ.get(base_env) or "").strip() or None
    if base_url is not None and (problem := url_problem(base_url)) is not None:
        where = "its base_url" if settings.base_url else base_env
        raise ConfigError(
            f"{label}: {where} {base_url!r} is not a server's URL: {problem}; set it to one such as {URL_EXAMPLE}"
        )
    if (problem := key_destination_problem(provider, settings, environ, label=label)) is not None:
        raise ConfigError(problem)
    key_env = settings.api_key_env or info.key_env
    api_key = (environ.get(key_env) or "").strip() or None
    remember_key(api_key, key_env)  # sent or not, no prompt may carry it
    if settings.key_only_to_configured and not sends_key(provider, base_url, environ):
        return None, base_url
    if api_key is None:
        raise ConfigError(_missing_key_message(info, label, key_env, base_url))
    return check_key(api_key, key_env, label), base_url


def origin(url: str) -> tuple[str, str, int | None] | None:
    """``(scheme, host, port)`` of a URL, the port filled in for http and https; None if it has no host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    return (parts.scheme.lower(), host, port) if host else None


def key_origins(provider: str, environ: Mapping[str, str] = os.environ) -> dict[tuple[str, str, int | None], str]:
    """Where ``provider``'s key may be sent, whoever names the base URL: its own endpoint, and the base URL
    the user set in the environment or ``.env``. Maps each origin (scheme, host, port) to what configured it."""
    info = PROVIDERS[provider]
    out = {origin(info.default_base_url or ""): f"{provider}'s own endpoint"}
    configured = (environ.get(info.base_url_env) or "").strip() if info.base_url_env else ""
    if info.base_url_env and configured and (found := origin(configured)) is not None:
        out.setdefault(found, info.base_url_env)
    return {k: v for k, v in out.items() if k is not None}


def sends_key(provider: str, base_url: str | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a base URL given by someone else receives ``provider``'s key: only if its scheme, host and port
    are those of one of :func:`key_origins` (None is the provider's own endpoint, or the configured one)."""
    if provider not in PROVIDERS or not PROVIDERS[provider].needs_key:
        return False
    if base_url is None:
        return True
    found = origin(base_url)
    return found is not None and found in key_origins(provider, environ)


def make_provider(
    name: str,
    settings: ProviderSettings | None = None,
    environ: Mapping[str, str] = os.environ,
    http_client: httpx2.AsyncClient | None = None,
    *,
    service_tier: ServiceTier = ServiceTier.STANDARD,
) -> Provider:
    """The provider for a model name, with credentials resolved, buying at ``service_tier``; raises
    :class:`ConfigError`.

    ``http_client`` is handed to the SDK (tests use it for mock transports) and stays the caller's
    to close; the mock provider ignores it.
    """
    provider, model = parse_model_name(name)
    if (problem := tier_problem(provider, service_tier)) is not None:
        raise ConfigError(f"{name}: {problem}")
    api_key, base_url = resolve_credentials(provider, settings, environ, model=name)
    create = PROVIDERS[provider].factory(name)
    return create(model, api_key=api_key, base_url=base_url, http_client=http_client, service_tier=service_tier)


def tier_problem(provider: str, tier: ServiceTier) -> str | None:
    """Why ``provider`` cannot be asked for ``tier`` (a sentence for the config's error), or None."""
    info = PROVIDERS.get(provider)
    if info is None or tier in info.tiers:
        return None
    if tier is ServiceTier.FLEX:
        return (
            f'service_tier: flex is an OpenAI tier (service_tier="flex"), and {provider} has none; use flex with '
            "openai/... models only, or leave service_tier out (standard)"
        )
    if tier is ServiceTier.BATCH:
        return (
            f"service_tier: batch buys answers through a provider's batch API (OpenAI's Batch API, Anthropic's "
            f"Message Batches), and {provider} has none; use batch with openai/... or anthropic/... models only, or "
            "leave service_tier out (standard)"
        )
    return f"service_tier: {tier.value} is not offered by {provider}"


def settings_for(
    name: str, settings: ProviderSettings | Mapping[str, ProviderSettings] | None
) -> ProviderSettings | None:
    """The settings that apply to one model: one object for all, or a mapping keyed by the full
    model name (two local servers, say) or else by provider name."""
    if settings is None or isinstance(settings, ProviderSettings):
        return settings
    provider = name.strip().partition("/")[0]
    return settings.get(name.strip()) or settings.get(provider)


def check_credentials(
    names: Iterable[str],
    settings: ProviderSettings | Mapping[str, ProviderSettings] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Validate every model name and its credentials up front, reporting all problems at once.

    Checks what can be checked offline: the name's shape, the provider, mock options, that a key
    is set and that a base URL looks like one. Whether the key is accepted shows at the first call.
    """
    problems: list[str] = []
    for name in dict.fromkeys(n.strip() for n in names):  # each model once, in the order given
        try:
            provider, model = parse_model_name(name)
            PROVIDERS[provider].check_model(model)
            resolve_credentials(provider, settings_for(name, settings), environ, model=name)
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        count = "one model" if len(problems) == 1 else f"{len(problems)} models"
        raise ConfigError(f"{count} cannot be used as configured; fix this before any game starts:", problems)


def _missing_key_message(info: ProviderInfo, label: str, key_env: str, base_url: str | None) -> str:
    where = f" at {base_url}" if base_url else ""
    message = f"{label}{where} needs an API key: set {key_env} in the environment or in .env (see .env.example)."
    return message + info.key_hint.format(key_env=key_env)


def _guess(name: str) -> str:
    """A likely full name for a bare model name, as a hint."""
    bare = name.strip()
    if bare.split("?")[0] in BEHAVIOURS:
        return f" (did you mean 'mock/{bare}'?)"
    for provider in PROVIDERS.values():
        if bare.lower().startswith(provider.model_prefixes):
            return f" (did you mean '{provider.name}/{bare}'?)"
    return ""
