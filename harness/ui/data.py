"""What the dashboard shows beside the store's reads (:mod:`harness.store.browse`): agent cards, and the
scorecard's numbers from :mod:`harness.analysis`.

Plain functions with no Streamlit in them, so they are tested like any other library code and the
tabs stay thin.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.profile_summary import PROFILE_DIMENSIONS, behaviour_profile_by_condition
from harness.analysis.report import ConditionSummary, condition_summaries
from harness.players.strategies import STRATEGIES
from harness.store.browse import PlannedPlayer, RunRow
from harness.store.catalog import Catalog

MODEL_EMOJI = "🤖"
NOISE_FLIP, FALLBACK, FALLBACK_FLIPPED = "noise flip", "fallback move", "fallback + noise"  # kinds of marked rounds


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
        return AgentInfo(
            name,
            MODEL_EMOJI,
            model or provider,
            f"language model via {provider}{extra}",
            True,
            model=str(model_name or name),
            persona=_persona(spec),
            temperature=None if temperature is None else float(temperature),
        )
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


def profile(cat: Catalog, run_id: str, condition: str) -> dict[str, dict[str, float | None]]:
    """Each seat's behaviour profile in ``condition`` (seat -> dimension -> mean), as the scorecard reads it
    (:func:`~harness.analysis.profile_summary.behaviour_profile_by_condition`): None for a dimension that had no
    chance to apply in any complete game (shown —, not 0); no seat when the condition has no complete game."""
    out = {}
    for seat in ("a", "b"):
        columns, rows = behaviour_profile_by_condition(cat, run_id, seat)
        row = next((dict(zip(columns, r, strict=True)) for r in rows if r[0] == condition), None)
        if row is not None:
            out[seat] = {d: None if row[d] is None else float(row[d]) for d in PROFILE_DIMENSIONS}
    return out


def round_events(rounds: Sequence[Mapping[str, Any]], players: tuple[str, str]) -> list[dict[str, Any]]:
    """The rounds where a played move is not simply the player's choice, one row per round and player: a noise
    flip (intended ≠ played), a fallback move (the model's answer was unusable), or both. Each row carries the
    round, the seat, the played move (``cooperated``: 1 for C, as the actions chart plots it) and what happened,
    for the marks and tooltips of the actions chart and the timeline's notes."""
    out = []
    for row in rounds:
        for seat, name in zip(("a", "b"), players, strict=True):
            played, intended, flagged = row[f"action_{seat}"], row[f"intended_{seat}"], bool(row[f"flagged_{seat}"])
            flipped = intended is not None and intended != played
            if not (flagged or flipped):
                continue
            what = []
            if flagged:
                what.append(f"fallback move {intended}: the model's answer could not be used")
            if flipped:
                what.append(f"noise flipped the intended {intended} to {played}")
            kind = FALLBACK_FLIPPED if flagged and flipped else FALLBACK if flagged else NOISE_FLIP
            out.append(
                {
                    "round": row["round"],
                    "player": seat,
                    "seat": seat.upper(),
                    "who": f"{seat.upper()}: {name}",
                    "kind": kind,
                    "what": "; ".join(what),
                    "action": played,
                    "cooperated": int(played == "C"),
                }
            )
    return out


def rounds_text(rounds: Sequence[int], most: int = 12) -> str:
    """``round 4``, ``rounds 4, 9 and 12``; beyond ``most`` rounds, the first ones and how many more."""
    shown = [str(r) for r in rounds[:most]]
    more = len(rounds) - len(shown)
    if more:
        return f"rounds {', '.join(shown)} and {more} more"
    if len(shown) == 1:
        return f"round {shown[0]}"
    return f"rounds {', '.join(shown[:-1])} and {shown[-1]}"


def run_label(run: RunRow, players: Sequence[PlannedPlayer]) -> str:
    """How the run pickers name a run: id, who plays (the models if any, else the players), the models' persona,
    status with games done/planned, kind and date, e.g.
    ``eval_20261123_104500 · openai/gpt-4o-mini · persona cautious · running 12/40 · 2026-11-23 10:45``."""
    models = list(dict.fromkeys(p.model for p in players if p.model))
    names = models or list(dict.fromkeys(p.label for p in players)) or run.players
    parts = [run.run_id, _first(names, 3 if models else 4) or "no players"]
    if models:
        personas = list(dict.fromkeys(p.persona or "none" for p in players if p.model))
        parts.append(
            "no persona" if personas == ["none"] else f"persona{'s' if len(personas) > 1 else ''} {', '.join(personas)}"
        )
    parts.append(f"{run.status} {run.games_done}/{run.games_planned}")
    if not run.run_id.startswith(run.kind):
        parts.append(run.kind)
    parts.append(run.created_at.strftime("%Y-%m-%d %H:%M"))
    return " · ".join(parts)


def _first(names: Sequence[str], most: int) -> str:
    return ", ".join(names[:most]) + (f" +{len(names) - most}" if len(names) > most else "")


def newest_with_results(runs: Sequence[RunRow]) -> str | None:
    """The run a picker opens on when nothing was chosen yet: the newest (runs come newest first) with a
    finished game, so the page opens on something to look at rather than on a run stopped before its first
    game ended; the newest run if none has one."""
    for run in runs:
        if run.games_done > 0:
            return run.run_id
    return runs[0].run_id if runs else None
