"""One pairing, A against B, as an ordinary experiment config (what the dashboard's Run view plays)."""

from __future__ import annotations

from typing import Any

from harness.config import ExperimentConfig, GameOptions, options_config
from harness.game.rules import PayoffMatrix


def duel_config(
    agent_a: dict[str, Any],
    agent_b: dict[str, Any],
    *,
    rounds: int | None = None,
    stop_prob: float | None = None,
    max_rounds: int | None = None,
    replicates: int = 1,
    noise: float = 0.0,
    seed: int = 0,
    payoff_matrix: PayoffMatrix | None = None,
) -> ExperimentConfig:
    """Player A (``{"policy": "TFT"}`` or ``{"model": "mock/tft", ...}``) against player B, validated
    exactly like a YAML experiment file, so every mistake is reported the same way."""
    options = GameOptions(
        rounds,
        stop_prob,
        max_rounds,
        replicates,
        noise,
        seed,
        payoff_matrix.to_mapping() if payoff_matrix is not None else None,
    )
    return options_config(
        "experiment",
        [{"agent_a": agent_a, "agent_b": agent_b}],
        options,
        default_rounds=50,
        source="the experiment settings",
        fix_hint="change the settings and run again",
    )
