"""``pdbench eval``: one model against a panel of classic strategies, as an ordinary experiment."""

from __future__ import annotations

from typing import Any

from harness.config import ExperimentConfig, GameOptions, options_config
from harness.config.presets.panels import DEFAULT_PANEL
from harness.config.presets.players import check_players
from harness.errors import ConfigError
from harness.players.model.prompts.context import PromptLayout
from harness.providers.tiers import ServiceTier


def eval_config(
    model: str,
    *,
    opponents: list[str] | None = None,
    rounds: int | None = None,
    stop_prob: float | None = None,
    max_rounds: int | None = None,
    replicates: int = 3,
    noise: float = 0.0,
    observation_noise: float = 0.0,
    payoff_matrix: dict[str, Any] | None = None,
    persona: str | None = None,
    temperature: float | None = None,
    seed: int = 0,
    base_url: str | None = None,
    limits: dict[str, Any] | None = None,
    comprehension: list[int] | None = None,
    answer_format: str | None = None,
    prompt_layout: str | None = None,
    service_tier: str | None = None,
) -> ExperimentConfig:
    """The model as player A against each opponent, ``replicates`` games each; with ``comprehension``, the
    model is asked the rules before its move in those rounds (see harness.players.model.comprehension);
    ``answer_format`` is its ``prompts.answer_format`` (free, json, label or structured), ``prompt_layout`` its
    ``prompts.layout`` (cached or classic), ``service_tier`` its ``service_tier`` (standard or flex)."""
    panel = list(opponents or DEFAULT_PANEL)
    check_players(panel, option="--opponents", models=False)
    agent: dict[str, Any] = {"model": model}
    for key, value in (("persona", persona), ("temperature", temperature), ("base_url", base_url)):
        if value is not None:
            agent[key] = value
    if limits:
        agent["limits"] = limits
    if comprehension:
        agent["comprehension"] = {"rounds": comprehension}
    if prompt_layout is not None and prompt_layout not in {layout.value for layout in PromptLayout}:
        raise ConfigError(
            f"--prompt-layout is cached (each round's prompt extends the last one's) or classic (PDBench 0.1's "
            f"prompts); got {prompt_layout!r}"
        )
    if service_tier is not None:
        agent["service_tier"] = checked_tier(service_tier)
    prompts = {k: v for k, v in (("answer_format", answer_format), ("layout", prompt_layout)) if v is not None}
    if prompts:
        agent["prompts"] = prompts
    conditions = [{"name": f"vs_{o.strip().upper()}", "agent_a": dict(agent), "agent_b": {"policy": o}} for o in panel]
    options = GameOptions(rounds, stop_prob, max_rounds, replicates, noise, seed, payoff_matrix, observation_noise)
    return options_config(
        "eval", conditions, options, default_rounds=20, source="the eval options", fix_hint="see `pdbench eval --help`"
    )


def checked_tier(text: str) -> str:
    """``--service-tier``: a tier's name (whether the model's provider offers it, the config checks)."""
    if text not in {tier.value for tier in ServiceTier}:
        raise ConfigError(
            "--service-tier is standard (the default), flex (OpenAI's half-price, slower tier) or batch (OpenAI's "
            f"Batch API or Anthropic's Message Batches: half price, answers within 24 h); got {text!r}"
        )
    return text


def comprehension_rounds(text: str | None) -> list[int] | None:
    """``--comprehension 1,25,50``: the rounds before whose move the model is asked the rules."""
    if text is None:
        return None
    try:
        rounds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(
            f"--comprehension takes round numbers separated by commas, e.g. 1,25,50; got {text!r}"
        ) from None
    if not rounds:
        raise ConfigError("--comprehension needs at least one round, e.g. --comprehension 1 (before the first move)")
    return rounds
