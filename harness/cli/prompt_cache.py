"""What the provider's prompt cache did for a run, in a line per model: the share of input tokens it read and
the dollars that saved against the same tokens at the input price.

The scorecard and ``pdbench report`` print it under a run of which some call reported the provider's cache
(none for mock models or files written before schema 7, which print nothing new). The saving is priced again
from the shipped price table (``configs/prices.yaml``), as the recorded costs do not keep what the tokens would
have cost without the cache.
"""

from __future__ import annotations

from typing import Any

from harness.calls.pricing import DEFAULT_PRICES, PriceTable
from harness.providers.tiers import ServiceTier
from harness.util.plural import plural


def prompt_cache_lines(totals: list[dict[str, Any]], prices: PriceTable | None = None) -> list[str]:
    """A line per model of ``totals`` (:func:`harness.store.run_summary.prompt_cache_totals` rows)."""
    if not totals:
        return []
    table = prices if prices is not None else PriceTable.load(DEFAULT_PRICES)
    lines = []
    for row in totals:
        name = f"{row['provider']}/{row['model']}"
        read, written, total = row["cached_input_tokens"], row["cache_write_tokens"], row["input_tokens"] or 0
        share = f"{read / total:.1%}" if total else "none"
        tier = ServiceTier(row["service_tier"]) if row.get("service_tier") else ServiceTier.STANDARD
        saving = table.cache_saving(
            name, total, row["output_tokens"], cached_input_tokens=read, cache_write_tokens=written, tier=tier
        )
        wrote = f", {plural(written, 'token')} written to it" if written else ""
        worth = f"saving ${saving:,.4f} against the input price" if saving is not None else "saving unknown (no price)"
        lines.append(
            f"[bold]Prompt cache[/bold] {name}: {share} of {plural(total, 'input token')} read from the "
            f"provider's cache{wrote}; {worth}"
        )
    return lines
