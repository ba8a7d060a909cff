"""Experiment configs built from command-line-style options (``pdbench eval``, ``pdbench tournament``, a
suite, a dashboard duel), validated exactly like a YAML file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.config.experiment import ExperimentConfig
from harness.config.loading import parse_experiment
from harness.errors import ConfigError
from harness.game.horizon import HorizonKind


def horizon_options(
    rounds: int | None, stop_prob: float | None, max_rounds: int | None, default_rounds: int
) -> dict[str, Any]:
    """The ``horizon`` section from the command-line options ``--rounds``, ``--stop-prob``, ``--max-rounds``."""
    if rounds is not None and stop_prob is not None:
        raise ConfigError("give either --rounds (a fixed horizon) or --stop-prob (a geometric one), not both")
    if max_rounds is not None and stop_prob is None:
        raise ConfigError("--max-rounds caps a geometric game; give it with --stop-prob, or use --rounds N")
    if stop_prob is not None:
        return {"type": HorizonKind.GEOMETRIC.value, "stop_prob": stop_prob, "max_rounds": max_rounds}
    return {"type": HorizonKind.FIXED.value, "n_rounds": rounds or default_rounds}


@dataclass(frozen=True, slots=True)
class GameOptions:
    """The options every built-in experiment shares (eval, tournament, a dashboard duel)."""

    rounds: int | None = None
    stop_prob: float | None = None
    max_rounds: int | None = None
    replicates: int = 1
    noise: float = 0.0  # execution noise
    seed: int = 0
    payoff_matrix: dict[str, Any] | None = None
    observation_noise: float = 0.0


def options_config(
    kind: str,
    conditions: list[dict[str, Any]],
    options: GameOptions,
    *,
    default_rounds: int,
    source: str,
    fix_hint: str,
    suite: str | None = None,
) -> ExperimentConfig:
    """An experiment config from command-line-style options, validated exactly like a YAML file."""
    data: dict[str, Any] = {
        "kind": kind,
        **({"suite": suite} if suite is not None else {}),
        "run": {"seed": options.seed},
        "horizon": horizon_options(options.rounds, options.stop_prob, options.max_rounds, default_rounds),
        "noise": {"execution": options.noise, "observation": options.observation_noise},
        "experiment": {"replicates": options.replicates, "conditions": conditions},
    }
    if options.payoff_matrix is not None:
        data["game"] = {"payoff_matrix": options.payoff_matrix}
    return parse_experiment(data, source=source, fix_hint=fix_hint)
