"""The pre-run estimate: what a mock run of the same plan then records (input tokens within 10%: the estimate
counts prompts as the mock does, so they agree far closer), a geometric horizon summed by each round's chance
(the closed-form expected length), the provider's prompt cache as the layout allows, and --max-cost's refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.calls.pricing import DEFAULT_PRICES, PriceTable
from harness.config.plan import summarize
from harness.config.presets.evaluation import eval_config
from harness.engine.estimate import _reach, estimate
from harness.engine.runner import run_experiment
from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon
from harness.providers.tiers import ServiceTier
from harness.store.catalog import open_run

PRICES = PriceTable.load(DEFAULT_PRICES)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"answer_format": "json", "persona": "cautious", "rounds": 17},
        {"comprehension": [1, 4, 9], "rounds": 9},
        {"prompt_layout": "classic", "rounds": 25},
    ],
)
def test_the_estimate_is_what_a_mock_run_then_records(tmp_path: Path, options: dict[str, object]) -> None:
    settings: dict[str, object] = {"rounds": 12, "opponents": ["TFT", "ALLD", "RAND"], "replicates": 2, **options}
    config = eval_config("mock/tft", **settings)  # type: ignore[arg-type]
    (est,) = estimate(config)
    result = run_experiment(config, results_dir=tmp_path, run_id="m")
    with open_run(tmp_path, "m") as cat:
        (row,) = cat.records("SELECT count(*) AS calls, sum(input_tokens) AS input FROM calls")
    assert est.calls == row["calls"]  # a mock that always answers: no re-asks
    assert abs(est.input_tokens - row["input"]) <= 0.10 * row["input"], (est.input_tokens, row["input"])
    assert abs(est.input_tokens - row["input"]) <= 0.02 * row["input"]  # in fact far closer
    assert result.status.value == "complete"


def test_the_plan_counts_comprehension_questions_as_the_estimate_does() -> None:
    """``--dry-run``'s model calls count the questions: 3 opponents x 2 replicates of 9 rounds with questions
    before rounds 1, 4 and 9 (5 + 6 + 6 = 17 a game) are 6 x (9 + 17) = 156 calls; with a geometric horizon of
    stop probability 1/2 and questions before rounds 1 and 3, a game is expected to make 2 moves and answer
    5 + 6/4 = 6.5 questions (round 3 is played one game in four)."""
    fixed = eval_config("mock/tft", rounds=9, opponents=["TFT", "ALLD", "RAND"], replicates=2, comprehension=[1, 4, 9])
    assert summarize(fixed).model_calls == 156 == estimate(fixed)[0].calls
    geometric = eval_config("mock/tft", stop_prob=0.5, opponents=["TFT", "ALLD", "RAND"], replicates=2,
                            comprehension=[1, 3])  # fmt: skip
    assert summarize(geometric).model_calls == pytest.approx(6 * (2 + 6.5))
    assert estimate(geometric)[0].calls == pytest.approx(6 * (2 + 6.5), rel=1e-6)


def test_a_geometric_horizon_is_summed_by_each_rounds_chance() -> None:
    for horizon in (GeometricHorizon(0.1), GeometricHorizon(0.05, 37), GeometricHorizon(0.5, 3)):
        assert sum(_reach(horizon)) == pytest.approx(horizon.expected_length(), rel=1e-6)
    assert list(_reach(FixedHorizon(4))) == [1.0, 1.0, 1.0, 1.0]


def test_the_cache_reads_what_consecutive_prompts_share_once_it_is_long_enough() -> None:
    long = estimate(eval_config("openai/gpt-4o-mini", opponents=["TFT"], rounds=100, replicates=1))[0]
    short = estimate(eval_config("openai/gpt-4o-mini", opponents=["TFT"], rounds=20, replicates=1))[0]
    classic = estimate(eval_config("openai/gpt-4o-mini", opponents=["TFT"], rounds=100, replicates=1,
                                   prompt_layout="classic"))[0]  # fmt: skip
    claude = estimate(eval_config("anthropic/claude-sonnet-4-5", opponents=["TFT"], rounds=100, replicates=1))[0]
    assert short.cached_tokens == 0  # a 20-round game's prompts stay under 1,024 tokens
    assert classic.cached_tokens == 0  # each prompt starts with its round number
    assert 0.6 < long.cached_tokens / long.input_tokens < 0.8  # the benchmark measured 69.6%
    assert long.cached_tokens % 128 == 0 and long.written_tokens == 0  # OpenAI: 128-token steps, free writes
    assert 0.6 < claude.cached_tokens / claude.input_tokens < 0.85 and claude.written_tokens > 0
    cached = long.cost(PRICES, ServiceTier.STANDARD, cached=True)
    plain = long.cost(PRICES, ServiceTier.STANDARD, cached=False)
    assert cached is not None and plain is not None and cached < plain
    by_hand = ((long.input_tokens - long.cached_tokens) * 0.15 + long.cached_tokens * 0.075
               + long.output_tokens * 0.60) / 1e6  # gpt-4o-mini's listed prices  # fmt: skip
    assert cached == pytest.approx(by_hand, rel=1e-6)
    assert long.cost(PRICES, ServiceTier.FLEX, cached=True) is None  # gpt-4o-mini is not sold at flex


def test_max_cost_refuses_a_run_estimated_above_it_before_any_call() -> None:
    from harness.cli.estimate_view import refuse_over_budget

    config = eval_config("openai/gpt-4o-mini", opponents=["TFT", "ALLD"], rounds=100, replicates=3)
    with pytest.raises(ConfigError, match=r"estimated at \$0\.\d+ .*above --max-cost \$0\.01.*--despite-estimate"):
        refuse_over_budget(config, None, PRICES, 0.01)
    refuse_over_budget(config, None, PRICES, 5.0)  # well within: nothing said


def test_cache_ttl_is_anthropics_and_prices_the_writes_at_an_hour() -> None:
    from harness.config import parse_experiment
    from harness.providers.tiers import CacheTtl

    def config(agent: dict[str, object]) -> dict[str, object]:
        return {"horizon": {"n_rounds": 100}, "experiment": {"replicates": 1, "conditions": [
            {"name": "x", "agent_a": agent, "agent_b": {"policy": "TFT"}}]}}  # fmt: skip

    with pytest.raises(ConfigError, match="cache_ttl is Anthropic's"):
        parse_experiment(config({"model": "openai/gpt-4o-mini", "cache_ttl": "1h"}))
    hour = parse_experiment(config({"model": "anthropic/claude-sonnet-4-5", "cache_ttl": "1h"}))
    five = parse_experiment(config({"model": "anthropic/claude-sonnet-4-5"}))
    assert hour.experiment.conditions[0].agent_a.cache_ttl is CacheTtl.ONE_HOUR  # type: ignore[union-attr]
    (slow,), (fast,) = estimate(hour), estimate(five)
    assert slow.written_tokens == fast.written_tokens > 0
    # Sonnet: writes 3.75 (5 minutes) or 6.00 (an hour) dollars per million tokens; all else alike.
    difference = slow.cost(PRICES, ServiceTier.STANDARD, cached=True) - fast.cost(
        PRICES, ServiceTier.STANDARD, cached=True
    )  # type: ignore[operator]
    assert difference == pytest.approx(round(fast.written_tokens) * (6.00 - 3.75) / 1e6)


def test_a_games_rounds_are_as_far_apart_as_the_games_in_flight_share_the_rate() -> None:
    one_rpm = eval_config("anthropic/claude-sonnet-4-5", opponents=["TFT", "ALLD"], rounds=100, replicates=3,
                          limits={"rpm": 1})  # fmt: skip
    (est,) = estimate(one_rpm)
    assert est.games == 6 and est.round_gap() == pytest.approx(6 / (1 / 60))  # 6 games, a call a minute: 6 min
    (quick,) = estimate(eval_config("anthropic/claude-sonnet-4-5", opponents=["TFT"], rounds=10, replicates=1))
    assert quick.round_gap() == pytest.approx(1.0)  # one game: an answer's latency
