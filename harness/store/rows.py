"""The ``games`` row, built in one place for both writers: the batch writer of strategy games
(:class:`~harness.store.writer.RunWriter`) and the round-by-round recorder of model games
(:class:`~harness.store.live.LiveRecorder`)."""

from __future__ import annotations

from typing import Any

from harness.config.plan import GamePlan
from harness.game.horizon import GeometricHorizon
from harness.game.match import Match
from harness.states import GameStatus

GAME_COLUMNS = (
    "run_id",
    "game_id",
    "condition",
    "replicate",
    "player_a",
    "player_b",
    "params_a",
    "params_b",
    "horizon",
    "planned_rounds",
    "stop_prob",
    "noise",
    "observation_noise",
    "seed",
    "status",
    "rounds_played",
    "score_a",
    "score_b",
    "error",
)


def game_row(
    run_id: str,
    plan: GamePlan,
    planned_rounds: int,
    status: GameStatus,
    match: Match | None = None,
    error: str | None = None,
) -> tuple[Any, ...]:
    """A game's row in ``GAME_COLUMNS`` order: what was planned, and how it went (``match``; a game that has
    not started a round yet, ``match=None``, has played none and scored nothing)."""
    c = plan.condition
    stop_prob = c.horizon.stop_prob if isinstance(c.horizon, GeometricHorizon) else None
    played, score_a, score_b = (0, 0.0, 0.0) if match is None else (match.rounds_played, match.score_a, match.score_b)
    return (
        run_id,
        plan.game_id,
        c.name,
        plan.replicate,
        c.player_a.name,
        c.player_b.name,
        c.player_a.params_json,
        c.player_b.params_json,
        c.horizon.kind.value,
        planned_rounds,
        stop_prob,
        c.noise,
        c.observation_noise,
        plan.seed,
        status.value,
        played,
        score_a,
        score_b,
        error,
    )
