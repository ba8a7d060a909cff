"""What a call costs: a price table of dollars per million tokens, matched by model name.

An entry prices a model's input and output tokens and, optionally, the tokens read from the provider's prompt
cache (``cached_input``) and written to it (``cache_write``, ``cache_write_1h`` for Anthropic's one-hour
writes), at the standard tier and, optionally, at the ``flex`` and ``batch`` tiers (:class:`ServiceTier`). A
cache price the entry does not give is the input price: OpenAI writes its cache at no extra cost, so an
OpenAI entry gives no write price; a tier the entry does not give has no price (the cost is unknown).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError
from harness.providers.tiers import CacheTtl, ServiceTier
from harness.util.userfiles import load_yaml, read_user_file, yaml_message

DEFAULT_PRICES = Path(__file__).resolve().parents[2] / "configs" / "prices.yaml"
MAX_PRICE = 100_000.0  # dollars per million tokens; the dearest models cost a few hundred

_RATES = {"input", "output", "cached_input", "cache_write", "cache_write_1h"}
_REQUIRED = {"input", "output"}
_TIERS = {ServiceTier.FLEX.value, ServiceTier.BATCH.value}


@dataclass(frozen=True, slots=True)
class Price:
    """One model's dollars per million tokens at one tier; ``flex`` and ``batch``: its prices at those tiers
    (None: the model is not sold there, or the table does not say)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None
    flex: Price | None = None
    batch: Price | None = None

    def at(self, tier: ServiceTier) -> Price | None:
        """The prices at ``tier``; None when the table has none there."""
        if tier is ServiceTier.FLEX:
            return self.flex
        if tier is ServiceTier.BATCH:
            return self.batch
        return self

    def dollars(self, input_tokens: int, output_tokens: int, cached: int, written: int, ttl: CacheTtl) -> float:
        """Dollars for these tokens at these prices. ``input_tokens`` counts every input token, read from the
        cache or written to it too (as :class:`~harness.providers.base.Completion` does on every provider), so
        the rest, neither read nor written, is priced as input (never below 0, should a server report more
        cache tokens than input)."""
        write = self.cache_write_1h if ttl is CacheTtl.ONE_HOUR else self.cache_write
        plain = max(input_tokens - cached - written, 0)
        return (
            plain * self.input
            + cached * (self.input if self.cached_input is None else self.cached_input)
            + written * (self.input if write is None else write)
            + output_tokens * self.output
        ) / 1_000_000


class PriceTable:
    """Patterns (``openai/gpt-4o-mini*``) to prices; the first matching pattern wins.

    A run prices every call of a model with the same entry, so each model name is matched once."""

    def __init__(self, entries: list[tuple[str, Price]]) -> None:
        self.entries = entries
        self._matched: dict[str, Price | None] = {}

    @classmethod
    def load(cls, *paths: Path) -> PriceTable:
        """Entries of each file in order (a user's file first, then the shipped table)."""
        entries: list[tuple[str, Price]] = []
        for path in paths:
            try:
                data = load_yaml(read_user_file(path, "price table")) or {}
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else yaml_message(exc)
                raise ConfigError(f"cannot read the price table {path}: {reason}") from None
            if not isinstance(data, dict):
                raise ConfigError(
                    f"{path} is not a price table: it must map model patterns to {{input: $/Mtok, output: $/Mtok}}, "
                    f"as {DEFAULT_PRICES.name} in configs/ does"
                )
            entries += [(str(pattern), _entry(path, pattern, price)) for pattern, price in data.items()]
        return cls(entries)

    def price(self, model: str) -> Price | None:
        try:
            return self._matched[model]
        except KeyError:
            pass
        found = next((price for pattern, price in self.entries if fnmatch.fnmatchcase(model, pattern)), None)
        self._matched[model] = found
        return found

    def cost(
        self,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cached_input_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        tier: ServiceTier = ServiceTier.STANDARD,
        ttl: CacheTtl = CacheTtl.FIVE_MINUTES,
    ) -> float | None:
        """Dollars for one call at ``tier``, or None when the model has no price there (the cost is then
        unknown). ``input_tokens`` counts every input token, those read from the provider's prompt cache
        (``cached_input_tokens``) and written to it (``cache_write_tokens``, lasting ``ttl``) among them."""
        price = self.price(model)
        at_tier = None if price is None else price.at(tier)
        if at_tier is None:
            return None
        return at_tier.dollars(
            input_tokens or 0, output_tokens or 0, cached_input_tokens or 0, cache_write_tokens or 0, ttl
        )

    def cache_saving(
        self,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cached_input_tokens: int | None,
        cache_write_tokens: int | None,
        tier: ServiceTier = ServiceTier.STANDARD,
        ttl: CacheTtl = CacheTtl.FIVE_MINUTES,
    ) -> float | None:
        """Dollars the provider's prompt cache saved on these tokens: their cost with every input token at the
        input price, less their cost as read and written (negative when writes cost more than reads saved, as
        an Anthropic write does until it is read). None when the model has no price at ``tier``."""
        full = self.cost(model, input_tokens, output_tokens, tier=tier)
        paid = self.cost(
            model,
            input_tokens,
            output_tokens,
            cached_input_tokens=cached_input_tokens,
            cache_write_tokens=cache_write_tokens,
            tier=tier,
            ttl=ttl,
        )
        return None if full is None or paid is None else full - paid


def _entry(path: Path, pattern: object, price: object) -> Price:
    """One entry of a price table file, or a ConfigError naming the keys it may have."""
    if isinstance(price, dict) and _rates_ok(price, allow_tiers=True):
        tiers = {tier: _rates(price[tier]) for tier in _TIERS if tier in price}
        return _rates(price, flex=tiers.get("flex"), batch=tiers.get("batch"))
    raise ConfigError(
        f"{path}: {pattern}: give {{input: N, output: N}} in dollars per million tokens (from 0 to "
        f"{MAX_PRICE:,.0f}), and optionally cached_input (tokens read from the prompt cache), cache_write and "
        "cache_write_1h (tokens written to it, for 5 minutes and for an hour; absent: priced as input), and "
        "flex: and batch: tiers, each a map of the same price keys with input and output required"
    )


def _rates_ok(price: dict[Any, Any], *, allow_tiers: bool) -> bool:
    """Whether ``price`` holds input and output and only known keys, each price a number in range (and, at
    the top level, tiers that are prices themselves)."""
    allowed = _RATES | (_TIERS if allow_tiers else set())
    if not (_REQUIRED <= set(price) <= allowed):
        return False
    for key, value in price.items():
        if key in _TIERS:
            if not (isinstance(value, dict) and _rates_ok(value, allow_tiers=False)):
                return False
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_PRICE:
            return False
    return True


def _rates(price: dict[str, Any], *, flex: Price | None = None, batch: Price | None = None) -> Price:
    """The prices of an entry or tier (validated by :func:`_rates_ok`), with its tiers' prices."""

    def rate(key: str) -> float | None:
        return float(price[key]) if key in price else None

    return Price(
        float(price["input"]),
        float(price["output"]),
        cached_input=rate("cached_input"),
        cache_write=rate("cache_write"),
        cache_write_1h=rate("cache_write_1h"),
        flex=flex,
        batch=batch,
    )
