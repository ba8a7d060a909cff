"""What a provider is, known before one is made: its name, whether it answers offline, where its key and
base URL come from, its own endpoint, and the class that makes it.

The registry (:mod:`harness.providers.registry`) holds one :class:`ProviderInfo` per provider, and callers
ask it (``info.offline``, ``info.needs_key``, ``info.default_base_url``) rather than compare names. The class
is imported only when a provider is made (:meth:`ProviderInfo.factory`), so that a run of mock models alone,
or the command line's start, never imports an SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from harness.errors import ConfigError
from harness.providers.tiers import ServiceTier

if TYPE_CHECKING:
    import httpx2

    from harness.providers.base import Provider


class ProviderFactory(Protocol):
    """How a provider class is made: its ``create`` classmethod, given what the registry resolved."""

    def __call__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        http_client: httpx2.AsyncClient | None,
        service_tier: ServiceTier = ServiceTier.STANDARD,
    ) -> Provider: ...


def _any_model(model: str) -> None:
    """A served provider takes any model name: the server says whether it has it."""


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """One provider, as the registry knows it before one is made.

    ``offline``: answers are computed on this machine, so it needs no key and no server, costs nothing and is
    neither cached nor priced (the mock). ``key_env`` and ``base_url_env``: the environment variables its key
    and base URL are read from (None: it needs neither). ``default_base_url``: its own endpoint, where its key
    always may go. ``provider_class``: ``module:Class``, imported when one is made; ``sdk`` and
    ``sdk_version``: the package it needs, named when that import fails. ``check_model``: raises
    :class:`ConfigError` for a model name (after ``provider/``) it cannot serve, offline. ``key_hint``: said
    after a missing key, with ``{key_env}`` filled in. ``model_prefixes``: how bare model names that suggest
    this provider begin (``gpt`` for openai). ``tiers``: the service tiers its requests may be bought at
    (:class:`ServiceTier`; flex is OpenAI's alone).
    """

    name: str
    provider_class: str
    offline: bool = False
    key_env: str | None = None
    base_url_env: str | None = None
    default_base_url: str | None = None
    sdk: str = ""
    sdk_version: str = ""
    check_model: Callable[[str], object] = _any_model
    key_hint: str = ""
    model_prefixes: tuple[str, ...] = ()
    tiers: frozenset[ServiceTier] = frozenset({ServiceTier.STANDARD})

    @property
    def needs_key(self) -> bool:
        """Whether requests carry an API key (read from ``key_env``, or the variable a config names)."""
        return self.key_env is not None

    def factory(self, label: str) -> ProviderFactory:
        """The ``create`` of this provider's class, importing it (and its SDK) now; ``label`` (the model name
        the user typed) only makes the error say what could not be made."""
        module, _, name = self.provider_class.partition(":")
        try:
            cls = getattr(importlib.import_module(module), name)
        except ImportError as exc:
            requirement = f"{self.sdk}{self.sdk_version}"
            raise ConfigError(
                f"{label} needs the {self.sdk!r} package ({requirement}), which could not be imported ({exc}): "
                f"install it with pip install '{requirement}'"
            ) from exc
        return cast("ProviderFactory", cls.create)


OPENAI = ProviderInfo(
    name="openai",
    provider_class="harness.providers.openai:OpenAIProvider",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    default_base_url="https://api.openai.com/v1",
    sdk="openai",
    sdk_version=">=3",
    key_hint=(
        " For an OpenAI-compatible server that does not check keys (vLLM, llama.cpp, Ollama), set "
        "OPENAI_BASE_URL (or --base-url) to its URL and {key_env} to any placeholder, e.g. {key_env}=none."
    ),
    model_prefixes=("gpt", "chatgpt", "o1", "o3", "o4"),
    tiers=frozenset({ServiceTier.STANDARD, ServiceTier.FLEX, ServiceTier.BATCH}),
)
ANTHROPIC = ProviderInfo(
    name="anthropic",
    provider_class="harness.providers.anthropic:AnthropicProvider",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    default_base_url="https://api.anthropic.com",
    sdk="anthropic",
    sdk_version=">=2",
    key_hint=" Keys are created at https://console.anthropic.com/settings/keys.",
    model_prefixes=("claude",),
    tiers=frozenset({ServiceTier.STANDARD, ServiceTier.BATCH}),
)
