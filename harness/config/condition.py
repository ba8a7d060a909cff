"""A condition: two agents and, where they differ from the run's, the payoffs, horizon and noise they play
under; and the name of an unnamed condition, derived from its full spec, so that it keys the same games
whatever other conditions a config has."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from harness.config.agents import AgentConfig, ModelAgentConfig, PolicyAgentConfig
from harness.config.sections import GameSection, HorizonSection, Label, NoiseSection, Section, noise_shorthand
from harness.game.rules import PayoffMatrix
from harness.players.strategies.registry import setting_text, spec_label


class ConditionConfig(Section):
    name: Label | None = Field(None, min_length=1)
    agent_a: AgentConfig
    agent_b: AgentConfig
    game: GameSection | None = Field(None, description="override the run's payoffs for this condition")
    horizon: HorizonSection | None = None
    noise: NoiseSection | None = None

    @field_validator("noise", mode="before")
    @classmethod
    def _noise_shorthand(cls, value: Any) -> Any:
        return noise_shorthand(value)


def condition_name(cond: ConditionConfig) -> str:
    """``A_vs_B`` from the two agents' full specs, e.g. ``GTFT(generous_prob=0.1)_vs_TFT`` or
    ``openai/gpt-4o-mini(temperature=0.7)_vs_ALLD``; a condition's own game, horizon or noise follow in
    brackets, e.g. ``TFT_vs_WSLS[noise=0.05]``. Only settings that differ from their defaults appear."""
    name = f"{_agent_spec(cond.agent_a)}_vs_{_agent_spec(cond.agent_b)}"
    overrides: dict[str, Any] = {}
    if cond.game is not None:
        overrides["payoffs"] = _payoffs_spec(cond.game.payoff_matrix)
    if cond.horizon is not None:
        horizon = cond.horizon.model_dump(mode="json", exclude_none=True)
        overrides.update({f"horizon.{k}": v for k, v in horizon.items()})
    if cond.noise is not None:
        overrides["noise"] = cond.noise.execution
        if cond.noise.observation:
            overrides["observation"] = cond.noise.observation
    return visible(name + (f"[{_settings(overrides)}]" if overrides else ""))


def visible(text: str) -> str:
    """``text`` with each character that would not show as itself (a control character, a line break, an
    invisible one: see :func:`harness.config.sections.printable`) written as its escape (``\\x1f``): a name
    derived from settings (labels, template names) is printed as names are, so it is held to their rule."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _agent_spec(agent: PolicyAgentConfig | ModelAgentConfig) -> str:
    if isinstance(agent, PolicyAgentConfig):
        return spec_label(agent.spec)
    dumped = agent.model_dump(mode="json", exclude_defaults=True, exclude={"model", "name", "persona", "limits"})
    settings = _flatten(dumped)
    return agent.model + (f"({_settings(settings)})" if settings else "")


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _settings(settings: dict[str, Any]) -> str:
    return ",".join(f"{k}={_value(v)}" for k, v in settings.items())


def _value(value: Any) -> str:
    return setting_text(value)


def _payoffs_spec(matrix: PayoffMatrix) -> str:
    if matrix == PayoffMatrix.from_rstp(matrix.R, matrix.S, matrix.T, matrix.P):
        return "/".join(
            f"{k}{_value(v)}" for k, v in (("R", matrix.R), ("S", matrix.S), ("T", matrix.T), ("P", matrix.P))
        )
    cells = (("CC", matrix.cc), ("CD", matrix.cd), ("DC", matrix.dc), ("DD", matrix.dd))
    return "/".join(f"{k}{_value(a)},{_value(b)}" for k, (a, b) in cells)
