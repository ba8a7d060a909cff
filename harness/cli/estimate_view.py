"""The pre-run estimate as ``--dry-run`` prints it, and ``--max-cost``'s refusal of a run estimated above it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.cli.base import err, out
from harness.errors import ConfigError
from harness.util.plural import plural

CACHE_5M_S = 300.0
"""Anthropic's default prompt-cache lifetime: a prefix not read again within it is gone."""

if TYPE_CHECKING:
    from harness.calls.pricing import PriceTable
    from harness.config import ExperimentConfig


def print_estimate(config: ExperimentConfig, replicates: int | None, prices: PriceTable) -> bool:
    """Per model: calls, tokens, cost in each mode with and without the provider's prompt cache, time; then
    whether the keys a run needs are set. Returns whether they are."""
    from harness.engine.estimate import estimate
    from harness.providers.registry import is_offline
    from harness.providers.tiers import CacheTtl, ServiceTier

    estimates = estimate(config, replicates)
    if not estimates:
        return True
    out.print("Estimate (nothing sent; prompts counted at about 4 characters a token, output at a typical reply):")
    for est in estimates:
        reask = f" (up to {est.calls + est.reask_calls:,.0f} if every move were re-asked)" if est.reask_calls else ""
        out.print(f"  {est.model}: {est.calls:,.0f} calls{reask}", highlight=False)
        cached = f", {est.cached_tokens:,.0f} of them from the provider's cache" if est.cached_tokens else ""
        written = f" ({est.written_tokens:,.0f} written to it)" if est.written_tokens else ""
        out.print(
            f"    input {est.input_tokens:,.0f} tokens{cached}{written}; output about {est.output_tokens:,.0f} "
            f"(at most {est.output_tokens_max:,.0f} at max_tokens)",
            highlight=False,
        )
        if is_offline(est.model):
            out.print("    cost: nothing (it plays offline, on this machine)", highlight=False)
            continue
        rows = []
        for tier in ServiceTier:
            plain, cache = est.cost(prices, tier, cached=False), est.cost(prices, tier, cached=True)
            mark = " (this run's tier)" if tier is est.tier and tier is not ServiceTier.STANDARD else ""
            rows.append(f"{tier.value}{mark} {_dollars(plain)}" + (f" / {_dollars(cache)}" if cache != plain else ""))
        most = est.cost(prices, est.tier, cached=True, most=True)
        out.print(
            f"    cost (without / with the prompt cache): {'; '.join(rows)}; at most {_dollars(most)} "
            f"{est.tier.value} if every answer took max_tokens",
            highlight=False,
        )
        if est.tier is ServiceTier.BATCH:
            out.print(
                f"    time: {est.batches:,.0f} batches one after another (a round of every game each, one more in each "
                "round with questions); a batch typically takes minutes, at most 24 h",
                highlight=False,
            )
            continue
        out.print(f"    time: at least {_duration(est.seconds())} at the configured limits", highlight=False)
        gap = est.round_gap()
        slow = est.model.startswith("anthropic/") and est.cached_tokens and gap > CACHE_5M_S
        if slow and est.ttl is CacheTtl.FIVE_MINUTES:
            err.print(
                f"[yellow]warning:[/yellow] {est.model}: at these limits a game's rounds come about "
                f"{_duration(gap)} apart, longer than the 5 minutes Anthropic keeps a cached prefix, so the "
                "cache would be written and not read; set cache_ttl: 1h on the model (writes cost 2x the input "
                "price instead of 1.25x) or raise the limits",
                highlight=False,
            )
    return _keys_set(config)


def warn_unpriced_cache(config: ExperimentConfig, prices: PriceTable) -> None:
    """Warn of a paid model whose price has no cached-input price: the prompt cache's reads would be costed at
    the full input price, so the recorded cost (and ``--max-cost``) would overstate what the provider bills."""
    from harness.config.agents import ModelAgentConfig
    from harness.providers.registry import is_offline

    models = {
        agent.model
        for cond in config.experiment.conditions
        for agent in (cond.agent_a, cond.agent_b)
        if isinstance(agent, ModelAgentConfig) and not is_offline(agent.model)
    }
    for model in sorted(models):
        price = prices.price(model)
        if price is not None and price.cached_input is None:
            err.print(
                f"[yellow]warning:[/yellow] {model}: the price table gives no cached_input price, so tokens read "
                "from the provider's prompt cache are costed at the full input price and the recorded cost "
                "overstates the bill; add cached_input (dollars per million tokens) to its entry",
                highlight=False,
            )


def refuse_over_budget(config: ExperimentConfig, replicates: int | None, prices: PriceTable, max_cost: float) -> None:
    """Refuse, before any call, a run whose estimated cost (at its tier, the prompt cache as the layout allows,
    typical output) exceeds ``max_cost``; ``--despite-estimate`` starts it anyway (it stops at the limit). The
    estimate assumes nothing is in the response cache; ``--max-cost 0``, which plays from the cache alone, is
    never refused."""
    if max_cost == 0:
        return
    from harness.engine.estimate import estimate

    costs = [(est, est.cost(prices, est.tier, cached=True)) for est in estimate(config, replicates)]
    total = sum(c for _, c in costs if c is not None)
    if total > max_cost:
        parts = ", ".join(f"{est.model} {_dollars(c)}" for est, c in costs if c)
        raise ConfigError(
            f"this run is estimated at {_dollars(total)} ({parts}), above --max-cost ${max_cost:g}, so it would stop "
            "partway with games unplayed. `--dry-run` shows the estimate; raise --max-cost, play fewer games, or "
            "add --despite-estimate to start it anyway (it stops starting calls at the limit; answers already in "
            "the response cache, which the estimate does not count, cost nothing)"
        )


def _keys_set(config: ExperimentConfig) -> bool:
    from harness.engine.preflight import check_models

    try:
        check_models(config)
    except ConfigError as exc:
        problems = exc.problems or [str(exc)]
        err.print(f"[red]A run would not start:[/red] {plural(len(problems), 'problem')} with the models' keys:")
        for problem in problems:
            err.print(f"  - {problem}", highlight=False)
        return False
    out.print("Keys: every model's key is set (whether it is accepted shows at the first call).")
    return True


def _dollars(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:,.2f}" if value >= 1 else f"${value:,.4f}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
