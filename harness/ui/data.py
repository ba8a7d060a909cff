"""What the dashboard shows beside the store's reads (:mod:`harness.store.browse`): agent cards, and the
scorecard's numbers from :mod:`harness.analysis`.

Plain functions with no Streamlit in them, so they are tested like any other library code and the
tabs stay thin.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.agents.strategies import STRATEGIES
from harness.analysis.report import ConditionSummary, condition_summaries
from harness.store.catalog import Catalog

MODEL_EMOJI = "🤖"


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """What an agent card shows."""

    name: str
    emoji: str
    title: str
    description: str
    is_model: bool


def agent_info(name: str) -> AgentInfo:
    """Card details for a player label as stored in ``games.player_a``/``player_b``."""
    cls = STRATEGIES.get(name.strip().upper())
    if cls is not None:
        return AgentInfo(cls.name, cls.emoji, cls.display_name, cls.description, False)
    provider, _, model = name.partition("/")
    if model:
        model, _, options = model.partition("?")
        extra = f" ({options.replace('&', ', ')})" if options else ""
        return AgentInfo(name, MODEL_EMOJI, model, f"language model via {provider}{extra}", True)
    return AgentInfo(name, "❔", name, "", False)


def summary(cat: Catalog, run_id: str, condition: str | None = None) -> list[ConditionSummary]:
    """Per-condition means with 95% CIs over complete replicates (the scorecard's numbers)."""
    out = condition_summaries(cat, run_id, condition)
    return [s for s in out if condition is None or s.condition == condition]
