"""``pdbench eval``: one model against a panel of classic strategies, as an ordinary experiment."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.config import ExperimentConfig, GameOptions, ModelAgentConfig, options_config
from harness.errors import ConfigError
from harness.panels import DEFAULT_PANEL
from harness.players import check_players
from harness.pricing import PriceTable
from harness.providers.registry import ProviderSettings, check_credentials, key_destination_problem


def eval_config(
    model: str,
    *,
    opponents: list[str] | None = None,
    rounds: int | None = None,
    stop_prob: float | None = None,
    max_rounds: int | None = None,
    replicates: int = 3,
    noise: float = 0.0,
    persona: str | None = None,
    temperature: float | None = None,
    seed: int = 0,
    base_url: str | None = None,
    limits: dict[str, Any] | None = None,
    comprehension: list[int] | None = None,
) -> ExperimentConfig:
    """The model as player A against each opponent, ``replicates`` games each; with ``comprehension``, the
    model is asked the rules before its move in those rounds (see harness.comprehension)."""
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
    conditions = [{"name": f"vs_{o.strip().upper()}", "agent_a": dict(agent), "agent_b": {"policy": o}} for o in panel]
    options = GameOptions(rounds, stop_prob, max_rounds, replicates, noise, seed)
    return options_config("eval", conditions, options, default_rounds=20, source="the eval options",
                          fix_hint="see `pdbench eval --help`")  # fmt: skip


def _model_settings(config: ExperimentConfig) -> Iterator[tuple[ModelAgentConfig, ProviderSettings]]:
    """Each distinct model player (model, base URL, key variable, key rule) with its provider settings."""
    seen: set[str] = set()
    for cond in config.experiment.conditions:
        for agent in (cond.agent_a, cond.agent_b):
            if isinstance(agent, ModelAgentConfig):
                key = f"{agent.model}|{agent.base_url}|{agent.api_key_env}|{agent.key_only_to_configured}"
                if key in seen:
                    continue
                seen.add(key)
                yield agent, ProviderSettings(base_url=agent.base_url, api_key_env=agent.api_key_env,
                                              key_only_to_configured=bool(agent.key_only_to_configured))  # fmt: skip


def check_models(config: ExperimentConfig) -> None:
    """Every model's name and key, and where the key goes, checked before anything starts (all problems at once)."""
    problems: list[str] = []
    for agent, settings in _model_settings(config):
        try:
            check_credentials([agent.model], settings)
        except ConfigError as exc:
            problems.extend(exc.problems or [str(exc)])
    if problems:
        raise ConfigError("some models cannot be used as configured; fix this before any game starts:", problems)


def check_key_destinations(config: ExperimentConfig) -> None:
    """Where the keys the file names (``api_key_env``) would go, checked without reading them (``pdbench
    validate``): a key named by a file goes only where the user's own configuration or command line says
    (see :func:`harness.providers.registry.key_destination_problem`)."""
    problems = [problem for agent, settings in _model_settings(config)
                if (problem := key_destination_problem(agent.model.strip().partition("/")[0], settings,
                                                       label=agent.model)) is not None]  # fmt: skip
    if problems:
        raise ConfigError("a key named by this file would go to a server it names; nothing was sent:", problems)


def check_prices(config: ExperimentConfig, prices: PriceTable) -> None:
    """With a cost limit, every model must have a price, or the limit would silently not apply."""
    missing = sorted({agent.model for cond in config.experiment.conditions for agent in (cond.agent_a, cond.agent_b)
                      if isinstance(agent, ModelAgentConfig) and prices.price(agent.model) is None})  # fmt: skip
    if missing:
        raise ConfigError(
            f"--max-cost needs a price for every model, and {', '.join(missing)} "
            f"{'has' if len(missing) == 1 else 'have'} none in the price table. Add a line such as "
            f"'{missing[0]}: {{input: 0.15, output: 0.60}}' (dollars per million tokens) to a YAML file and "
            f"pass it with --prices FILE."
        )


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
