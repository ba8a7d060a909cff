"""What the dashboard offers to pick (the Run and Tournament views): every strategy, and the models
that can be used here."""

from __future__ import annotations

from collections.abc import Mapping

from harness.players.strategies import STRATEGIES
from harness.providers.mock import BEHAVIOURS, MOCK
from harness.ui.data import agent_info

OTHER_MODEL = "✏️ other model…"
# Paid models offered when their provider's key is set (each has a price in configs/prices.yaml).
OPENAI_MODELS = ("openai/gpt-4o-mini", "openai/gpt-4.1-mini", "openai/gpt-4.1-nano", "openai/gpt-4o")
ANTHROPIC_MODELS = ("anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5")


def strategies() -> list[str]:
    return list(STRATEGIES)


def models(environ: Mapping[str, str]) -> list[str]:
    """The offline ``mock/...`` models always (free, no key); OpenAI and Anthropic models when their keys are set."""
    out = [f"{MOCK.name}/{b}" for b in BEHAVIOURS]
    if environ.get("OPENAI_API_KEY"):
        out += OPENAI_MODELS
    if environ.get("ANTHROPIC_API_KEY"):
        out += ANTHROPIC_MODELS
    return out


def label(name: str) -> str:
    """How a player appears in a picker: emoji, name and, for strategies, the long name."""
    if name == OTHER_MODEL:
        return name
    info = agent_info(name)
    return f"{info.emoji} {info.name}" + ("" if info.is_model else f" · {info.title}")
