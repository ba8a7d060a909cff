"""The checks that span a config's sections (condition names, comprehension rounds against the horizon, the
plan's size), written over the parts they need so that they also run on a config whose other fields are
broken: ``pdbench validate`` then reports every problem in one pass. A check is skipped only where a part
it needs is itself broken (and reported)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.config.agents import ModelAgentConfig
from harness.config.condition import ConditionConfig, condition_name
from harness.config.sections import MAX_GAMES, MAX_PLAN_ROUNDS, MAX_REPLICATES, HorizonSection
from harness.game.horizon import FixedHorizon
from harness.players.model.settings import ComprehensionSettings
from harness.util.plural import plural

M = TypeVar("M", bound=BaseModel)


def duplicate_name_problem(names: Sequence[tuple[int, str, bool]]) -> str | None:
    """The first clash among conditions' names (index, name, whether it was derived from the spec), or None."""
    used: dict[str, int] = {}
    for i, name, derived in names:
        if name in used:
            spec = " (named from its spec)" if derived else ""
            return (
                f"conditions[{i}] and conditions[{used[name]}] are both called {name!r}{spec}; condition "
                "names key the games' seeds and the reports, so each needs its own: give them distinct "
                "names (name: ...), or, to play the same condition more often, raise experiment.replicates"
            )
        used[name] = i
    return None


Asked = tuple[str, HorizonSection, ComprehensionSettings]
"""A model player's comprehension questions (by its key path) and the horizon of its games."""


def comprehension_problems(asked: Sequence[Asked]) -> list[str]:
    """A comprehension round a player's games never reach."""
    out: list[str] = []
    for where, section, comprehension in asked:
        horizon = section.to_horizon()
        last = horizon.longest
        beyond = [r for r in comprehension.rounds if last is not None and r > last]
        if beyond:
            assert last is not None
            rounds = plural(last, "round", grouped=False)
            length = rounds if isinstance(horizon, FixedHorizon) else f"at most {rounds} (max_rounds)"
            out.append(
                f"{where}.comprehension.rounds: round {beyond[0]} is never reached, the game has {length}; "
                f"ask in rounds 1 to {last}"
            )
    return out


def questions_asked(conditions: Sequence[ConditionConfig], run: HorizonSection) -> list[Asked]:
    """The comprehension questions of a valid config's model players."""
    out: list[Asked] = []
    for i, cond in enumerate(conditions):
        for seat in ("agent_a", "agent_b"):
            agent = getattr(cond, seat)
            if isinstance(agent, ModelAgentConfig) and agent.comprehension is not None:
                out.append((f"experiment.conditions[{i}].{seat}", cond.horizon or run, agent.comprehension))
    return out


def _questions_written(raw: list[Any], run: HorizonSection | None) -> list[Asked]:
    """The comprehension questions of model players as written, where they and their game's horizon are valid
    (whatever the players' other settings)."""
    out: list[Asked] = []
    for i, cond in enumerate(raw):
        if not isinstance(cond, dict):
            continue
        own = cond.get("horizon")
        horizon = run if own is None else _valid(HorizonSection, own)
        for seat in ("agent_a", "agent_b"):
            agent = cond.get(seat)
            if horizon is None or not isinstance(agent, dict) or "model" not in agent:
                continue
            settings = agent.get("comprehension")
            comprehension = None if settings is None else _valid(ComprehensionSettings, settings)
            if comprehension is not None:
                out.append((f"experiment.conditions[{i}].{seat}", horizon, comprehension))
    return out


def plan_rounds(conditions: Sequence[ConditionConfig], run: HorizonSection, replicates: int) -> tuple[int, float]:
    """Games and expected rounds of a plan."""
    per_replicate = sum((c.horizon or run).to_horizon().expected_length() for c in conditions)
    return len(conditions) * replicates, per_replicate * replicates


def plan_problem(conditions: Sequence[ConditionConfig], run: HorizonSection, replicates: int) -> str | None:
    """Why the plan is too large to play (more than MAX_GAMES games or MAX_PLAN_ROUNDS rounds), or None."""
    games, rounds = plan_rounds(conditions, run, replicates)
    if games <= MAX_GAMES and rounds <= MAX_PLAN_ROUNDS:
        return None
    n = len(conditions)
    return (
        f"the plan is {n:,} condition{'s' if n != 1 else ''} x {replicates:,} replicates = {games:,} games of about "
        f"{rounds:,.0f} rounds in all, more than PDBench plays in one run (at most {MAX_GAMES:,} games and "
        f"{MAX_PLAN_ROUNDS:,} rounds): use fewer replicates, conditions or rounds, or split it into several runs"
    )


def _valid(model: type[M], data: Any) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def partial_problems(data: dict[str, Any], error_locs: Sequence[tuple[Any, ...]]) -> list[str]:
    """The cross-section problems of a config that failed field validation (``error_locs``: where it failed),
    each check run on the parts it needs that are valid. The suite check needs the whole config and waits."""
    experiment = data.get("experiment")
    raw = experiment.get("conditions") if isinstance(experiment, dict) else None
    if not isinstance(raw, list):
        return []
    horizon = _valid(HorizonSection, data["horizon"]) if "horizon" in data else HorizonSection()
    conditions = [(i, _valid(ConditionConfig, c)) for i, c in enumerate(raw)]
    valid = [(i, c) for i, c in conditions if c is not None]
    out: list[str] = []
    if any(len(loc) > 1 and loc[0] == "experiment" for loc in error_locs):  # the section's own check did not run
        names = []
        for (i, cond), given in zip(conditions, raw, strict=True):
            name = given.get("name") if isinstance(given, dict) else None
            if isinstance(name, str):
                names.append((i, name, False))
            elif cond is not None and name is None:
                names.append((i, condition_name(cond), True))
        if (problem := duplicate_name_problem(names)) is not None:
            out.append(f"experiment: {problem}")
    out += comprehension_problems(_questions_written(raw, horizon))
    replicates = experiment.get("replicates", 1) if isinstance(experiment, dict) else None
    reps_ok = isinstance(replicates, int) and not isinstance(replicates, bool) and 1 <= replicates <= MAX_REPLICATES
    if horizon is not None and reps_ok and valid and len(valid) == len(raw):
        assert isinstance(replicates, int)
        if (problem := plan_problem([c for _, c in valid], horizon, replicates)) is not None:
            out.append(f"experiment.replicates: {problem}")
    return out
