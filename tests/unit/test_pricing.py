"""The price table: a call's cost from its input, prompt-cache reads and writes and output at its tier, each
derived here by hand from the table's numbers; and malformed entries refused in one paragraph."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.calls.pricing import DEFAULT_PRICES, Price, PriceTable
from harness.errors import ConfigError
from harness.providers.tiers import CacheTtl, ServiceTier

TABLE = PriceTable.load(DEFAULT_PRICES)


def test_openai_cached_reads_at_the_cached_price_and_writes_at_the_input_price() -> None:
    # gpt-4o-mini: input 0.15, cached_input 0.075, output 0.60 $/Mtok; OpenAI gives no write price.
    # 2,000 input tokens of which 1,536 read from the cache, 10 output tokens:
    # 464 * 0.15 + 1536 * 0.075 + 10 * 0.60 = 69.6 + 115.2 + 6.0 = 190.8 micro-dollars.
    cost = TABLE.cost("openai/gpt-4o-mini", 2000, 10, cached_input_tokens=1536, cache_write_tokens=0)
    assert cost == pytest.approx(190.8e-6)
    # Without the cache: 2000 * 0.15 + 10 * 0.60 = 306 micro-dollars; the saving is 1536 * (0.15 - 0.075).
    assert TABLE.cost("openai/gpt-4o-mini", 2000, 10) == pytest.approx(306e-6)
    saving = TABLE.cache_saving("openai/gpt-4o-mini", 2000, 10, cached_input_tokens=1536, cache_write_tokens=None)
    assert saving == pytest.approx(115.2e-6)


def test_gpt_4_1_reads_its_cache_at_a_quarter() -> None:
    # gpt-4.1: input 2.00, cached 0.50, output 8.00: 1000 * 2 + 3000 * 0.5 + 100 * 8 = 4300 micro-dollars.
    assert TABLE.cost("openai/gpt-4.1-2025-04-14", 4000, 100, cached_input_tokens=3000) == pytest.approx(4300e-6)


def test_anthropic_all_input_convention_reads_and_writes() -> None:
    # Anthropic reports input_tokens=200 (not cached), cache_read_input_tokens=3000, cache_creation=1000: the
    # provider counts all of them as input (4200). claude-sonnet-4: input 3, read 0.30, 5-minute write 3.75,
    # 1-hour write 6.00, output 15: 200 * 3 + 3000 * 0.3 + 1000 * 3.75 + 50 * 15 = 600 + 900 + 3750 + 750.
    sonnet = "anthropic/claude-sonnet-4-5"
    cost = TABLE.cost(sonnet, 4200, 50, cached_input_tokens=3000, cache_write_tokens=1000)
    assert cost == pytest.approx(6000e-6)
    one_hour = TABLE.cost(sonnet, 4200, 50, cached_input_tokens=3000, cache_write_tokens=1000, ttl=CacheTtl.ONE_HOUR)
    assert one_hour == pytest.approx((600 + 900 + 6000 + 750) * 1e-6)
    # Uncached: 4200 * 3 + 50 * 15 = 13350; saved 13350 - 6000 = 7350.
    saving = TABLE.cache_saving(sonnet, 4200, 50, cached_input_tokens=3000, cache_write_tokens=1000)
    assert saving == pytest.approx(7350e-6)
    # A first call that only writes costs more than it would uncached: 1000 * (3.75 - 3) = 750 more.
    first = TABLE.cache_saving(sonnet, 1200, 0, cached_input_tokens=0, cache_write_tokens=1000)
    assert first == pytest.approx(-750e-6)


def test_tiers_price_at_their_own_rates_and_a_missing_tier_is_unknown() -> None:
    # claude-haiku-4-5 batch: input 0.50, read 0.05, write 0.625, output 2.50:
    # 100 * 0.5 + 800 * 0.05 + 100 * 0.625 + 20 * 2.5 = 50 + 40 + 62.5 + 50 = 202.5 micro-dollars.
    haiku = "anthropic/claude-haiku-4-5"
    batch = TABLE.cost(haiku, 1000, 20, cached_input_tokens=800, cache_write_tokens=100, tier=ServiceTier.BATCH)
    assert batch == pytest.approx(202.5e-6)
    # o4-mini flex: input 0.55, cached 0.1375, output 2.20: 500 * 0.55 + 1500 * 0.1375 + 10 * 2.2.
    flex = TABLE.cost("openai/o4-mini", 2000, 10, cached_input_tokens=1500, tier=ServiceTier.FLEX)
    assert flex == pytest.approx((275 + 206.25 + 22) * 1e-6)
    # gpt-4o-mini batch gives no cached price: cached reads are priced as batch input, 0.075.
    mini = TABLE.cost("openai/gpt-4o-mini", 2000, 10, cached_input_tokens=1536, tier=ServiceTier.BATCH)
    assert mini == pytest.approx((2000 * 0.075 + 10 * 0.30) * 1e-6)
    assert TABLE.cost("openai/gpt-4o-mini", 2000, 10, tier=ServiceTier.FLEX) is None  # no flex for gpt-4o-mini
    assert TABLE.cost("anthropic/claude-haiku-4-5", 10, 1, tier=ServiceTier.FLEX) is None
    assert TABLE.cost("nobody/model", 10, 1) is None


def test_the_shipped_table_halves_batch_and_prices_anthropic_cache_by_its_multipliers() -> None:
    """The shipped numbers follow the providers' stated rules (batch 50%; Anthropic 0.1x, 1.25x, 2x)."""
    for pattern, price in TABLE.entries:
        if pattern.startswith("anthropic/"):
            assert (price.cached_input, price.cache_write, price.cache_write_1h) == pytest.approx(
                (0.1 * price.input, 1.25 * price.input, 2 * price.input)
            )
        if price.batch is not None:
            assert (price.batch.input, price.batch.output) == pytest.approx((price.input / 2, price.output / 2))
        if price.flex is not None:
            assert (price.flex.input, price.flex.output) == pytest.approx((price.input / 2, price.output / 2))


