"""Experiment configuration: the YAML format, its validation with every problem reported at once, the
presets that build configs for ``eval``, ``tournament``, suites and duels (:mod:`harness.config.presets`),
the plan of games a config makes (:mod:`~harness.config.plan`), and the settings a run takes from its
surroundings (environment variables, engine options).

A config file has the sections ``run``, ``game``, ``horizon``, ``noise``, ``experiment`` and ``metrics``
(see ``configs/experiment.yaml``). Agents are given inline (``{policy: TFT}``) or as
``{ref: agents/policies.yaml, overrides: {...}}``, the ref being resolved against the config file's folder.
:func:`load_experiment` returns a validated :class:`ExperimentConfig` or raises one
:class:`~harness.errors.ConfigError` listing every problem with its key path, so a user fixes a file in one
pass rather than one error at a time.

May import: errors, states, util, game, providers, calls, players.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.util.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.config.agents import AgentConfig, ModelAgentConfig, PolicyAgentConfig
    from harness.config.condition import ConditionConfig, condition_name
    from harness.config.experiment import (
        ExperimentConfig,
        ExperimentSection,
        check_run_id,
        plan_size,
        plan_size_problem,
    )
    from harness.config.loading import load_experiment, parse_experiment
    from harness.config.options import GameOptions, horizon_options, options_config
    from harness.config.sections import (
        MAX_GAMES,
        MAX_PLAN_ROUNDS,
        MAX_REPLICATES,
        MAX_SEED,
        RUN_ID_PATTERN,
        CollapseSection,
        GameSection,
        HorizonSection,
        MetricsSection,
        NoiseSection,
        RunSection,
    )

# Loaded on first use (see harness.util.lazy): the CLI reads the bounds of config.sections without the models.
_EXPORTS = {
    "AgentConfig": "agents",
    "ModelAgentConfig": "agents",
    "PolicyAgentConfig": "agents",
    "ConditionConfig": "experiment",
    "ExperimentConfig": "experiment",
    "ExperimentSection": "experiment",
    "check_run_id": "experiment",
    "plan_size": "experiment",
    "plan_size_problem": "experiment",
    "load_experiment": "loading",
    "parse_experiment": "loading",
    "condition_name": "naming",
    "GameOptions": "options",
    "horizon_options": "options",
    "options_config": "options",
    "MAX_GAMES": "sections",
    "MAX_PLAN_ROUNDS": "sections",
    "MAX_REPLICATES": "sections",
    "MAX_SEED": "sections",
    "RUN_ID_PATTERN": "sections",
    "CollapseSection": "sections",
    "GameSection": "sections",
    "HorizonSection": "sections",
    "MetricsSection": "sections",
    "NoiseSection": "sections",
    "RunSection": "sections",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "MAX_GAMES",
    "MAX_PLAN_ROUNDS",
    "MAX_REPLICATES",
    "MAX_SEED",
    "RUN_ID_PATTERN",
    "AgentConfig",
    "CollapseSection",
    "ConditionConfig",
    "ExperimentConfig",
    "ExperimentSection",
    "GameOptions",
    "GameSection",
    "HorizonSection",
    "MetricsSection",
    "ModelAgentConfig",
    "NoiseSection",
    "PolicyAgentConfig",
    "RunSection",
    "check_run_id",
    "condition_name",
    "horizon_options",
    "load_experiment",
    "options_config",
    "parse_experiment",
    "plan_size",
    "plan_size_problem",
]
