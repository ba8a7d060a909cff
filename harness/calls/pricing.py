"""What a call costs: a price table of dollars per million tokens, matched by model name."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import ConfigError
from harness.util.userfiles import load_yaml, read_user_file, yaml_message

DEFAULT_PRICES = Path(__file__).resolve().parents[2] / "configs" / "prices.yaml"
MAX_PRICE = 100_000.0  # dollars per million tokens; the dearest models cost a few hundred


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    output: float


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
            for pattern, price in data.items():
                if (
                    not isinstance(price, dict)
                    or set(price) != {"input", "output"}
                    or not all(
                        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= MAX_PRICE
                        for v in price.values()
                    )
                ):
                    raise ConfigError(
                        f"{path}: {pattern}: give {{input: N, output: N}} in dollars per million tokens "
                        f"(from 0 to {MAX_PRICE:,.0f})"
                    )
                entries.append((str(pattern), Price(float(price["input"]), float(price["output"]))))
        return cls(entries)

    def price(self, model: str) -> Price | None:
        try:
            return self._matched[model]
        except KeyError:
            pass
        found = next((price for pattern, price in self.entries if fnmatch.fnmatchcase(model, pattern)), None)
        self._matched[model] = found
        return found

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """Dollars for one call, or None when the model has no price (the cost is then unknown)."""
        price = self.price(model)
        if price is None:
            return None
        return ((input_tokens or 0) * price.input + (output_tokens or 0) * price.output) / 1_000_000