def test_an_entry_without_cache_prices_prices_cache_tokens_as_input() -> None:
    table = PriceTable([("x/*", Price(input=2.0, output=4.0))])
    # 300 read + 200 written + 500 plain, all at 2.0, and 10 output at 4.0: 2040 micro-dollars.
    assert table.cost("x/m", 1000, 10, cached_input_tokens=300, cache_write_tokens=200) == pytest.approx(2040e-6)
    assert table.cache_saving("x/m", 1000, 10, cached_input_tokens=300, cache_write_tokens=200) == pytest.approx(0)


def test_a_file_with_cache_prices_and_tiers_loads(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("x/*:\n  input: 1\n  output: 2\n  cached_input: 0.5\n  batch: {input: 0.5, output: 1}\n")
    price = PriceTable.load(path).price("x/y")
    assert price == Price(1.0, 2.0, cached_input=0.5, batch=Price(0.5, 1.0))


@pytest.mark.parametrize(
    "entry",
    [
        "{input: 1}",
        "{input: 1, output: 2, cached: 0.5}",
        "{input: 1, output: 2, cached_input: -1}",
        "{input: 1, output: 2, flex: {input: 1}}",
        "{input: 1, output: 2, batch: 0.5}",
        "{input: 1, output: 2, batch: {input: 1, output: 1, flex: {input: 1, output: 1}}}",
        "{input: 1, output: 2, cache_write: true}",
        "{input: 1, output: 2, cache_write_1h: .nan}",
    ],
)
def test_a_malformed_entry_is_one_paragraph_naming_the_keys(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(f"x/*: {entry}\n")
    with pytest.raises(ConfigError) as raised:
        PriceTable.load(path)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{path}: x/*: give {{input: N, output: N}}")
    for key in ("cached_input", "cache_write", "cache_write_1h", "flex:", "batch:"):
        assert key in message
