"""Checks made once before a run plays: every model is known to its provider, has its key, sends that key
only where it may go, and has a price when a budget is set. Shared by the runner, the CLI and the dashboard."""

from __future__ import annotations

from collections.abc import Iterator

from harness.calls.pricing import PriceTable
from harness.config import ExperimentConfig, ModelAgentConfig
from harness.config.engine_options import EngineOptions
from harness.errors import ConfigError
from harness.providers.registry import ProviderSettings, check_credentials, key_destination_problem
from harness.providers.tiers import ServiceTier


def _model_settings(config: ExperimentConfig) -> Iterator[tuple[ModelAgentConfig, ProviderSettings]]:
    """Each distinct model player (model, base URL, key variable, key rule) with its provider settings."""
    seen: set[str] = set()
    for cond in config.experiment.conditions:
        for agent in (cond.agent_a, cond.agent_b):
            if isinstance(agent, ModelAgentConfig):
                key = f"{agent.model}|{agent.base_url}|{agent.api_key_env}|{agent.key_only_to_configured}|{agent.judge}"
                if key in seen:
                    continue
                seen.add(key)
                yield (
                    agent,
                    ProviderSettings(
                        base_url=agent.base_url,
                        api_key_env=agent.api_key_env,
                        key_only_to_configured=bool(agent.key_only_to_configured),
                    ),
                )


def check_models(config: ExperimentConfig) -> None:
    """Every model's name and key, and where the key goes, checked before anything starts (all problems at once)."""
    problems: list[str] = []
    for agent, settings in _model_settings(config):
        try:
            check_credentials([agent.model], settings)
        except ConfigError as exc:
            problems.extend(exc.problems or [str(exc)])
        if agent.judge is not None:  # reached like the player when of its provider (see ModelPlayers._judge)
            same = agent.judge.partition("/")[0] == agent.model.strip().partition("/")[0]
            try:
                check_credentials([agent.judge], settings if same else None)
            except ConfigError as exc:
                problems.extend(f"{agent.label}'s judge (parse.judge): {p}" for p in exc.problems or [str(exc)])
    if problems:
        raise ConfigError("some models cannot be used as configured; fix this before any game starts:", problems)


def check_key_destinations(config: ExperimentConfig) -> None:
    """Where the keys the file names (``api_key_env``) would go, checked without reading them (``pdbench
    validate``): a key named by a file goes only where the user's own configuration or command line says
    (see :func:`harness.providers.registry.key_destination_problem`)."""
    problems = [
        problem
        for agent, settings in _model_settings(config)
        if (problem := key_destination_problem(agent.model.strip().partition("/")[0], settings, label=agent.model))
        is not None
    ]
    if problems:
        raise ConfigError("a key named by this file would go to a server it names; nothing was sent:", problems)


def check_prices(config: ExperimentConfig, prices: PriceTable) -> None:
    """With a cost limit, every model must have a price, or the limit would silently not apply."""
    missing = sorted(
        {
            agent.model
            for cond in config.experiment.conditions
            for agent in (cond.agent_a, cond.agent_b)
            if isinstance(agent, ModelAgentConfig) and prices.price(agent.model) is None
        }
    )
    if missing:
        raise ConfigError(
            f"--max-cost needs a price for every model, and {', '.join(missing)} "
            f"{'has' if len(missing) == 1 else 'have'} none in the price table. Add a line such as "
            f"'{missing[0]}: {{input: 0.15, output: 0.60}}' (dollars per million tokens) to a YAML file and "
            f"pass it with --prices FILE."
        )


def batch_models(config: ExperimentConfig) -> list[str]:
    """The models of the run's players that buy their answers in batches (``service_tier: batch``), sorted."""
    return sorted(
        {
            agent.model
            for cond in config.experiment.conditions
            for agent in (cond.agent_a, cond.agent_b)
            if isinstance(agent, ModelAgentConfig) and agent.service_tier is ServiceTier.BATCH
        }
    )


def check_batch(config: ExperimentConfig, engine: EngineOptions | None) -> None:
    """Batch mode stores its batches in the response cache until they are collected, so that a killed run picks
    them up rather than buying them again: ``--no-cache`` with a batch player is refused before anything starts."""
    batched = batch_models(config)
    if batched and (engine is None or engine.cache_path is None):
        raise ConfigError(
            f"{', '.join(batched)} {'plays' if len(batched) == 1 else 'play'} in batch mode (service_tier: batch), "
            "which keeps each submitted batch in the response cache until its answers are recorded, so that a "
            "run that is stopped or killed collects them instead of paying for them again. Leave out --no-cache, or "
            "play at the standard tier."
        )
