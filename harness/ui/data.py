"""What the dashboard shows beside the store's reads (:mod:`harness.store.browse`): agent cards, and the
scorecard's numbers from :mod:`harness.analysis`.

Plain functions with no Streamlit in them, so they are tested like any other library code and the
tabs stay thin.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    model: str | None = None  # a model player's provider/model, shown even when the player has a name of its own
    persona: str | None = None  # a model player's persona (None: the default prompt, no persona)
    temperature: float | None = None  # None: the provider's default


def agent_info(name: str, params: Mapping[str, Any] | str | None = None) -> AgentInfo:
    """Card details for a player label as stored in ``games.player_a``/``player_b``.

    ``params`` is the player's stored spec (``games.params_a``/``params_b``, JSON or a mapping, as the
    Run view builds it): it tells a model player's model, persona and temperature, which the label
    alone does not (a player may carry a name of its own, and a persona never shows in a label)."""
    spec = _spec(params)
    model_name = spec.get("model")
    cls = STRATEGIES.get(name.strip().upper())
    if cls is not None and not model_name:
        return AgentInfo(cls.name, cls.emoji, cls.display_name, cls.description, False)
    provider, _, model = str(model_name or name).partition("/")
    if model or model_name:
        model, _, options = model.partition("?")
        extra = f" ({options.replace('&', ', ')})" if options else ""
        temperature = spec.get("temperature")
        return AgentInfo(name, MODEL_EMOJI, model or provider, f"language model via {provider}{extra}", True,
                         model=str(model_name or name), persona=_persona(spec),
                         temperature=None if temperature is None else float(temperature))  # fmt: skip
    return AgentInfo(name, "❔", name, "", False)


def _spec(params: Mapping[str, Any] | str | None) -> Mapping[str, Any]:
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            return {}
    return params if isinstance(params, Mapping) else {}


def _persona(spec: Mapping[str, Any]) -> str | None:
    """A model player's persona: ``prompts.persona`` in a stored spec (where the config puts it), or ``persona``."""
    prompts = spec.get("prompts")
    persona = prompts.get("persona") if isinstance(prompts, Mapping) else None
    return str(persona or spec.get("persona") or "") or None


def summary(cat: Catalog, run_id: str, condition: str | None = None) -> list[ConditionSummary]:
    """Per-condition means with 95% CIs over complete replicates (the scorecard's numbers)."""
    out = condition_summaries(cat, run_id, condition)
    return [s for s in out if condition is None or s.condition == condition]
